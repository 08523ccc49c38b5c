#pragma once
// The one way project code includes RapidJSON.
//
// RapidJSON's default RAPIDJSON_ASSERT is assert(): compiled out in Release, so calling
// GetString() on a number would be undefined behaviour. Every translation unit gets the same
// throwing definition instead (one definition: no ODR split between TUs), and valijson's
// RapidJSON adapter, which wants to define its own, is included only after this header.
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vmgate::json_detail {
[[noreturn]] void rapidjson_assertion_failed(const char* expression);
}  // namespace vmgate::json_detail

#ifndef RAPIDJSON_ASSERT
#define RAPIDJSON_ASSERT(x) ((x) ? static_cast<void>(0) : ::vmgate::json_detail::rapidjson_assertion_failed(#x))
#endif
#ifndef RAPIDJSON_HAS_STDSTRING
#define RAPIDJSON_HAS_STDSTRING 1
#endif
// SSE2 (every x86-64) lets the in-situ parser skip whitespace and copy unescaped string runs 16
// bytes at a time (json::parse_json_in_place pads its buffer for the aligned reads). Defined
// here, before any RapidJSON header, so that every unit sees the same RapidJSON.
#if !defined(RAPIDJSON_SSE2) && !defined(RAPIDJSON_SSE42) && (defined(__x86_64__) || defined(_M_X64))
#define RAPIDJSON_SSE2
#endif

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

// RapidJSON 1.1.0's EndObject and EndArray (the Document's SAX events, one per container a
// decoder closes) write the container's two flag bytes into the value on top of its stack and
// at once read back the eight bytes that hold them, to merge in the members' 48-bit pointer: a
// load that waits for that store to complete, a stall per object and array decoded. The value
// on top is the one StartObject or StartArray pushed, its flags already those of an empty
// container; these leave them as they are and set only the members and the sizes. Here, with the
// other definitions every unit must share, so that all see the same Document.
template <>
inline bool rapidjson::Document::EndObject(rapidjson::SizeType memberCount) {
  ValueType::Member* members = stack_.template Pop<ValueType::Member>(memberCount);
  ValueType* object = stack_.template Top<ValueType>();
  RAPIDJSON_ASSERT(object->IsObject() && object->MemberCount() == 0);
  if (memberCount != 0) {
    auto* stored = static_cast<ValueType::Member*>(GetAllocator().Malloc(memberCount * sizeof(ValueType::Member)));
    object->SetMembersPointer(stored);
    std::memcpy(static_cast<void*>(stored), members, memberCount * sizeof(ValueType::Member));
  }
  object->data_.o.size = object->data_.o.capacity = memberCount;
  return true;
}

template <>
inline bool rapidjson::Document::EndArray(rapidjson::SizeType elementCount) {
  ValueType* elements = stack_.template Pop<ValueType>(elementCount);
  ValueType* array = stack_.template Top<ValueType>();
  RAPIDJSON_ASSERT(array->IsArray() && array->Size() == 0);
  if (elementCount != 0) {
    auto* stored = static_cast<ValueType*>(GetAllocator().Malloc(elementCount * sizeof(ValueType)));
    array->SetElementsPointer(stored);
    std::memcpy(static_cast<void*>(stored), elements, elementCount * sizeof(ValueType));
  }
  array->data_.a.size = array->data_.a.capacity = elementCount;
  return true;
}

// RapidJSON 1.1.0's String and Key, one call per string a decoder reads, are more than g++
// inlines, so every key and string paid a call that saves and restores registers around
// a 16-byte push. The same two cases, always inline; growing the stack stays out of line.
template <>
RAPIDJSON_FORCEINLINE inline bool rapidjson::Document::String(const Ch* str, SizeType length, bool copy) {
  if (RAPIDJSON_LIKELY(!copy)) {
    new (stack_.template Push<ValueType>()) ValueType(str, length);
  } else {
    new (stack_.template Push<ValueType>()) ValueType(str, length, GetAllocator());
  }
  return true;
}

template <>
RAPIDJSON_FORCEINLINE inline bool rapidjson::Document::Key(const Ch* str, SizeType length, bool copy) {
  return String(str, length, copy);
}

namespace vmgate::json {

using Value = rapidjson::Value;
using Document = rapidjson::Document;
using Allocator = rapidjson::Document::AllocatorType;

/// Raised by RAPIDJSON_ASSERT: a bug in vmgate (a type not checked before use), never input.
class MisuseError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Member `key` of `object`, or nullptr when `object` is not an object or has no such member.
const Value* find(const Value& object, std::string_view key);
inline Value* find(Value& object, std::string_view key) {
  return const_cast<Value*>(find(static_cast<const Value&>(object), key));  // NOLINT
}

// The lookups below are inline around find, a call fewer per lookup: the rules make hundreds per
// request (a VM's validation about 800).

/// Follows object keys from `root`; nullptr as soon as one step is missing or not an object.
const Value* find_path(const Value& root, std::initializer_list<std::string_view> keys);
inline Value* find_path(Value& root, std::initializer_list<std::string_view> keys) {
  return const_cast<Value*>(find_path(static_cast<const Value&>(root), keys));  // NOLINT
}

/// Typed reads that return nullptr / empty when the member is absent or of another type.
inline const Value* find_object(const Value& object, std::string_view key) {
  const Value* value = find(object, key);
  return value != nullptr && value->IsObject() ? value : nullptr;
}
inline const Value* find_array(const Value& object, std::string_view key) {
  const Value* value = find(object, key);
  return value != nullptr && value->IsArray() ? value : nullptr;
}
inline std::string_view find_string(const Value& object, std::string_view key) {
  const Value* value = find(object, key);
  return value != nullptr && value->IsString() ? std::string_view(value->GetString(), value->GetStringLength())
                                               : std::string_view{};
}
/// True when the member exists and is not null (Go: a non-nil pointer).
inline bool has(const Value& object, std::string_view key) {
  const Value* value = find(object, key);
  return value != nullptr && !value->IsNull();
}
/// True when the member is absent, null, "" , 0 or false (Go: the zero value).
bool is_zero(const Value* value);

/// Member `key` of `object`, created as {} when absent or null. `object` must be an object.
Value& ensure_object(Value& object, std::string_view key, Allocator& allocator);
/// Member `key` of `object`, created as [] when absent or null.
Value& ensure_array(Value& object, std::string_view key, Allocator& allocator);
/// Sets (adds or replaces) member `key` to `value`, which is moved from.
void set(Value& object, std::string_view key, Value&& value, Allocator& allocator);
void set_string(Value& object, std::string_view key, std::string_view text, Allocator& allocator);
/// Removes member `key` if present.
void erase(Value& object, std::string_view key);

Value make_string(std::string_view text, Allocator& allocator);
Value copy(const Value& value, Allocator& allocator);
/// A value whose members, elements or text are `value`'s own, not copies: for a document that
/// keeps part of another unchanged without copying it. Values of a MemoryPoolAllocator are never
/// freed one by one, so two values may point at the same storage; the caller sees to it that
/// `value`'s document outlives the result and that nothing writes through either.
Value share(const Value& value);
/// The text of a string value (RAPIDJSON_ASSERT when it is not a string). Inline: the diff, the
/// structural checks and every lookup call it once per member visited.
inline std::string_view as_view(const Value& string_value) {
  return {string_value.GetString(), string_value.GetStringLength()};
}

/// The JSON type with an article, for messages: "null", "a boolean", "a number", "a string",
/// "an array", "an object".
std::string_view type_name(const Value& value);

/// Compact serialisation, byte for byte as RapidJSON's Writer writes it (UTF-8 passes through).
std::string to_string(const Value& value);
/// The same text appended to `out`.
void append_text(std::string& out, const Value& value);

/// Deep equality (object members compared by key, independent of order).
bool equal(const Value& a, const Value& b);

}  // namespace vmgate::json
