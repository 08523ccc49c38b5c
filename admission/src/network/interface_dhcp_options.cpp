// Reads: interfaces[i].dhcpOptions.{privateOptions[*].option, ntpServers}. Follows
// pkg/network/admitter/netiface.go validateDHCPOptions; the private-option causes name the
// spec's own path (KubeVirt passes `field`), the NTP ones the server's entry.
#include <set>
#include <string>

#include "network/interface_rules.hpp"
#include "network/ip_address.hpp"

namespace vmgate::admission::validation {

void validate_interface_dhcp_options(const json::Value& interface, const FieldPath& interface_path,
                                     const FieldPath& spec_path, ErrorList& causes) {
  const json::Value* options = json::find_object(interface, "dhcpOptions");
  if (options == nullptr) {
    return;
  }
  if (const json::Value* private_options = json::find_array(*options, "privateOptions")) {
    std::set<std::int64_t> seen;
    for (const json::Value& option : private_options->GetArray()) {
      const json::Value* number = option.IsObject() ? json::find(option, "option") : nullptr;
      seen.insert(number != nullptr && number->IsInt64() ? number->GetInt64() : 0);
    }
    if (seen.size() < private_options->Size()) {
      causes.push_back({CauseType::field_value_invalid, spec_path.str(),
                        "Found Duplicates: you have provided duplicate DHCPPrivateOptions"});
    }
    for (const json::Value& option : private_options->GetArray()) {
      const json::Value* number = option.IsObject() ? json::find(option, "option") : nullptr;
      const std::int64_t value = number != nullptr && number->IsInt64() ? number->GetInt64() : 0;
      if (value < 224 || value > 254) {
        causes.push_back({CauseType::field_value_invalid, spec_path.str(),
                          "provided DHCPPrivateOptions are out of range, must be in range 224 to 254"});
      }
    }
  }
  if (const json::Value* servers = json::find_array(*options, "ntpServers")) {
    for (rapidjson::SizeType i = 0; i < servers->Size(); ++i) {
      const json::Value& server = (*servers)[i];
      if (!is_ipv4_address(server.IsString() ? json::as_view(server) : std::string_view{})) {
        causes.push_back({CauseType::field_value_invalid,
                          interface_path.child("dhcpOptions").child("ntpServers").index(i).str(),
                          "NTP servers must be a list of valid IPv4 addresses."});
      }
    }
  }
}

}  // namespace vmgate::admission::validation
