#pragma once
// Strict UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
// the rule Go and RapidJSON's kParseValidateEncodingFlag apply, and text positions for messages.
// Both the JSON decoder and the YAML reader use these.
#include <cstddef>
#include <optional>
#include <string_view>

namespace vmgate::common {

/// The length of the UTF-8 sequence starting at `bytes` (its lead byte above 0x7F) within the
/// `available` bytes there, or 0 when it is not a valid one (Unicode Table 3-7). Bytes are read in
/// order and the first wrong one ends the check.
inline std::size_t utf8_sequence_length(const unsigned char* bytes, std::size_t available) {
  const unsigned lead = bytes[0];
  std::size_t length = 0;
  unsigned low = 0x80;  // the range of the first continuation byte
  unsigned high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;
    high = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (available < length || bytes[1] < low || bytes[1] > high) {
    return 0;
  }
  for (std::size_t i = 2; i < length; ++i) {
    if (bytes[i] < 0x80 || bytes[i] > 0xBF) {
      return 0;
    }
  }
  return length;
}

/// Byte offset of the first byte that does not start a valid UTF-8 sequence, or nullopt.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

/// 1-based line and byte column of `offset` in `text` (an offset past the end counts as the end).
struct TextPosition {
  std::size_t line = 1;
  std::size_t column = 1;
};
TextPosition position_of(std::string_view text, std::size_t offset);

}  // namespace vmgate::common
