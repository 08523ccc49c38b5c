#include "vmgate/common/json.hpp"
#include "vmgate/common/json_writer.hpp"

#include <rapidjson/internal/dtoa.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

namespace vmgate::json_detail {
void rapidjson_assertion_failed(const char* expression) {
  throw vmgate::json::MisuseError(std::string("RapidJSON precondition failed: ") + expression);
}
}  // namespace vmgate::json_detail

namespace vmgate::json {

namespace {

// Text equality that first compares addresses: json::copy shares its original's decoded
// strings, so comparing a copy with its original mostly needs no byte compare at all.
bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.data() == b.data() || a == b);
}

}  // namespace

const Value* find(const Value& object, std::string_view key) {
  if (!object.IsObject()) {
    return nullptr;
  }
  // A linear scan: objects here are small and this avoids building a GenericValue for the key.
  // Length and first byte decide most mismatches without a call to memcmp.
  const std::size_t length = key.size();
  const auto end = object.MemberEnd();
  for (auto it = object.MemberBegin(); it != end; ++it) {
    if (it->name.GetStringLength() != length) {
      continue;
    }
    const char* name = it->name.GetString();
    if (length == 0 || (name[0] == key[0] && std::memcmp(name, key.data(), length) == 0)) {
      return &it->value;
    }
  }
  return nullptr;
}

const Value* find_path(const Value& root, std::initializer_list<std::string_view> keys) {
  const Value* node = &root;
  for (const std::string_view key : keys) {
    node = find(*node, key);
    if (node == nullptr) {
      return nullptr;
    }
  }
  return node;
}

bool is_zero(const Value* value) {
  if (value == nullptr || value->IsNull()) {
    return true;
  }
  if (value->IsString()) {
    return value->GetStringLength() == 0;
  }
  if (value->IsBool()) {
    return !value->GetBool();
  }
  if (value->IsNumber()) {
    return value->GetDouble() == 0.0;
  }
  return false;
}

Value& ensure_object(Value& object, std::string_view key, Allocator& allocator) {
  Value* existing = find(object, key);
  if (existing != nullptr && existing->IsObject()) {
    return *existing;
  }
  if (existing != nullptr) {
    existing->SetObject();
    return *existing;
  }
  object.AddMember(make_string(key, allocator), Value(rapidjson::kObjectType), allocator);
  return (object.MemberEnd() - 1)->value;
}

Value& ensure_array(Value& object, std::string_view key, Allocator& allocator) {
  Value* existing = find(object, key);
  if (existing != nullptr && existing->IsArray()) {
    return *existing;
  }
  if (existing != nullptr) {
    existing->SetArray();
    return *existing;
  }
  object.AddMember(make_string(key, allocator), Value(rapidjson::kArrayType), allocator);
  return (object.MemberEnd() - 1)->value;
}

void set(Value& object, std::string_view key, Value&& value, Allocator& allocator) {
  if (Value* existing = find(object, key)) {
    *existing = std::move(value);
    return;
  }
  object.AddMember(make_string(key, allocator), std::move(value), allocator);
}

void set_string(Value& object, std::string_view key, std::string_view text, Allocator& allocator) {
  set(object, key, make_string(text, allocator), allocator);
}

void erase(Value& object, std::string_view key) {
  if (!object.IsObject()) {
    return;
  }
  // An index loop: clang 14 rejects comparing RapidJSON's mutable member iterators in C++20
  // (-Wambiguous-reversed-operator).
  for (rapidjson::SizeType i = 0; i < object.MemberCount(); ++i) {
    auto it = object.MemberBegin() + i;
    if (as_view(it->name) == key) {
      object.EraseMember(it);  // keeps member order: patches and output stay stable
      return;
    }
  }
}

Value make_string(std::string_view text, Allocator& allocator) {
  // A default-constructed view (find_string of a missing member) has no data: RapidJSON asserts
  // on a null pointer even for length 0.
  return text.empty() ? Value("", 0, allocator)
                      : Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), allocator);
}

Value share(const Value& value) {
  // RapidJSON has no such constructor: its copies are deep (or move from the source). A value is
  // 16 bytes of type flags and a pointer or inline data, and every constructor fills all 16.
  Value shared;
  std::memcpy(static_cast<void*>(&shared), static_cast<const void*>(&value), sizeof(Value));
  return shared;
}

// Strings the value only refers to (those json::parse_json_in_place decoded, RapidJSON's const
// strings) are shared, not copied, as RapidJSON's own copy does.
Value copy(const Value& value, Allocator& allocator) {
  // Containers member by member rather than RapidJSON 1.1.0's copy constructor, which replays
  // the value as SAX events into a temporary Document (its own heap stack, a push and pop per
  // node). Scalars and strings through that constructor: const strings stay shared.
  switch (value.GetType()) {
    case rapidjson::kObjectType: {
      Value out(rapidjson::kObjectType);
      for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
        out.AddMember(Value(it->name, allocator), copy(it->value, allocator), allocator);
      }
      return out;
    }
    case rapidjson::kArrayType: {
      Value out(rapidjson::kArrayType);
      out.Reserve(value.Size(), allocator);
      for (const Value& element : value.GetArray()) {
        out.PushBack(copy(element, allocator), allocator);
      }
      return out;
    }
    default:
      return Value(value, allocator);
  }
}

std::string_view type_name(const Value& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "a boolean";
    case rapidjson::kObjectType:
      return "an object";
    case rapidjson::kArrayType:
      return "an array";
    case rapidjson::kStringType:
      return "a string";
    case rapidjson::kNumberType:
      break;
  }
  return "a number";
}

// Written directly rather than through RapidJSON's Writer, whose per-token bookkeeping (a stack
// of open containers, a reserve per token) costs the webhook more than the text itself: the same
// bytes (json_writer_test compares the two on every fixture and on random documents).
void append_text(std::string& out, const Value& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      out += "null";
      return;
    case rapidjson::kFalseType:
      out += "false";
      return;
    case rapidjson::kTrueType:
      out += "true";
      return;
    case rapidjson::kStringType:
      append_quoted(out, as_view(value));
      return;
    case rapidjson::kObjectType: {
      out += '{';
      for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
        if (it != value.MemberBegin()) {
          out += ',';
        }
        append_quoted(out, as_view(it->name));
        out += ':';
        append_text(out, it->value);
      }
      out += '}';
      return;
    }
    case rapidjson::kArrayType: {
      out += '[';
      for (auto it = value.Begin(); it != value.End(); ++it) {
        if (it != value.Begin()) {
          out += ',';
        }
        append_text(out, *it);
      }
      out += ']';
      return;
    }
    case rapidjson::kNumberType:
      break;
  }
  char digits[32];
  char* end = digits;
  if (value.IsDouble()) {
    const double number = value.GetDouble();
    if (!std::isfinite(number)) {
      // No decoded value is one; the Writer would stop the text here. JSON has no such number.
      out += "null";
      return;
    }
    end = rapidjson::internal::dtoa(number, digits);
  } else if (value.IsInt64()) {
    end = std::to_chars(digits, digits + sizeof(digits), value.GetInt64()).ptr;
  } else {
    end = std::to_chars(digits, digits + sizeof(digits), value.GetUint64()).ptr;
  }
  out.append(digits, end);
}

std::string to_string(const Value& value) {
  std::string text;
  append_text(text, value);
  return text;
}

bool equal(const Value& a, const Value& b) {
  if (a.IsNumber() && b.IsNumber()) {
    if (a.IsInt64() && b.IsInt64()) {
      return a.GetInt64() == b.GetInt64();
    }
    if (a.IsUint64() && b.IsUint64()) {
      return a.GetUint64() == b.GetUint64();
    }
    return a.GetDouble() == b.GetDouble();
  }
  if (a.GetType() != b.GetType()) {
    return false;
  }
  switch (a.GetType()) {
    case rapidjson::kNullType:
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return true;
    case rapidjson::kStringType:
      return same_text(as_view(a), as_view(b));
    case rapidjson::kArrayType: {
      if (a.Size() != b.Size()) {
        return false;
      }
      for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
        if (!equal(a[i], b[i])) {
          return false;
        }
      }
      return true;
    }
    case rapidjson::kObjectType: {
      if (a.MemberCount() != b.MemberCount()) {
        return false;
      }
      for (rapidjson::SizeType i = 0; i < a.MemberCount(); ++i) {
        const auto it = a.MemberBegin() + i;
        // Same position first: a copy keeps its original's member order.
        const auto same_place = b.MemberBegin() + i;
        const Value* other =
            same_text(as_view(same_place->name), as_view(it->name)) ? &same_place->value : find(b, as_view(it->name));
        if (other == nullptr || !equal(it->value, *other)) {
          return false;
        }
      }
      return true;
    }
    case rapidjson::kNumberType:
      break;
  }
  return false;
}

}  // namespace vmgate::json
