#pragma once
// apimachinery's IsDNS1123Label and IsDNS1123Subdomain (vendored in KubeVirt): every error, in
// apimachinery's words; empty when the value is valid.
#include <string>
#include <string_view>
#include <vector>

namespace vmgate::admission::validation {

std::vector<std::string> dns1123_label_errors(std::string_view value);
std::vector<std::string> dns1123_subdomain_errors(std::string_view value);

}  // namespace vmgate::admission::validation
