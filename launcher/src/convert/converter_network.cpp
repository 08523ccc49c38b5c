// Network interfaces (KubeVirt's converter/network).
#include "converter_core.hpp"

#include <string>

namespace vmgate::launcher::detail {

// Interfaces (network/ configurators): the pod network on a tap the pod prepared
// (bridge/masquerade → type='ethernet'), or QEMU user networking (slirp → type='user').
void Converter::map_interfaces(XmlElement& devices, const Value& device_spec) {
  const std::string path = "spec.domain.devices.interfaces";
  const Value& spec = *json::find(vmi_, "spec");
  if (const Value* networks = json::find(spec, "networks"); networks != nullptr && networks->IsArray()) {
    for (rapidjson::SizeType i = 0; i < networks->Size(); ++i) {
      check_keys(&(*networks)[i], "spec.networks[" + std::to_string(i) + "]", {"name", "pod"});
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
    if (!check_keys(&iface, item, {"name", "bridge", "masquerade", "slirp", "macAddress", "model", "bootOrder"})) {
      continue;
    }
    const bool user = json::find(iface, "slirp") != nullptr;
    auto& element = devices.add_child("interface").set_attribute("type", user ? "user" : "ethernet");
    if (auto mac = get_string(iface, "macAddress", item)) {
      element.add_child("mac").set_attribute("address", *mac);
    }
    if (!user) {
      element.add_child("target")
          .set_attribute("dev", options_.layout.tap_prefix + std::to_string(i))
          .set_attribute("managed", "no");
    }
    const std::string model = get_string(iface, "model", item).value_or("virtio");
    element.add_child("model").set_attribute("type", model == "virtio" ? virtio_model() : model);
    if (auto order = get_int(iface, "bootOrder", item)) {
      element.add_child("boot").set_attribute("order", std::to_string(*order));
    }
    element.add_child("rom").set_attribute("enabled", "no");
    if (auto name = get_string(iface, "name", item)) {
      element.add_child("alias").set_attribute("name", "ua-" + *name);
    }
  }
}

}  // namespace vmgate::launcher::detail
