#pragma once
// Base64 as Go's encoding/base64 StdEncoding does it (RFC 4648 §4: standard alphabet, '='
// padding): the encoding of an AdmissionResponse's JSON patch, of cloud-init userDataBase64
// and of YAML !!binary values.
#include <optional>
#include <string>
#include <string_view>

namespace vmgate::common {

/// `bytes` encoded, padded, without line breaks.
std::string base64_encode(std::string_view bytes);

/// The bytes `text` encodes, or nullopt when it is not valid padded base64 (line breaks are
/// skipped, as DecodeString does).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace vmgate::common
