#pragma once
// Go's strings.ToLower and strings.EqualFold as KubeVirt compares a user's kind with a lower-case
// ASCII name (`strings.ToLower(kind) == "virtualmachineinstancetype"`, `strings.EqualFold(kind,
// "datasource")`). Both work rune by rune with Unicode's simple case mappings, under which three
// code points outside ASCII meet an ASCII letter: U+0130 'İ' lowers to 'i', U+212A (Kelvin sign)
// lowers to and folds with 'k', U+017F 'ſ' (long s) folds with 's'. So "VİrtualMachinePreference"
// is a namespaced preference to KubeVirt. Every other non-ASCII rune, and every byte of invalid
// UTF-8 (U+FFFD to Go), stays outside ASCII and never matches. Header only; pure.
#include <cstddef>
#include <string_view>

#include "vmgate/common/ascii.hpp"

namespace vmgate::common {

namespace detail {

// The ASCII letter the non-ASCII rune at text[at] meets under Go's case mapping (`folding`:
// EqualFold's orbits, else ToLower's mapping), with its length in bytes; 0 for none.
constexpr char go_ascii_case_partner(std::string_view text, std::size_t at, bool folding, std::size_t& length) {
  const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  if (at + 1 < text.size() && byte(at) == 0xC4 && byte(at + 1) == 0xB0 && !folding) {
    length = 2;
    return 'i';  // U+0130: ToLower gives 'i'; EqualFold does not fold it with 'i' (its orbit is itself)
  }
  if (at + 1 < text.size() && byte(at) == 0xC5 && byte(at + 1) == 0xBF && folding) {
    length = 2;
    return 's';  // U+017F: folds with 's'; ToLower leaves it as it is
  }
  if (at + 2 < text.size() && byte(at) == 0xE2 && byte(at + 1) == 0x84 && byte(at + 2) == 0xAA) {
    length = 3;
    return 'k';  // U+212A: lowers to and folds with 'k'
  }
  return '\0';
}

constexpr bool go_case_equals(std::string_view text, std::string_view lower_ascii, bool folding) {
  // Every rune gives at most one letter and takes one byte or more.
  if (text.size() < lower_ascii.size()) {
    return false;
  }
  std::size_t matched = 0;
  for (std::size_t at = 0; at < text.size();) {
    if (matched == lower_ascii.size()) {
      return false;
    }
    char letter = text[at];
    std::size_t length = 1;
    if (static_cast<unsigned char>(letter) >= 0x80) {
      letter = go_ascii_case_partner(text, at, folding, length);
      if (letter == '\0') {
        return false;
      }
    }
    if (ascii_lower(letter) != lower_ascii[matched]) {
      return false;
    }
    at += length;
    ++matched;
  }
  return matched == lower_ascii.size();
}

}  // namespace detail

/// Go's `strings.ToLower(text) == lower_ascii`, for `lower_ascii` lower-case ASCII.
constexpr bool go_lower_equals(std::string_view text, std::string_view lower_ascii) {
  return detail::go_case_equals(text, lower_ascii, false);
}

/// Go's `strings.EqualFold(text, lower_ascii)`, for `lower_ascii` lower-case ASCII.
constexpr bool go_equal_fold(std::string_view text, std::string_view lower_ascii) {
  return detail::go_case_equals(text, lower_ascii, true);
}

}  // namespace vmgate::common
