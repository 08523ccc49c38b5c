#pragma once
// ASCII case folding for protocol tokens (HTTP header names, media types) and vmgate's own
// lookups of kind and resource names (other bytes are left as they are, as the C locale's tolower
// leaves them); never for user text. Where a user's kind is compared as KubeVirt compares it
// (Go's strings.ToLower and EqualFold, which also map three non-ASCII runes onto ASCII letters):
// go_strings.hpp. Header only; pure.
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
