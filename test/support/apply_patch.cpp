#include "support/apply_patch.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/json_pointer.hpp"

namespace vmgate::testing {

namespace {

using json::Allocator;
using json::Document;
using json::Value;

using Tokens = std::vector<std::string>;

// The value the first `count` tokens designate, or nullptr (resolve()'s rules, mutable).
Value* locate(Value& root, const Tokens& tokens, std::size_t count) {
  Value* node = &root;
  for (std::size_t i = 0; i < count && node != nullptr; ++i) {
    if (node->IsObject()) {
      node = json::find(*node, tokens[i]);
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
    json::set(*parent, last, std::move(value), document.GetAllocator());
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
      if (json::as_view(it->name) == last) {
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
  const Value* from = json::find(operation, "from");
  if (from == nullptr || !from->IsString()) {
    return Error{"\"from\" must be a string"};
  }
  auto tokens = split_pointer(json::as_view(*from));
  if (!tokens) {
    return Error{"\"from\": " + tokens.error().message};
  }
  return tokens;
}

std::optional<std::string> apply_operation(Document& document, const Value& operation, std::string_view op,
                                           const Tokens& tokens) {
  Allocator& allocator = document.GetAllocator();
  const Value* value = json::find(operation, "value");
  const bool needs_value = op == "add" || op == "replace" || op == "test";
  if (needs_value && value == nullptr) {
    return "missing \"value\"";
  }
  if (op == "add") {
    return add(document, tokens, json::copy(*value, allocator));
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
    *target = json::copy(*value, allocator);
    return std::nullopt;
  }
  if (op == "test") {
    const Value* target = locate(document, tokens, tokens.size());
    if (target == nullptr) {
      return "path does not exist";
    }
    if (!json::equal(*target, *value)) {
      return "test failed: the value is " + json::to_string(*target);
    }
    return std::nullopt;
  }
  if (op == "move" || op == "copy") {
    auto from = from_tokens(operation);
    if (!from) {
      return from.error().message;
    }
    const std::string from_text(json::as_view(*json::find(operation, "from")));
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
    return add(document, tokens, json::copy(*source, allocator));
  }
  return "unknown operation \"" + std::string(op) + "\"";
}

}  // namespace

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
    const Value* op = json::find(operation, "op");
    if (op == nullptr || !op->IsString()) {
      return Error{label + ": \"op\" must be a string"};
    }
    const Value* path = json::find(operation, "path");
    if (path == nullptr || !path->IsString()) {
      return Error{label + " (" + std::string(json::as_view(*op)) + "): \"path\" must be a string"};
    }
    const std::string described =
        label + " (" + std::string(json::as_view(*op)) + " " + std::string(json::as_view(*path)) + ")";
    auto tokens = split_pointer(json::as_view(*path));
    if (!tokens) {
      return Error{described + ": " + tokens.error().message};
    }
    if (auto reason = apply_operation(document, operation, json::as_view(*op), *tokens)) {
      return Error{described + ": " + *reason};
    }
  }
  return Result<Document>(std::move(document));
}

}  // namespace vmgate::testing
