#pragma once
// JSON Pointer (RFC 6901), for tests: the path language of the JSON Patches the webhook
// returns, and a short way to name a value in an expected document. Product code addresses
// JSON through json::find and friends, so this lives with the tests.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::testing {

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
const json::Value* resolve(const json::Value& root, std::string_view pointer);

}  // namespace vmgate::testing
