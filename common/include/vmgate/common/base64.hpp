#pragma once
// Base64 as Go's encoding/base64 StdEncoding does it (RFC 4648 §4: standard alphabet, '='
// padding): the encoding of an AdmissionResponse's JSON patch, of cloud-init userDataBase64
// and of YAML !!binary values.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace vmgate::common {

/// `bytes` encoded, padded, without line breaks.
std::string base64_encode(std::string_view bytes);

/// Length of the encoding of `byte_count` bytes: 4 characters per started group of 3.
constexpr std::size_t base64_encoded_size(std::size_t byte_count) {
  return (byte_count + 2) / 3 * 4;
}

/// Writes the encoding of `bytes` (as base64_encode gives it) into `out`, whose size must be
/// base64_encoded_size(bytes.size()) (std::invalid_argument otherwise): for callers that place
/// the text inside a larger buffer without a string of its own.
void base64_encode_into(std::string_view bytes, std::span<char> out);

/// The bytes `text` encodes, or nullopt when it is not valid padded base64 (line breaks are
/// skipped, as DecodeString does).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace vmgate::common
