#pragma once
// Base64 decoding as Go's encoding/base64 StdEncoding.DecodeString does it (standard alphabet,
// '=' padding required, line breaks skipped): the decoder KubeVirt and go-yaml use for
// cloud-init userDataBase64 and YAML !!binary values.
#include <optional>
#include <string>
#include <string_view>

namespace vmgate::admission {

/// The bytes `text` encodes, or nullopt when it is not valid padded base64.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace vmgate::admission
