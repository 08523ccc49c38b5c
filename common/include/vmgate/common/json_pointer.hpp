#pragma once
// JSON Pointer (RFC 6901): the path language of JSON Patch, which is what a mutating webhook
// returns to kube-apiserver.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::json {

/// One reference token, escaped: "~" becomes "~0" and "/" becomes "~1" (in that order, so
/// "~1" in a key round-trips).
std::string escape_token(std::string_view token);

/// `pointer` + "/" + escape_token(token): the pointer to member or element `token` below `pointer`.
std::string append_token(std::string_view pointer, std::string_view token);

/// The unescaped reference tokens of `pointer`; "" (the whole document) gives no tokens.
/// Errors: a pointer not starting with '/', a '~' not followed by '0' or '1'.
Result<std::vector<std::string>> split_pointer(std::string_view pointer);

/// An array index token in RFC 6901's canonical form ("0" or a decimal without leading zeros),
/// or nullopt ("-", "01", "+1", " 1", overflow).
std::optional<std::size_t> parse_index(std::string_view token);

/// The value `pointer` designates in `root`, or nullptr when the pointer is invalid or the value
/// is absent. Array tokens must be canonical indices of existing elements ("-" designates none).
/// For an object with duplicate keys the first member wins, as json::find does.
const Value* resolve(const Value& root, std::string_view pointer);

}  // namespace vmgate::json
