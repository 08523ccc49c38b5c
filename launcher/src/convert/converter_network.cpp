// Network interfaces (KubeVirt's converter/network).
#include "converter_core.hpp"

#include <openssl/sha.h>

#include <cctype>
#include <cstdio>
#include <optional>
#include <map>
#include <string>

namespace vmgate::launcher::detail {

namespace {

// KubeVirt's pod interface of a secondary (Multus) network: "pod" and the first 11 hex digits of
// the SHA-256 of the network's name (namescheme.GenerateHashedInterfaceName); its tap is "tap"
// and the same digits (link.GenerateTapDeviceName). The primary network's tap is tap0.
std::string hashed_network_suffix(const std::string& network_name) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(network_name.data()), network_name.size(), digest);
  std::string hex;
  for (const unsigned char byte : digest) {
    char pair[3];
    std::snprintf(pair, sizeof pair, "%02x", byte);
    hex += pair;
  }
  return hex.substr(0, 11);
}

// A MAC as libvirt writes it (aa:bb:cc:dd:ee:ff): KubeVirt accepts dashes and upper case and
// passes the address through Go's net.ParseMAC / String, which does the same. nullopt: not a MAC.
std::optional<std::string> canonical_mac(const std::string& mac) {
  if (mac.size() != 17) {
    return std::nullopt;
  }
  std::string out;
  for (std::size_t i = 0; i < mac.size(); ++i) {
    const char c = mac[i];
    if (i % 3 == 2) {
      if (c != ':' && c != '-') {
        return std::nullopt;
      }
      out.push_back(':');
    } else if (std::isxdigit(static_cast<unsigned char>(c)) != 0) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace

// Interfaces (network/ configurators): the pod network and Multus secondary networks on a tap
// the pod prepared (bridge/masquerade → type='ethernet', named as KubeVirt names it), or QEMU
// user networking (slirp → type='user'). masquerade's `ports` are the pod's NAT rules (virt-handler
// writes them), not the domain's: the domain is the same tap either way (docs/launcher.md,
// "Networks").
void Converter::map_interfaces(XmlElement& devices, const Value& device_spec) {
  const std::string path = "spec.domain.devices.interfaces";
  const Value& spec = *json::find(vmi_, "spec");
  // network name → tap name
  std::map<std::string, std::string> taps;
  if (const Value* networks = json::find(spec, "networks"); networks != nullptr && networks->IsArray()) {
    for (rapidjson::SizeType i = 0; i < networks->Size(); ++i) {
      const std::string item = "spec.networks[" + std::to_string(i) + "]";
      const Value& network = (*networks)[i];
      if (!check_keys(&network, item, {"name", "pod", "multus"})) {
        continue;
      }
      const std::string name = get_string(network, "name", item).value_or("");
      std::string tap = options_.layout.tap_prefix + "0";
      if (const Value* multus = json::find(network, "multus");
          check_keys(multus, item + ".multus", {"networkName", "default"})) {
        if (!get_bool(*multus, "default", item + ".multus").value_or(false)) {
          tap = options_.layout.tap_prefix + hashed_network_suffix(name);
        }
      }
      taps[name] = tap;
    }
  }
  const Value* interfaces = json::find(device_spec, "interfaces");
  if (interfaces == nullptr) {
    return;
  }
  if (!interfaces->IsArray()) {
    fail(path, "must be an array");
    return;
  }
  for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
    const std::string item = path + "[" + std::to_string(i) + "]";
    const Value& iface = (*interfaces)[i];
    if (!check_keys(&iface, item,
                    {"name", "bridge", "masquerade", "slirp", "macAddress", "model", "bootOrder", "ports",
                     "dhcpOptions", "state", "acpiIndex"})) {
      continue;
    }
    const std::string name = get_string(iface, "name", item).value_or("");
    const std::string state = get_string(iface, "state", item).value_or("");
    if (state == "absent") {
      continue;  // being unplugged: KubeVirt leaves it out of the domain
    }
    if (!state.empty() && state != "up" && state != "down") {
      fail(item + ".state", "must be up, down or absent");
    }
    const bool user = json::find(iface, "slirp") != nullptr;
    auto tap = taps.find(name);
    if (!user && tap == taps.end()) {
      fail(item + ".name", "no network named \"" + name + "\" in spec.networks");
      continue;
    }
    auto& element = devices.add_child("interface").set_attribute("type", user ? "user" : "ethernet");
    if (auto mac = get_string(iface, "macAddress", item)) {
      if (auto canonical = canonical_mac(*mac)) {
        element.add_child("mac").set_attribute("address", *canonical);
      } else {
        fail(item + ".macAddress", "must be a MAC address of six bytes");
      }
    }
    if (!user) {
      element.add_child("target").set_attribute("dev", tap->second).set_attribute("managed", "no");
    }
    const std::string model = get_string(iface, "model", item).value_or("virtio");
    element.add_child("model").set_attribute("type", model == "virtio" ? virtio_model() : model);
    if (interface_multi_queue_ && model == "virtio" && !user && enabled_vcpus_ > 1) {
      // network/builder.go: one queue per vCPU.
      element.add_child("driver")
          .set_attribute("name", "vhost")
          .set_attribute("queues", std::to_string(enabled_vcpus_));
    }
    if (state == "down") {
      element.add_child("link").set_attribute("state", "down");
    }
    if (auto order = get_int(iface, "bootOrder", item)) {
      element.add_child("boot").set_attribute("order", std::to_string(*order));
    }
    element.add_child("rom").set_attribute("enabled", "no");
    if (auto index = get_int(iface, "acpiIndex", item); index && *index > 0) {
      element.add_child("acpi").set_attribute("index", std::to_string(*index));
    }
    if (!name.empty()) {
      element.add_child("alias").set_attribute("name", "ua-" + name);
    }
  }
}

}  // namespace vmgate::launcher::detail
