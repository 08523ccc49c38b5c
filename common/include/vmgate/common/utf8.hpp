#pragma once
// Strict UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF),
// the rule Go and RapidJSON's kParseValidateEncodingFlag apply, and text positions for messages.
// Both the JSON decoder and the YAML reader use these.
#include <cstddef>
#include <optional>
#include <string_view>

namespace vmgate::common {

/// Byte offset of the first byte that does not start a valid UTF-8 sequence, or nullopt.
std::optional<std::size_t> first_invalid_utf8(std::string_view text);

/// 1-based line and byte column of `offset` in `text` (an offset past the end counts as the end).
struct TextPosition {
  std::size_t line = 1;
  std::size_t column = 1;
};
TextPosition position_of(std::string_view text, std::size_t offset);

}  // namespace vmgate::common
