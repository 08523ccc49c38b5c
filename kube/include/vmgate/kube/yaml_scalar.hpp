#pragma once
// How a YAML scalar becomes a JSON value when Kubernetes reads a manifest: sigs.k8s.io/yaml on
// top of go-yaml v2, i.e. YAML 1.1 resolution of plain scalars (gopkg.in/yaml.v2 resolve.go)
// and encoding/json's rendering of the result. Pure; thread-safe.
#include <cstdint>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"

namespace vmgate::kube {

/// A resolved scalar. Only the member named by `kind` is meaningful.
struct Scalar {
  enum class Kind { null_value, boolean, int64, uint64, float64, string };
  Kind kind = Kind::string;
  bool boolean = false;
  std::int64_t int64 = 0;
  std::uint64_t uint64 = 0;
  double float64 = 0;  // may be ±inf or NaN (".inf", ".nan"): callers building JSON reject those
  std::string string;  // for !!binary: the decoded bytes
};

/// yaml-cpp's tag for a plain scalar without a tag, and for a quoted one (or the `!` tag).
inline constexpr std::string_view plain_tag = "?";
inline constexpr std::string_view non_specific_tag = "!";

/// The tag yaml-cpp reports for `!!name` (for example "tag:yaml.org,2002:int").
inline constexpr std::string_view yaml_tag_prefix = "tag:yaml.org,2002:";

/// Resolves scalar `text` written with `tag` (plain_tag, non_specific_tag or a full tag).
///  - plain: null (`~ null Null NULL` and empty), bool (`y Y yes Yes YES true True TRUE on On ON`
///    and the `n/no/false/off` family), int (Go's strconv.ParseInt base 0 after removing `_`:
///    `0x1f`, `0o17`, `017`, `0b11`, signs; beyond int64 a uint64; beyond that a float when it
///    is written like one), float (`1.5`, `1e3`, `.5`, `.inf`, `.nan`), otherwise the string.
///  - quoted, `!`, `!!str` and unknown tags: the string itself; `!!binary`: base64-decoded.
///  - `!!null`, `!!bool`, `!!int`, `!!float`, `!!timestamp`, `!!merge`: resolved as plain, then
///    checked against the tag (an int is accepted as a float; timestamps stay strings, as
///    go-yaml v2 leaves them when decoding into interface{}).
/// Errors: text that does not fit its tag, in go-yaml's words ("cannot decode !!float `1.5` as
/// a !!int"); `!!binary` text that is not base64.
Result<Scalar> resolve_scalar(std::string_view tag, std::string_view text);

/// True when `text` written as a plain scalar reads back as the string `text`: false for
/// "", "true", "yes", "1", "0x1f", "1e3", "~", ".inf", "<<" ... (for emitters deciding to quote).
bool plain_scalar_is_string(std::string_view text);

/// The member name a float map key becomes: Go's strconv.FormatFloat(v, 'g', -1, 32), with
/// ".inf", "-.inf", ".nan" for the non-finite values (sigs.k8s.io/yaml convertToJSONableObject).
std::string float_key(double value);

}  // namespace vmgate::kube
