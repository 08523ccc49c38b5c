// The pod network plan and KubeVirt's masquerade rules (pod_network.hpp). Reads
// spec.networks[].pod (vmNetworkCIDR, vmIPv6NetworkCIDR), spec.domain.devices.interfaces[]
// (name, bridge, masquerade, state, model, ports), spec.domain.devices.networkInterfaceMultiqueue
// and spec.domain.cpu (sockets, cores, threads). Follows pkg/network/setup/netpod/netpod.go and
// pkg/network/setup/netpod/masquerade/masquerade.go.
#include "vmgate/node/pod_network.hpp"

#include <arpa/inet.h>  // pure: inet_pton and inet_ntop only

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <string>
#include <string_view>

namespace vmgate::node {
namespace {

std::string lower(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return result;
}

// sockets × cores × threads, each defaulting to 1: the vCPUs the guest starts with (the
// launcher's converter counts the same for <driver queues/>).
Result<std::int64_t> guest_vcpus(const json::Value& spec) {
  const json::Value* cpu = json::find_path(spec, {"domain", "cpu"});
  std::int64_t vcpus = 1;
  for (const std::string_view key : {"sockets", "cores", "threads"}) {
    const json::Value* value = cpu == nullptr ? nullptr : json::find(*cpu, key);
    if (value == nullptr || value->IsNull()) {
      continue;
    }
    if (!value->IsInt64() || value->GetInt64() < 1 || value->GetInt64() > 4096) {
      return Error{"spec.domain.cpu." + std::string(key) + ": not a number from 1 to 4096"};
    }
    vcpus *= value->GetInt64();
  }
  return vcpus;
}

Result<IpPrefix> vm_prefix(const json::Value& pod, std::string_view key, std::string_view fallback, bool ipv6,
                           const std::string& path) {
  const json::Value* value = json::find(pod, key);
  std::string_view text = fallback;
  if (value != nullptr && !value->IsNull()) {
    if (!value->IsString()) {
      return Error{path + "." + std::string(key) + ": not a string"};
    }
    if (!json::as_view(*value).empty()) {
      text = json::as_view(*value);
    }
  }
  Result<IpPrefix> prefix = parse_prefix(text);
  // A gateway and a guest: at least two host addresses besides the network address.
  if (!prefix || prefix->ipv6 != ipv6 || prefix->length > (ipv6 ? 126 : 30)) {
    return Error{path + "." + std::string(key) + ": not an " + (ipv6 ? "IPv6" : "IPv4") +
                 " prefix with room for a gateway and a guest"};
  }
  return prefix;
}

}  // namespace

Result<IpPrefix> parse_prefix(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash > 45) {
    return Error{"not an address/length"};
  }
  IpPrefix prefix;
  const std::string address(text.substr(0, slash));
  prefix.ipv6 = address.find(':') != std::string::npos;
  if (::inet_pton(prefix.ipv6 ? AF_INET6 : AF_INET, address.c_str(), prefix.address.data()) != 1) {
    return Error{"not an address/length"};
  }
  const std::string_view length = text.substr(slash + 1);
  const int bits = prefix.ipv6 ? 128 : 32;
  const auto [end, error] = std::from_chars(length.data(), length.data() + length.size(), prefix.length);
  if (length.empty() || error != std::errc{} || end != length.data() + length.size() || prefix.length < 0 ||
      prefix.length > bits) {
    return Error{"not an address/length"};
  }
  for (int bit = prefix.length; bit < bits; ++bit) {
    prefix.address[static_cast<std::size_t>(bit / 8)] &= static_cast<std::uint8_t>(~(0x80U >> (bit % 8)));
  }
  return prefix;
}

IpPrefix nth_address(const IpPrefix& prefix, std::uint8_t offset) {
  IpPrefix result = prefix;
  unsigned carry = offset;
  for (std::size_t i = prefix.ipv6 ? 16 : 4; i-- > 0 && carry != 0;) {
    const unsigned sum = result.address[i] + carry;
    result.address[i] = static_cast<std::uint8_t>(sum & 0xffU);
    carry = sum >> 8U;
  }
  return result;
}

std::string address_text(const IpPrefix& address) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  ::inet_ntop(address.ipv6 ? AF_INET6 : AF_INET, address.address.data(), text.data(), text.size());
  return text.data();
}

IpPrefix bridge_fake_address(std::size_t interface_index) {
  // "169.254.75.1" + strconv.Itoa(index): 169.254.75.10 for the first interface. Indexes past 15
  // would not be an address; the pod network is one interface, its index small.
  Result<IpPrefix> address =
      parse_prefix("169.254.75.1" + std::to_string(std::min<std::size_t>(interface_index, 15)) + "/32");
  return address ? *address : IpPrefix{};
}

Result<std::optional<PodNetworkPlan>> plan_pod_network(const json::Value& vmi) {
  const json::Value* spec = json::find_object(vmi, "spec");
  if (spec == nullptr) {
    return std::optional<PodNetworkPlan>();
  }
  const json::Value* networks = json::find_array(*spec, "networks");
  const json::Value* pod = nullptr;
  std::string network_name;
  std::string network_path;
  if (networks != nullptr) {
    for (rapidjson::SizeType i = 0; i < networks->Size(); ++i) {
      const json::Value& network = (*networks)[i];
      if (const json::Value* found = json::find(network, "pod"); found != nullptr && found->IsObject()) {
        pod = found;
        network_name = std::string(json::find_string(network, "name"));
        network_path = "spec.networks[" + std::to_string(i) + "].pod";
        break;
      }
    }
  }
  if (pod == nullptr) {
    return std::optional<PodNetworkPlan>();
  }
  const json::Value* devices = json::find_path(*spec, {"domain", "devices"});
  const json::Value* interfaces = devices == nullptr ? nullptr : json::find_array(*devices, "interfaces");
  const json::Value* iface = nullptr;
  std::size_t index = 0;
  if (interfaces != nullptr) {
    for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
      if (json::find_string((*interfaces)[i], "name") == network_name) {
        iface = &(*interfaces)[i];
        index = i;
        break;
      }
    }
  }
  if (iface == nullptr) {
    return Error{"spec.networks: the pod network \"" + network_name + "\" has no interface of its name"};
  }
  const std::string path = "spec.domain.devices.interfaces[" + std::to_string(index) + "]";
  PodNetworkPlan plan;
  if (json::find_object(*iface, "masquerade") != nullptr) {
    plan.binding = PodBinding::masquerade;
  } else if (json::find_object(*iface, "bridge") != nullptr) {
    plan.binding = PodBinding::bridge;
  } else {
    return std::optional<PodNetworkPlan>();
  }
  if (json::find_string(*iface, "state") == "absent") {
    return std::optional<PodNetworkPlan>();
  }
  plan.network = network_name;
  plan.interface_index = index;

  const json::Value* multiqueue = devices == nullptr ? nullptr : json::find(*devices, "networkInterfaceMultiqueue");
  const std::string_view model = json::find_string(*iface, "model");
  if (multiqueue != nullptr && multiqueue->IsBool() && multiqueue->GetBool() && (model.empty() || model == "virtio")) {
    Result<std::int64_t> vcpus = guest_vcpus(*spec);
    if (!vcpus) {
      return vcpus.error();
    }
    if (*vcpus > max_tap_queues) {
      return Error{"spec.domain.cpu: " + std::to_string(*vcpus) + " vCPUs, more queues than a tap has (" +
                   std::to_string(max_tap_queues) + ")"};
    }
    plan.queues = *vcpus > 1 ? static_cast<int>(*vcpus) : 0;
  }

  if (const json::Value* ports = json::find_array(*iface, "ports"); ports != nullptr) {
    if (ports->Size() > max_forwarded_ports) {
      return Error{path + ".ports: more than " + std::to_string(max_forwarded_ports) + " ports"};
    }
    for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
      const std::string item = path + ".ports[" + std::to_string(i) + "]";
      const json::Value& port = (*ports)[i];
      const json::Value* number = json::find(port, "port");
      if (number == nullptr || !number->IsInt() || number->GetInt() < 1 || number->GetInt() > 65535) {
        return Error{item + ".port: not a number from 1 to 65535"};
      }
      const json::Value* protocol = json::find(port, "protocol");
      std::string name = "tcp";  // KubeVirt's default
      if (protocol != nullptr && !protocol->IsNull()) {
        name = protocol->IsString() ? lower(json::as_view(*protocol)) : std::string();
        if (name.empty()) {
          name = protocol->IsString() ? "tcp" : "";
        }
      }
      if (name != "tcp" && name != "udp" && name != "sctp") {
        return Error{item + ".protocol: not TCP, UDP or SCTP"};
      }
      plan.ports.push_back({name, number->GetInt()});
    }
  }
  Result<IpPrefix> ipv4 = vm_prefix(*pod, "vmNetworkCIDR", "10.0.2.0/24", false, network_path);
  if (!ipv4) {
    return ipv4.error();
  }
  Result<IpPrefix> ipv6 = vm_prefix(*pod, "vmIPv6NetworkCIDR", "fd10:0:2::/120", true, network_path);
  if (!ipv6) {
    return ipv6.error();
  }
  plan.vm_ipv4 = *ipv4;
  plan.vm_ipv6 = *ipv6;
  return std::optional<PodNetworkPlan>(std::move(plan));
}

std::string masquerade_nft_script(const PodNetworkPlan& plan, bool ipv4, bool ipv6) {
  std::string script;
  // One rule a line, from its pieces (no temporary strings per piece).
  auto line = [&script](std::initializer_list<std::string_view> pieces) {
    for (const std::string_view piece : pieces) {
      script += piece;
    }
    script += '\n';
  };
  for (const bool v6 : {false, true}) {
    if (v6 ? !ipv6 : !ipv4) {
      continue;
    }
    const std::string family = v6 ? "ip6" : "ip";
    const std::string table = family + " nat";
    const IpPrefix& prefix = v6 ? plan.vm_ipv6 : plan.vm_ipv4;
    const std::string gateway = address_text(nth_address(prefix, 1));
    const std::string guest = address_text(nth_address(prefix, 2));
    const std::string loopback = v6 ? "::1" : "127.0.0.1";
    line({"add table ", table});
    line({"add chain ", table, " prerouting { type nat hook prerouting priority -100; }"});
    line({"add chain ", table, " input { type nat hook input priority 100; }"});
    line({"add chain ", table, " output { type nat hook output priority -100; }"});
    line({"add chain ", table, " postrouting { type nat hook postrouting priority 100; }"});
    line({"add chain ", table, " KUBEVIRT_PREINBOUND"});
    line({"add chain ", table, " KUBEVIRT_POSTINBOUND"});
    for (const char* chain :
         {"prerouting", "input", "output", "postrouting", "KUBEVIRT_PREINBOUND", "KUBEVIRT_POSTINBOUND"}) {
      line({"flush chain ", table, " ", chain});
    }
    line({"add rule ", table, " postrouting ", family, " saddr ", guest, " counter masquerade"});
    line({"add rule ", table, " prerouting iifname \"", plan.pod_interface, "\" counter jump KUBEVIRT_PREINBOUND"});
    line({"add rule ", table, " postrouting oifname \"", plan.bridge, "\" counter jump KUBEVIRT_POSTINBOUND"});
    const std::string snat_from = std::string(family).append(" saddr { ").append(loopback).append(" }");
    const std::string dnat_to = std::string(family).append(" daddr { ").append(loopback).append(" }");
    for (const ForwardedPort& port : plan.ports) {
      const std::string number = std::to_string(port.port);
      line({"add rule ", table, " KUBEVIRT_PREINBOUND ", port.protocol, " dport { ", number, " } counter dnat to ",
            guest});
      line({"add rule ", table, " KUBEVIRT_POSTINBOUND ", port.protocol, " dport ", number, " ", snat_from,
            " counter snat to ", gateway});
      line(
          {"add rule ", table, " output ", dnat_to, " ", port.protocol, " dport ", number, " counter dnat to ", guest});
    }
    if (plan.ports.empty()) {
      line({"add rule ", table, " KUBEVIRT_PREINBOUND counter dnat to ", guest});
      line({"add rule ", table, " KUBEVIRT_POSTINBOUND ", snat_from, " counter snat to ", gateway});
      line({"add rule ", table, " output ", dnat_to, " counter dnat to ", guest});
    }
  }
  return script;
}

}  // namespace vmgate::node
