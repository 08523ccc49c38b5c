#include "vmgate/common/json_patch.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vmgate/common/json_pointer.hpp"

namespace vmgate::json {

namespace {

// ---------------------------------------------------------------------------------------------
// diff

// Member lookup by key. json::find is a linear scan, which makes a per-key diff of two large
// objects quadratic; beyond a few dozen members a hash index pays for itself.
class MemberIndex {
 public:
  explicit MemberIndex(const Value& object) : object_(object) {
    constexpr rapidjson::SizeType small = 32;
    if (object.MemberCount() > small) {
      by_key_.reserve(object.MemberCount());
      for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
        by_key_.emplace(as_view(it->name), &it->value);  // keeps the first of duplicates, like find
      }
    }
  }

  [[nodiscard]] const Value* find(std::string_view key) const {
    if (by_key_.empty()) {
      return json::find(object_, key);
    }
    auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : it->second;
  }

 private:
  const Value& object_;
  std::unordered_map<std::string_view, const Value*> by_key_;
};

class Differ {
 public:
  explicit Differ(Document& patch) : patch_(patch), allocator_(patch.GetAllocator()) {}

  void value(const Value& from, const Value& to) {
    if (from.IsObject() && to.IsObject()) {
      object(from, to);
    } else if (from.IsArray() && to.IsArray()) {
      array(from, to);
    } else if (!equal(from, to)) {
      emit("replace", &to);
    }
  }

 private:
  // The mutated object is a copy of the original with members changed in place and new ones
  // appended, so members are matched position by position first (no lookup at all for the
  // common case) and by name only where the orders differ.
  void object(const Value& from, const Value& to) {
    const rapidjson::SizeType from_count = from.MemberCount();
    const rapidjson::SizeType to_count = to.MemberCount();
    std::optional<MemberIndex> to_index;
    for (rapidjson::SizeType i = 0; i < from_count; ++i) {
      const auto member = from.MemberBegin() + i;
      const std::string_view key = as_view(member->name);
      const Value* target = nullptr;
      if (i < to_count && as_view((to.MemberBegin() + i)->name) == key) {
        target = &(to.MemberBegin() + i)->value;
      } else {
        if (!to_index) {
          to_index.emplace(to);
        }
        target = to_index->find(key);
      }
      segments_.push_back(Segment{key, 0, false});
      if (target != nullptr) {
        value(member->value, *target);
      } else {
        emit("remove", nullptr);
      }
      segments_.pop_back();
    }
    std::optional<MemberIndex> from_index;
    for (rapidjson::SizeType i = 0; i < to_count; ++i) {
      const auto member = to.MemberBegin() + i;
      const std::string_view key = as_view(member->name);
      if (i < from_count && as_view((from.MemberBegin() + i)->name) == key) {
        continue;  // matched in place above
      }
      if (!from_index) {
        from_index.emplace(from);
      }
      if (from_index->find(key) == nullptr) {
        segments_.push_back(Segment{key, 0, false});
        emit("add", &member->value);
        segments_.pop_back();
      }
    }
  }

  void array(const Value& from, const Value& to) {
    const rapidjson::SizeType common = std::min(from.Size(), to.Size());
    for (rapidjson::SizeType i = 0; i < common; ++i) {
      segments_.push_back(Segment{{}, i, true});
      value(from[i], to[i]);
      segments_.pop_back();
    }
    // Explicit indices rather than "-": each add lands at the current end, and a reader of
    // the patch sees where every element goes.
    for (rapidjson::SizeType i = common; i < to.Size(); ++i) {
      segments_.push_back(Segment{{}, i, true});
      emit("add", &to[i]);
      segments_.pop_back();
    }
    // Highest index first, so that each remove leaves the indices still to remove in place.
    for (rapidjson::SizeType i = from.Size(); i > common; --i) {
      segments_.push_back(Segment{{}, i - 1, true});
      emit("remove", nullptr);
      segments_.pop_back();
    }
  }

  // Where the walk is: the pointer text is built only when an operation is emitted, since most
  // members visited are equal.
  struct Segment {
    std::string_view key;
    rapidjson::SizeType index;
    bool is_index;
  };

  [[nodiscard]] std::string pointer() const {
    std::string path;
    for (const Segment& segment : segments_) {
      path += '/';
      if (segment.is_index) {
        path += std::to_string(segment.index);
        continue;
      }
      for (char c : segment.key) {
        if (c == '~') {
          path += "~0";
        } else if (c == '/') {
          path += "~1";
        } else {
          path += c;
        }
      }
    }
    return path;
  }

  void emit(std::string_view op, const Value* value) {
    Value operation(rapidjson::kObjectType);
    operation.AddMember("op", make_string(op, allocator_), allocator_);
    operation.AddMember("path", make_string(pointer(), allocator_), allocator_);
    if (value != nullptr) {
      operation.AddMember("value", copy(*value, allocator_), allocator_);
    }
    patch_.PushBack(operation, allocator_);
  }

  Document& patch_;
  Allocator& allocator_;
  std::vector<Segment> segments_;
};

// ---------------------------------------------------------------------------------------------
// apply

using Tokens = std::vector<std::string>;

// The value the first `count` tokens designate, or nullptr (resolve()'s rules, mutable).
Value* locate(Value& root, const Tokens& tokens, std::size_t count) {
  Value* node = &root;
  for (std::size_t i = 0; i < count && node != nullptr; ++i) {
    if (node->IsObject()) {
      node = find(*node, tokens[i]);
    } else if (node->IsArray()) {
      const std::optional<std::size_t> index = parse_index(tokens[i]);
      if (!index || *index >= node->Size()) {
        return nullptr;
      }
      node = &(*node)[static_cast<rapidjson::SizeType>(*index)];
    } else {
      return nullptr;
    }
  }
  return node;
}

// RFC 6902 section 4.1. Returns the reason on failure.
std::optional<std::string> add(Document& document, const Tokens& tokens, Value&& value) {
  Value& root = document;
  if (tokens.empty()) {
    root = std::move(value);
    return std::nullopt;
  }
  Value* parent = locate(root, tokens, tokens.size() - 1);
  if (parent == nullptr) {
    return "parent path does not exist";
  }
  const std::string& last = tokens.back();
  if (parent->IsObject()) {
    set(*parent, last, std::move(value), document.GetAllocator());
    return std::nullopt;
  }
  if (!parent->IsArray()) {
    return "parent is neither an object nor an array";
  }
  if (last == "-") {
    parent->PushBack(value, document.GetAllocator());
    return std::nullopt;
  }
  const std::optional<std::size_t> index = parse_index(last);
  if (!index) {
    return "\"" + last + "\" is not an array index";
  }
  if (*index > parent->Size()) {
    return "array index " + last + " is out of range (size " + std::to_string(parent->Size()) + ")";
  }
  // RapidJSON has no insert: append, then rotate the new element down into place.
  parent->PushBack(value, document.GetAllocator());
  for (auto at = parent->Size() - 1; at > *index; --at) {
    (*parent)[at].Swap((*parent)[at - 1]);
  }
  return std::nullopt;
}

// RFC 6902 section 4.2: removes and returns the value at `tokens`.
Result<Value> take(Value& root, const Tokens& tokens) {
  if (tokens.empty()) {
    return Error{"cannot remove the whole document"};
  }
  Value* parent = locate(root, tokens, tokens.size() - 1);
  const std::string& last = tokens.back();
  if (parent != nullptr && parent->IsObject()) {
    // By index: clang 14 rejects comparing RapidJSON's mutable member iterators in C++20
    // (-Wambiguous-reversed-operator).
    for (rapidjson::SizeType i = 0; i < parent->MemberCount(); ++i) {
      const auto it = parent->MemberBegin() + i;
      if (as_view(it->name) == last) {
        Value removed(std::move(it->value));
        parent->EraseMember(it);  // keeps the order of the other members
        return Result<Value>(std::move(removed));
      }
    }
  } else if (parent != nullptr && parent->IsArray()) {
    const std::optional<std::size_t> index = parse_index(last);
    if (index && *index < parent->Size()) {
      const auto at = static_cast<rapidjson::SizeType>(*index);
      Value removed(std::move((*parent)[at]));
      parent->Erase(parent->Begin() + at);
      return Result<Value>(std::move(removed));
    }
  }
  return Error{"path does not exist"};
}

bool is_proper_prefix(const Tokens& prefix, const Tokens& tokens) {
  if (prefix.size() >= tokens.size()) {
    return false;
  }
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (prefix[i] != tokens[i]) {
      return false;
    }
  }
  return true;
}

// The "from" member of a move or copy, split; the reason on failure.
Result<Tokens> from_tokens(const Value& operation) {
  const Value* from = find(operation, "from");
  if (from == nullptr || !from->IsString()) {
    return Error{"\"from\" must be a string"};
  }
  auto tokens = split_pointer(as_view(*from));
  if (!tokens) {
    return Error{"\"from\": " + tokens.error().message};
  }
  return tokens;
}

std::optional<std::string> apply_operation(Document& document, const Value& operation, std::string_view op,
                                           const Tokens& tokens) {
  Allocator& allocator = document.GetAllocator();
  const Value* value = find(operation, "value");
  const bool needs_value = op == "add" || op == "replace" || op == "test";
  if (needs_value && value == nullptr) {
    return "missing \"value\"";
  }
  if (op == "add") {
    return add(document, tokens, copy(*value, allocator));
  }
  if (op == "remove") {
    auto removed = take(document, tokens);
    return removed ? std::nullopt : std::optional<std::string>(removed.error().message);
  }
  if (op == "replace") {
    Value* target = locate(document, tokens, tokens.size());
    if (target == nullptr) {
      return "path does not exist";
    }
    *target = copy(*value, allocator);
    return std::nullopt;
  }
  if (op == "test") {
    const Value* target = locate(document, tokens, tokens.size());
    if (target == nullptr) {
      return "path does not exist";
    }
    if (!equal(*target, *value)) {
      return "test failed: the value is " + to_string(*target);
    }
    return std::nullopt;
  }
  if (op == "move" || op == "copy") {
    auto from = from_tokens(operation);
    if (!from) {
      return from.error().message;
    }
    const std::string from_text(as_view(*find(operation, "from")));
    if (op == "move") {
      if (is_proper_prefix(*from, tokens)) {
        return "cannot move a value into one of its own children";
      }
      if (*from == tokens) {
        // A move onto itself changes nothing, but the source must still exist.
        return locate(document, tokens, tokens.size()) == nullptr
                   ? std::optional<std::string>("from " + from_text + " does not exist")
                   : std::nullopt;
      }
      // The root is a proper prefix of every other path, so take() can only fail here
      // because the source is missing.
      auto moved = take(document, *from);
      if (!moved) {
        return "from " + from_text + " does not exist";
      }
      return add(document, tokens, std::move(moved.value()));
    }
    const Value* source = locate(document, *from, from->size());
    if (source == nullptr) {
      return "from " + from_text + " does not exist";
    }
    return add(document, tokens, copy(*source, allocator));
  }
  return "unknown operation \"" + std::string(op) + "\"";
}

}  // namespace

Document diff(const Value& from, const Value& to) {
  Document patch(rapidjson::kArrayType);
  Differ(patch).value(from, to);
  return patch;
}

Result<Document> apply_patch(const Value& target, const Value& patch) {
  if (!patch.IsArray()) {
    return Error{"a JSON patch must be an array of operations"};
  }
  Document document;
  document.CopyFrom(target, document.GetAllocator());
  for (rapidjson::SizeType i = 0; i < patch.Size(); ++i) {
    const Value& operation = patch[i];
    const std::string label = "operation " + std::to_string(i);
    if (!operation.IsObject()) {
      return Error{label + ": not a JSON object"};
    }
    const Value* op = find(operation, "op");
    if (op == nullptr || !op->IsString()) {
      return Error{label + ": \"op\" must be a string"};
    }
    const Value* path = find(operation, "path");
    if (path == nullptr || !path->IsString()) {
      return Error{label + " (" + std::string(as_view(*op)) + "): \"path\" must be a string"};
    }
    const std::string described = label + " (" + std::string(as_view(*op)) + " " + std::string(as_view(*path)) + ")";
    auto tokens = split_pointer(as_view(*path));
    if (!tokens) {
      return Error{described + ": " + tokens.error().message};
    }
    if (auto reason = apply_operation(document, operation, as_view(*op), *tokens)) {
      return Error{described + ": " + *reason};
    }
  }
  return Result<Document>(std::move(document));
}

}  // namespace vmgate::json
