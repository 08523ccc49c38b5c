#pragma once
// apimachinery's IsQualifiedName and IsValidLabelValue (vendored in KubeVirt): every error, in
// apimachinery's words; empty when the value is valid.
#include <string>
#include <string_view>
#include <vector>

namespace vmgate::admission::validation {

/// A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters.
std::vector<std::string> qualified_name_errors(std::string_view value);
/// A label value: empty, or at most 63 characters of the qualified-name form.
std::vector<std::string> label_value_errors(std::string_view value);

}  // namespace vmgate::admission::validation
