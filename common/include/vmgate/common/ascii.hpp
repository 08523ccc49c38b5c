#pragma once
// ASCII case folding for protocol tokens (HTTP header names, media types) and Kubernetes kind
// and resource names, compared without regard to case as KubeVirt's strings.ToLower/EqualFold
// compare them (the same for ASCII; other bytes are left as they are, as the C locale's tolower
// leaves them); never for user text. Header only; pure.
#include <cstddef>
#include <string_view>

namespace vmgate::common {

constexpr char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

constexpr bool equals_ignoring_ascii_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace vmgate::common
