// Reads: spec.hostname, spec.subdomain. Follows vmi-create-admitter.go
// validateHostNameNotConformingToDNSLabelRules / validateSubdomainDNSSubdomainRules with
// apimachinery's IsDNS1123Label / IsDNS1123Subdomain.
#include <cctype>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

bool alnum(char c) { return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0; }

// RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
std::string label_problem(std::string_view label) {
  if (label.size() > 63) {
    return "must be no more than 63 characters";
  }
  if (label.empty() || !alnum(label.front()) || !alnum(label.back())) {
    return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
           "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
           "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
  }
  for (char c : label) {
    if (!alnum(c) && c != '-') {
      return label_problem("-");
    }
  }
  return "";
}

std::string subdomain_problem(std::string_view name) {
  if (name.size() > 253) {
    return "must be no more than 253 characters";
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string_view part = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!label_problem(part).empty() || part.size() > 63) {
      return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    }
    if (dot == std::string_view::npos) {
      return "";
    }
    start = dot + 1;
  }
}

}  // namespace

ErrorList validate_dns_names(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  if (std::string_view hostname = json::find_string(spec, "hostname"); !hostname.empty()) {
    if (std::string problem = label_problem(hostname); !problem.empty()) {
      causes.push_back({CauseType::field_value_invalid, path.child("hostname").str(),
                        path.child("hostname").str() + " does not conform to the kubernetes DNS_LABEL rules : " +
                            problem});
    }
  }
  if (std::string_view subdomain = json::find_string(spec, "subdomain"); !subdomain.empty()) {
    if (std::string problem = subdomain_problem(subdomain); !problem.empty()) {
      causes.push_back({CauseType::field_value_invalid, path.child("subdomain").str(),
                        path.child("subdomain").str() + " does not conform to the kubernetes DNS_SUBDOMAIN rules : " +
                            problem});
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
