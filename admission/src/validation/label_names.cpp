// Follows k8s.io/apimachinery/pkg/util/validation IsQualifiedName and IsValidLabelValue.
#include "vmgate/admission/validation/label_names.hpp"

#include <algorithm>
#include <cctype>

#include "vmgate/admission/validation/dns1123.hpp"

namespace vmgate::admission::validation {

namespace {

constexpr std::size_t max_name_length = 63;
constexpr std::string_view qualified_name_format = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view qualified_name_message =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

bool alphanumeric(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// ^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$
bool matches_qualified_name(std::string_view name) {
  return !name.empty() && alphanumeric(name.front()) && alphanumeric(name.back()) &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return alphanumeric(c) || c == '-' || c == '_' || c == '.'; });
}

std::string regex_error(std::string_view message, std::string_view format, std::string_view a, std::string_view b,
                        std::string_view c) {
  // RegexError's own spacing: "'a',  or 'b',  or 'c', regex ...".
  return std::string(message) + " (e.g. '" + std::string(a) + "',  or '" + std::string(b) + "',  or '" +
         std::string(c) + "', regex used for validation is '" + std::string(format) + "')";
}

std::string qualified_name_regex_error() {
  return regex_error(qualified_name_message, qualified_name_format, "MyName", "my.name", "123-abc");
}

}  // namespace

std::vector<std::string> qualified_name_errors(std::string_view value) {
  std::vector<std::string> errors;
  std::string_view name = value;
  if (const std::size_t slash = value.find('/'); slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      errors.push_back("a qualified name " + qualified_name_regex_error() +
                       " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errors;
    }
    const std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errors.emplace_back("prefix part must be non-empty");
    } else {
      for (const std::string& error : dns1123_subdomain_errors(prefix)) {
        errors.push_back("prefix part " + error);
      }
    }
  }
  if (name.empty()) {
    errors.emplace_back("name part must be non-empty");
  } else if (name.size() > max_name_length) {
    errors.push_back("name part must be no more than " + std::to_string(max_name_length) + " characters");
  }
  if (!matches_qualified_name(name)) {
    errors.push_back("name part " + qualified_name_regex_error());
  }
  return errors;
}

std::vector<std::string> label_value_errors(std::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > max_name_length) {
    errors.push_back("must be no more than " + std::to_string(max_name_length) + " characters");
  }
  if (!value.empty() && !matches_qualified_name(value)) {
    errors.push_back(
        regex_error("a valid label must be an empty string or consist of alphanumeric characters, '-', "
                    "'_' or '.', and must start and end with an alphanumeric character",
                    "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?", "MyValue", "my_value", "12345"));
  }
  return errors;
}

}  // namespace vmgate::admission::validation
