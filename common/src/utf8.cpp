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
    const std::size_t length = utf8_sequence_length(bytes + at, size - at);
    if (length == 0) {
      return at;
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
