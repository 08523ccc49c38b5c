#include "vmgate/common/json_field.hpp"

#include <utility>

namespace vmgate::json {

namespace {

// The member when present and not null (Go: a non-nil pointer), else nullptr.
const Value* present(const Value& object, std::string_view key) {
  const Value* value = find(object, key);
  return value == nullptr || value->IsNull() ? nullptr : value;
}

template <class T>
Field<T> absent() {
  return std::optional<T>();
}

template <class T>
Field<T> wrong(Expected expected, const Value& found) {
  return WrongType{expected, type_name(found), std::nullopt};
}

}  // namespace

std::string_view describe(Expected expected) {
  switch (expected) {
    case Expected::boolean:
      return "a boolean";
    case Expected::int64:
      return "an integer";
    case Expected::uint32:
      return "a non-negative integer";
    case Expected::string:
      return "a string";
    case Expected::object:
      return "an object";
    case Expected::array:
      return "an array";
    case Expected::string_list:
      return "a list of strings";
  }
  return "a value";  // unreachable: every enumerator is handled
}

Field<bool> read_bool(const Value& object, std::string_view key) {
  const Value* value = present(object, key);
  if (value == nullptr) {
    return absent<bool>();
  }
  if (!value->IsBool()) {
    return wrong<bool>(Expected::boolean, *value);
  }
  return std::optional<bool>(value->GetBool());
}

Field<std::int64_t> read_int64(const Value& object, std::string_view key) {
  const Value* value = present(object, key);
  if (value == nullptr) {
    return absent<std::int64_t>();
  }
  if (!value->IsInt64()) {
    return wrong<std::int64_t>(Expected::int64, *value);
  }
  return std::optional<std::int64_t>(value->GetInt64());
}

Field<std::uint32_t> read_uint32(const Value& object, std::string_view key) {
  const Value* value = present(object, key);
  if (value == nullptr) {
    return absent<std::uint32_t>();
  }
  if (!value->IsUint()) {
    return wrong<std::uint32_t>(Expected::uint32, *value);
  }
  return std::optional<std::uint32_t>(value->GetUint());
}

Field<std::string_view> read_string(const Value& object, std::string_view key) {
  const Value* value = present(object, key);
  if (value == nullptr) {
    return absent<std::string_view>();
  }
  if (!value->IsString()) {
    return wrong<std::string_view>(Expected::string, *value);
  }
  return std::optional<std::string_view>(as_view(*value));
}

Field<const Value*> read_object(const Value& object, std::string_view key) {
  const Value* value = present(object, key);
  if (value == nullptr) {
    return absent<const Value*>();
  }
  if (!value->IsObject()) {
    return wrong<const Value*>(Expected::object, *value);
  }
  return std::optional<const Value*>(value);
}

Field<const Value*> read_array(const Value& object, std::string_view key) {
  const Value* value = present(object, key);
  if (value == nullptr) {
    return absent<const Value*>();
  }
  if (!value->IsArray()) {
    return wrong<const Value*>(Expected::array, *value);
  }
  return std::optional<const Value*>(value);
}

Field<std::vector<std::string_view>> read_string_list(const Value& object, std::string_view key) {
  const Value* value = present(object, key);
  if (value == nullptr) {
    return absent<std::vector<std::string_view>>();
  }
  if (!value->IsArray()) {
    return wrong<std::vector<std::string_view>>(Expected::string_list, *value);
  }
  std::vector<std::string_view> strings;
  strings.reserve(value->Size());
  for (rapidjson::SizeType i = 0; i < value->Size(); ++i) {
    const Value& item = (*value)[i];
    if (!item.IsString()) {
      return WrongType{Expected::string_list, type_name(item), std::size_t{i}};
    }
    strings.push_back(as_view(item));
  }
  return std::optional<std::vector<std::string_view>>(std::move(strings));
}

}  // namespace vmgate::json
