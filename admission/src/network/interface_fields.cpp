// Reads: spec.domain.devices.interfaces[*].{name, model, macAddress, pciAddress, ports, portRanges,
// dhcpOptions}, spec.networks[*]. Follows pkg/network/admitter/netiface.go validateInterfacesFields:
// name format, model, MAC address (Go's net.ParseMAC, at most 6 octets), PCI address, forwarded
// ports and port ranges on the pod network, DHCP options.
#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "network/interface_rules.hpp"
#include "validation/pci_address.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

// The number of octets of a MAC address in one of Go's net.ParseMAC forms (hex pairs separated
// by ':' or '-', or groups of four hex digits separated by '.'; 6, 8 or 20 octets), or nullopt.
std::optional<std::size_t> mac_octets(std::string_view text) {
  if (text.size() < 14) {
    return std::nullopt;
  }
  if (text[2] == ':' || text[2] == '-') {
    if ((text.size() + 1) % 3 != 0) {
      return std::nullopt;
    }
    const std::size_t octets = (text.size() + 1) / 3;
    if (octets != 6 && octets != 8 && octets != 20) {
      return std::nullopt;
    }
    for (std::size_t i = 0; i < octets; ++i) {
      const std::size_t at = 3 * i;
      if (!is_hex(text[at]) || !is_hex(text[at + 1]) || (i + 1 < octets && text[at + 2] != text[2])) {
        return std::nullopt;
      }
    }
    return octets;
  }
  if (text[4] == '.') {
    if ((text.size() + 1) % 5 != 0) {
      return std::nullopt;
    }
    const std::size_t groups = (text.size() + 1) / 5;
    const std::size_t octets = 2 * groups;
    if (octets != 6 && octets != 8 && octets != 20) {
      return std::nullopt;
    }
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t at = 5 * g;
      if (!is_hex(text[at]) || !is_hex(text[at + 1]) || !is_hex(text[at + 2]) || !is_hex(text[at + 3]) ||
          (g + 1 < groups && text[at + 4] != '.')) {
        return std::nullopt;
      }
    }
    return octets;
  }
  return std::nullopt;
}

// apimachinery IsValidPortName.
bool valid_port_name(std::string_view name) {
  const bool charset = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
  const bool letter = std::any_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; });
  return name.size() <= 15 && charset && letter && name.find("--") == std::string_view::npos && name.front() != '-' &&
         name.back() != '-';
}

void validate_ports(const json::Value& ports, const FieldPath& interface_path, Release release, ErrorList& causes) {
  std::unordered_set<std::string_view> names;
  for (rapidjson::SizeType p = 0; p < ports.Size(); ++p) {
    const json::Value& port = ports[p];
    const std::string_view name = port.IsObject() ? json::find_string(port, "name") : std::string_view{};
    if (name.empty()) {
      continue;
    }
    const std::string field = interface_path.child("ports").index(p).child("name").str();
    if (!names.insert(name).second) {
      causes.push_back({CauseType::field_value_duplicate, field, "Duplicate name of the port: " + std::string(name)});
    }
    if (!valid_port_name(name)) {
      causes.push_back({CauseType::field_value_invalid, field, "Invalid name of the port: " + std::string(name)});
    }
  }
  for (rapidjson::SizeType p = 0; p < ports.Size(); ++p) {
    const json::Value& port = ports[p];
    if (!port.IsObject()) {
      continue;
    }
    const FieldPath port_path = interface_path.child("ports").index(p);
    const json::Value* number = json::find(port, "port");
    const std::int64_t value = number != nullptr && number->IsInt64() ? number->GetInt64() : 0;
    // v1.8 names the port item, not its number, and lets 65536 through (netiface.go at v1.8.2);
    // PR #18095 changed both.
    const bool v18 = release <= Release::v1_8;
    const std::string number_field = v18 ? port_path.str() : port_path.child("port").str();
    if (value == 0) {
      causes.push_back({CauseType::field_value_required, number_field, "Port field is mandatory."});
    }
    if (value < 0 || value > (v18 ? 65536 : 65535)) {
      causes.push_back({CauseType::field_value_invalid, number_field, "Port field must be in range 0 < x < 65536."});
    }
    if (const std::string_view protocol = json::find_string(port, "protocol");
        !protocol.empty() && protocol != "TCP" && protocol != "UDP") {
      causes.push_back({CauseType::field_value_invalid, port_path.child("protocol").str(),
                        "Unknown protocol, only TCP or UDP allowed"});
    }
  }
}

}  // namespace

ErrorList validate_interface_fields(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  const json::Value* interfaces = json::find_path(spec, {"domain", "devices", "interfaces"});
  if (interfaces == nullptr || !interfaces->IsArray()) {
    return causes;
  }
  const std::unordered_map<std::string_view, bool> on_pod_network = pod_networks_by_name(spec);
  constexpr std::array<std::string_view, 7> models{"e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139", "virtio"};
  const FieldPath interfaces_path = path.child("domain").child("devices").child("interfaces");
  for (rapidjson::SizeType i = 0; i < interfaces->Size(); ++i) {
    const json::Value& interface = (*interfaces)[i];
    if (!interface.IsObject()) {
      continue;
    }
    const FieldPath interface_path = interfaces_path.index(i);
    const std::string name_field = interface_path.child("name").str();
    const std::string_view name = json::find_string(interface, "name");
    const bool name_ok = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
    });
    if (!name_ok) {
      causes.push_back({CauseType::field_value_invalid, name_field,
                        "Network interface name can only contain alphabetical characters, numbers, dashes (-) or "
                        "underscores (_)"});
    }
    if (const std::string_view model = json::find_string(interface, "model");
        !model.empty() && std::find(models.begin(), models.end(), model) == models.end()) {
      causes.push_back({CauseType::field_value_not_supported, interface_path.child("model").str(),
                        "interface " + name_field + " uses model " + std::string(model) + " that is not supported."});
    }
    if (const std::string_view mac = json::find_string(interface, "macAddress"); !mac.empty()) {
      const std::optional<std::size_t> octets = mac_octets(mac);
      const std::string field = interface_path.child("macAddress").str();
      if (!octets) {
        causes.push_back({CauseType::field_value_invalid, field,
                          "interface " + name_field + " has malformed MAC address (" + std::string(mac) + ")."});
      } else if (*octets > 6) {
        causes.push_back({CauseType::field_value_invalid, field,
                          "interface " + name_field + " has too long MAC address (" + std::string(mac) + ")."});
      }
    }
    if (const std::string_view address = json::find_string(interface, "pciAddress");
        !address.empty() && !is_pci_address(address)) {
      causes.push_back({CauseType::field_value_invalid, interface_path.child("pciAddress").str(),
                        "interface " + name_field + " has malformed PCI address (" + std::string(address) + ")."});
    }
    const auto network = on_pod_network.find(name);
    const bool pod_network = network != on_pod_network.end() && network->second;
    const json::Value* ports = json::find_array(interface, "ports");
    if (ports != nullptr && pod_network) {
      validate_ports(*ports, interface_path, config.release, causes);
    }
    validate_interface_port_ranges(interface, interface_path, pod_network, config, causes);
    validate_interface_dhcp_options(interface, interface_path, path, causes);
  }
  return causes;
}

}  // namespace vmgate::admission::validation
