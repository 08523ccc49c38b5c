#include "manifests/utf8.hpp"

#include <algorithm>

namespace vmgate::cli::detail {

std::optional<std::size_t> first_invalid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());  // NOLINT: byte view
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    const unsigned lead = bytes[i];
    if (lead < 0x80U) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    unsigned low = 0x80U;  // bounds of the second byte (excludes overlongs and surrogates)
    unsigned high = 0xBFU;
    if (lead >= 0xC2U && lead <= 0xDFU) {
      length = 2;
    } else if (lead >= 0xE0U && lead <= 0xEFU) {
      length = 3;
      if (lead == 0xE0U) {
        low = 0xA0U;
      } else if (lead == 0xEDU) {
        high = 0x9FU;
      }
    } else if (lead >= 0xF0U && lead <= 0xF4U) {
      length = 4;
      if (lead == 0xF0U) {
        low = 0x90U;
      } else if (lead == 0xF4U) {
        high = 0x8FU;
      }
    } else {
      return i;
    }
    if (i + length > size) {
      return i;
    }
    if (bytes[i + 1] < low || bytes[i + 1] > high) {
      return i;
    }
    for (std::size_t k = 2; k < length; ++k) {
      if (bytes[i + k] < 0x80U || bytes[i + k] > 0xBFU) {
        return i;
      }
    }
    i += length;
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

}  // namespace vmgate::cli::detail
