#include "support/json_pointer.hpp"

#include <limits>
#include <utility>

namespace vmgate::testing {

using json::Value;

std::string escape_token(std::string_view token) {
  std::string escaped;
  escaped.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string append_token(std::string_view pointer, std::string_view token) {
  std::string result(pointer);
  result += '/';
  result += escape_token(token);
  return result;
}

Result<std::vector<std::string>> split_pointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) {
    return tokens;
  }
  if (pointer.front() != '/') {
    return Error{"JSON pointer \"" + std::string(pointer) + "\" must be empty or start with '/'"};
  }
  std::string token;
  for (std::size_t at = 1; at < pointer.size(); ++at) {
    const char c = pointer[at];
    if (c == '/') {
      tokens.push_back(std::move(token));
      token.clear();
    } else if (c != '~') {
      token += c;
    } else if (at + 1 < pointer.size() && (pointer[at + 1] == '0' || pointer[at + 1] == '1')) {
      token += pointer[at + 1] == '0' ? '~' : '/';
      ++at;
    } else {
      // RFC 6901 section 3: only "~0" and "~1" are escapes; anything else is an error, not a
      // literal '~', so that two spellings never name one member.
      return Error{"JSON pointer \"" + std::string(pointer) + "\" has an invalid escape at offset " +
                   std::to_string(at) + " ('~' must be followed by '0' or '1')"};
    }
  }
  tokens.push_back(std::move(token));
  return tokens;
}

std::optional<std::size_t> parse_index(std::string_view token) {
  if (token.empty() || (token.size() > 1 && token.front() == '0')) {
    return std::nullopt;
  }
  std::size_t index = 0;
  constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
  for (char c : token) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    const auto digit = static_cast<std::size_t>(c - '0');
    if (index > (max - digit) / 10) {
      return std::nullopt;
    }
    index = index * 10 + digit;
  }
  return index;
}

const Value* resolve(const Value& root, std::string_view pointer) {
  auto tokens = split_pointer(pointer);
  if (!tokens) {
    return nullptr;
  }
  const Value* node = &root;
  for (const std::string& token : *tokens) {
    if (node->IsObject()) {
      node = json::find(*node, token);
    } else if (node->IsArray()) {
      const std::optional<std::size_t> index = parse_index(token);
      if (!index || *index >= node->Size()) {
        return nullptr;
      }
      node = &(*node)[static_cast<rapidjson::SizeType>(*index)];
    } else {
      return nullptr;
    }
    if (node == nullptr) {
      return nullptr;
    }
  }
  return node;
}

}  // namespace vmgate::testing
