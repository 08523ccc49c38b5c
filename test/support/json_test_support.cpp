#include "support/json_test_support.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "vmgate/admission/json_pointer.hpp"

namespace vmgate::testing {

json::Document parse(std::string_view text) {
  json::Document document;
  document.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (document.HasParseError()) {
    throw std::invalid_argument("test JSON does not parse at offset " + std::to_string(document.GetErrorOffset()) +
                                ": " + std::string(text.substr(0, 200)));
  }
  return document;
}

std::string dump(const json::Value& value) {
  return json::to_string(value);
}

::testing::AssertionResult json_equals(const json::Value& actual, std::string_view expected) {
  const json::Document wanted = parse(expected);
  if (json::equal(actual, wanted)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "\n  actual:   " << dump(actual) << "\n  expected: " << dump(wanted);
}

::testing::AssertionResult json_equals(const json::Value* actual, std::string_view expected) {
  if (actual == nullptr) {
    return ::testing::AssertionFailure() << "member absent, expected " << expected;
  }
  return json_equals(*actual, expected);
}

std::string text(const json::Value& root, const char* pointer) {
  const json::Value* value = json::resolve(root, pointer);
  if (value == nullptr) {
    return "<absent>";
  }
  return value->IsString() ? std::string(json::as_view(*value)) : dump(*value);
}

std::string describe(const admission::ErrorList& causes) {
  std::string out;
  for (const admission::FieldError& cause : causes) {
    out += std::string(admission::to_string(cause.type)) + " " + cause.field + ": " + cause.message + "\n";
  }
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path);
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string base64_decode(std::string_view encoded) {
  if (encoded.size() % 4 != 0) {
    throw std::invalid_argument("base64 length is not a multiple of 4");
  }
  const auto value_of = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') {
      return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
      return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
      return c - '0' + 52;
    }
    if (c == '+') {
      return 62;
    }
    if (c == '/') {
      return 63;
    }
    throw std::invalid_argument(std::string("not a base64 character: ") + c);
  };
  std::string out;
  for (std::size_t i = 0; i < encoded.size(); i += 4) {
    const bool last = i + 4 == encoded.size();
    const std::size_t padding = last ? static_cast<std::size_t>((encoded[i + 3] == '=') + (encoded[i + 2] == '=')) : 0;
    unsigned group = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      group <<= 6U;
      if (j < 4 - padding) {
        group |= static_cast<unsigned>(value_of(encoded[i + j]));
      }
    }
    out += static_cast<char>((group >> 16U) & 0xFFU);
    if (padding < 2) {
      out += static_cast<char>((group >> 8U) & 0xFFU);
    }
    if (padding < 1) {
      out += static_cast<char>(group & 0xFFU);
    }
  }
  return out;
}

}  // namespace vmgate::testing
