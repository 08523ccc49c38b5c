// Reads: spec.hostname, spec.subdomain. Follows vmi-create-admitter.go
// validateHostNameNotConformingToDNSLabelRules / validateSubdomainDNSSubdomainRules with
// apimachinery's IsDNS1123Label / IsDNS1123Subdomain (vendored in KubeVirt): every error is listed,
// joined by ", ".
#include <cctype>
#include <string>
#include <vector>

#include "vmgate/admission/validation/dns1123.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

bool alnum(char c) {
  return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// dns1123LabelFmt: [a-z0-9]([-a-z0-9]*[a-z0-9])? — the regexp has no length limit.
bool matches_label(std::string_view label) {
  if (label.empty() || !alnum(label.front()) || !alnum(label.back())) {
    return false;
  }
  for (char c : label) {
    if (!alnum(c) && c != '-') {
      return false;
    }
  }
  return true;
}

// dns1123SubdomainFmt: labels joined by '.', again without a per-label length limit.
bool matches_subdomain(std::string_view name) {
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    if (!matches_label(name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) {
      return true;
    }
    start = dot + 1;
  }
}

std::string join(const std::vector<std::string>& errors) {
  std::string out;
  for (const std::string& error : errors) {
    out.append(out.empty() ? "" : ", ").append(error);
  }
  return out;
}

}  // namespace

std::vector<std::string> dns1123_label_errors(std::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > 63) {
    errors.emplace_back("must be no more than 63 characters");
  }
  if (!matches_label(value)) {
    if (matches_subdomain(value)) {
      errors.emplace_back("must not contain dots");
    } else {
      errors.emplace_back(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start "
          "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    }
  }
  return errors;
}

std::vector<std::string> dns1123_subdomain_errors(std::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > 253) {
    errors.emplace_back("must be no more than 253 characters");
  }
  if (!matches_subdomain(value)) {
    errors.emplace_back(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  }
  return errors;
}

ErrorList validate_dns_names(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  if (std::string_view hostname = json::find_string(spec, "hostname"); !hostname.empty()) {
    if (std::vector<std::string> errors = dns1123_label_errors(hostname); !errors.empty()) {
      causes.push_back(
          {CauseType::field_value_invalid, path.child("hostname").str(),
           path.child("hostname").str() + " does not conform to the kubernetes DNS_LABEL rules : " + join(errors)});
    }
  }
  if (std::string_view subdomain = json::find_string(spec, "subdomain"); !subdomain.empty()) {
    if (std::vector<std::string> errors = dns1123_subdomain_errors(subdomain); !errors.empty()) {
      causes.push_back({CauseType::field_value_invalid, path.child("subdomain").str(),
                        path.child("subdomain").str() +
                            " does not conform to the kubernetes DNS_SUBDOMAIN rules : " + join(errors)});
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
