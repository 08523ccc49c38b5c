// Reads: spec.dnsPolicy, spec.dnsConfig.{nameservers, searches, options[*].name}. Follows
// vmi-create-admitter.go validateDNSPolicy and validatePodDNSConfig (copied there from
// Kubernetes), whose dnsConfig causes name the bare fields "nameservers", "searchDomains" and
// "options".
#include <string>

#include "network/ip_address.hpp"
#include "vmgate/admission/validation/dns1123.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

constexpr std::size_t max_nameservers = 3;
constexpr std::size_t max_search_paths = 6;
constexpr std::size_t max_search_list_chars = 256;

// Go's %s of a []string: "[a b c]".
std::string go_list(const json::Value& strings) {
  std::string out = "[";
  for (rapidjson::SizeType i = 0; i < strings.Size(); ++i) {
    out.append(i == 0 ? "" : " ").append(strings[i].IsString() ? json::as_view(strings[i]) : "");
  }
  return out + "]";
}

void check_policy(std::string_view policy, const FieldPath& field, ErrorList& causes) {
  if (policy.empty() || policy == "ClusterFirstWithHostNet" || policy == "ClusterFirst" || policy == "Default" ||
      policy == "None") {
    return;
  }
  causes.push_back({CauseType::field_value_not_supported, field.str(),
                    "DNSPolicy: " + std::string(policy) +
                        " is not supported, valid values: [ClusterFirstWithHostNet ClusterFirst Default None ]"});
}

void check_nameservers(const json::Value& nameservers, ErrorList& causes) {
  if (nameservers.Size() > max_nameservers) {
    causes.push_back(
        {CauseType::field_value_invalid, "nameservers",
         "must not have more than " + std::to_string(max_nameservers) + " nameservers: " + go_list(nameservers)});
  }
  for (const json::Value& nameserver : nameservers.GetArray()) {
    const std::string_view text = nameserver.IsString() ? json::as_view(nameserver) : std::string_view{};
    if (!is_ip_address(text)) {
      causes.push_back(
          {CauseType::field_value_invalid, "nameservers", "must be valid IP address: " + std::string(text)});
    }
  }
}

void check_searches(const json::Value& searches, ErrorList& causes) {
  if (searches.Size() > max_search_paths) {
    causes.push_back({CauseType::field_value_invalid, "searchDomains",
                      "must not have more than " + std::to_string(max_search_paths) + " search paths"});
  }
  std::size_t joined_length = searches.Empty() ? 0 : searches.Size() - 1;  // the spaces between them
  for (const json::Value& search : searches.GetArray()) {
    joined_length += search.IsString() ? search.GetStringLength() : 0;
  }
  if (joined_length > max_search_list_chars) {
    causes.push_back({CauseType::field_value_invalid, "searchDomains",
                      "must not have more than " + std::to_string(max_search_list_chars) +
                          " characters (including spaces) in the search list"});
  }
  for (const json::Value& search : searches.GetArray()) {
    for (std::string& message : dns1123_subdomain_errors(search.IsString() ? json::as_view(search) : "")) {
      causes.push_back({CauseType::field_value_invalid, "searchDomains", std::move(message)});
    }
  }
}

}  // namespace

ErrorList validate_dns(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const std::string_view policy = json::find_string(spec, "dnsPolicy");
  check_policy(policy, path.child("dnsPolicy"), causes);
  const json::Value* config = json::find_object(spec, "dnsConfig");
  const json::Value empty_list(rapidjson::kArrayType);
  const json::Value* listed = config != nullptr ? json::find_array(*config, "nameservers") : nullptr;
  const json::Value& nameservers = listed != nullptr ? *listed : empty_list;
  if (policy == "None") {
    if (config == nullptr) {
      causes.push_back({CauseType::field_value_required, path.child("dnsConfig").str(),
                        "must provide `dnsConfig` when `dnsPolicy` is None"});
      return causes;
    }
    if (nameservers.Empty()) {
      causes.push_back({CauseType::field_value_required, "nameservers",
                        "must provide at least one DNS nameserver when `dnsPolicy` is None"});
      return causes;
    }
  }
  if (config == nullptr) {
    return causes;
  }
  check_nameservers(nameservers, causes);
  if (const json::Value* searches = json::find_array(*config, "searches")) {
    check_searches(*searches, causes);
  }
  if (const json::Value* options = json::find_array(*config, "options")) {
    for (const json::Value& option : options->GetArray()) {
      if (!option.IsObject() || json::find_string(option, "name").empty()) {
        causes.push_back({CauseType::field_value_invalid, "options", "Option.Name must not be empty"});
      }
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
