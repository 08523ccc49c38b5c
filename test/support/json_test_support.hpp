#pragma once
// Helpers shared by the test suites: JSON literals and golden-file paths.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/json.hpp"

namespace vmgate::testing {

/// Parses JSON text written in a test; fails the test (throws) on a syntax error.
json::Document parse(std::string_view text);

/// Compact JSON of a value, for EXPECT_EQ on whole documents.
std::string dump(const json::Value& value);

/// Deep JSON equality with both documents printed on failure: EXPECT_TRUE(json_equals(v, R"({...})")).
::testing::AssertionResult json_equals(const json::Value& actual, std::string_view expected);
/// The same for a value that may be absent (nullptr fails with "member absent").
::testing::AssertionResult json_equals(const json::Value* actual, std::string_view expected);

/// The value at a JSON pointer as text: strings unquoted, other values as compact JSON,
/// "<absent>" when the pointer designates nothing.
std::string text(const json::Value& root, const char* pointer);

/// Runs a rule of the shape `rule(const Value& input, Value& target, Allocator&)` (the preference
/// appliers) on two JSON texts and returns the changed target.
template <class Rule>
json::Document applied_rule(Rule rule, std::string_view input, std::string_view target) {
  const json::Document input_document = parse(input);
  json::Document target_document = parse(target);
  rule(input_document, target_document, target_document.GetAllocator());
  return target_document;
}

/// RFC 4648 base64 decoder, written independently of the encoder under test (the webhook's
/// patch); throws std::invalid_argument on bad input.
std::string base64_decode(std::string_view encoded);

/// Reads a whole file (test fixtures).
std::string read_file(const std::string& path);

/// A JSON file of the repository's test/fixtures or of the shared data beside the checkout.
struct JsonFile {
  std::string path;
  std::string text;
};
/// Every one, ordered by path (a stable order for failures to name).
std::vector<JsonFile> repository_json_files();

}  // namespace vmgate::testing
