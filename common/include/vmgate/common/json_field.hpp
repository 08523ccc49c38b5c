#pragma once
// Typed members of a JSON object, for readers that must tell "not set" from "set to the wrong
// type". Go's encoding/json decodes an absent member and null alike to the zero value (a nil
// pointer), and refuses any other type than the field's; these readers return exactly those
// three outcomes, and leave the wording of the refusal to the caller, whose path and phrasing
// ("must be a string, got a number", "must be true or false") are part of its messages.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::json {

/// The JSON shape a reader asked for.
enum class Expected {
  boolean,      // true or false
  int64,        // an integral number in the int64 range (RapidJSON IsInt64)
  uint32,       // an integral number in 0..2^32-1 (RapidJSON IsUint)
  string,       //
  object,       //
  array,        // of anything
  string_list,  // an array whose every element is a string
};

/// The expected shape with an article, in json::type_name's style: "a boolean", "an integer",
/// "a non-negative integer", "a string", "an object", "an array", "a list of strings".
std::string_view describe(Expected expected);

/// A member that is present, not null, and not of the expected type.
struct WrongType {
  Expected expected;
  /// json::type_name of what was found ("a number", "an array"); for a string list holding
  /// another element, that element's type.
  std::string_view found;
  /// For a string list: the index of the first element that is not a string. nullopt when the
  /// member itself has the wrong type.
  std::optional<std::size_t> element;
};

/// A member read as T: nullopt when absent or null, WrongType when of another type.
template <class T>
using Field = Result<std::optional<T>, WrongType>;

// Member `key` of `object`. An `object` that is not a JSON object has no members (as json::find).
// Views and pointers point into `object` and live as long as it does. Thread-safe (read only).
Field<bool> read_bool(const Value& object, std::string_view key);
Field<std::int64_t> read_int64(const Value& object, std::string_view key);
Field<std::uint32_t> read_uint32(const Value& object, std::string_view key);
Field<std::string_view> read_string(const Value& object, std::string_view key);
/// The member itself when it is an object; the optional never holds nullptr.
Field<const Value*> read_object(const Value& object, std::string_view key);
/// The member itself when it is an array; the optional never holds nullptr.
Field<const Value*> read_array(const Value& object, std::string_view key);
/// Every element, in order; the first element that is not a string makes the whole member wrong.
Field<std::vector<std::string_view>> read_string_list(const Value& object, std::string_view key);

}  // namespace vmgate::json
