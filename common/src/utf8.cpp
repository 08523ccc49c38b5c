#include "vmgate/common/utf8.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace vmgate::common {

// ASCII runs are checked eight bytes at a time: the JSON decoder validates every request body
// here instead of inside RapidJSON, which checks character by character.
std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());  // NOLINT: byte view
  const std::size_t size = text.size();
  std::size_t at = 0;
  while (at < size) {
    // ASCII runs, eight bytes at a time.
    while (at + 8 <= size) {
      std::uint64_t word = 0;
      std::memcpy(&word, bytes + at, sizeof(word));
      if ((word & 0x8080808080808080ULL) != 0) {
        break;
      }
      at += 8;
    }
    if (at >= size) {
      break;
    }
    const unsigned lead = bytes[at];
    if (lead < 0x80) {
      ++at;
      continue;
    }
    std::size_t length = 0;
    unsigned low = 0x80;  // the range of the first continuation byte (Unicode Table 3-7)
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
      return at;
    }
    if (at + length > size || bytes[at + 1] < low || bytes[at + 1] > high) {
      return at;
    }
    for (std::size_t i = 2; i < length; ++i) {
      if (bytes[at + i] < 0x80 || bytes[at + i] > 0xBF) {
        return at;
      }
    }
    at += length;
  }
  return std::nullopt;
}

TextPosition position_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const auto line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t newline = before.rfind('\n');
  const std::size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
  return TextPosition{line, offset - line_start + 1};
}

}  // namespace vmgate::common
