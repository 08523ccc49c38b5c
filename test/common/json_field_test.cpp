// Tests of common/src/json_field.cpp: absent and null read as nullopt, another type as WrongType.
#include "vmgate/common/json_field.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "support/json_test_support.hpp"

namespace vmgate::json {
namespace {

using vmgate::testing::parse;

const Document& sample() {
  static const Document document = parse(R"({
    "null": null, "yes": true, "no": false, "zero": 0, "negative": -3, "big": 9007199254740993,
    "beyond_uint32": 4294967296, "fraction": 1.5, "text": "a", "empty": "", "object": {"k": 1},
    "array": [1, "x"], "strings": ["a", "", "b"], "no_strings": [], "mixed": ["a", 2, null]
  })");
  return document;
}

// The reader's outcome in one string, so that each case states everything it expects.
template <class T>
std::string outcome(const Field<T>& field) {
  if (!field) {
    std::string text = "wrong: expected " + std::string(describe(field.error().expected)) + ", found " +
                       std::string(field.error().found);
    if (field.error().element) {
      text += " at " + std::to_string(*field.error().element);
    }
    return text;
  }
  return field->has_value() ? "value" : "nullopt";
}

TEST(JsonField, AbsentAndNullAreNullopt) {
  for (const char* key : {"absent", "null"}) {
    EXPECT_EQ(outcome(read_bool(sample(), key)), "nullopt") << key;
    EXPECT_EQ(outcome(read_int64(sample(), key)), "nullopt") << key;
    EXPECT_EQ(outcome(read_uint32(sample(), key)), "nullopt") << key;
    EXPECT_EQ(outcome(read_string(sample(), key)), "nullopt") << key;
    EXPECT_EQ(outcome(read_object(sample(), key)), "nullopt") << key;
    EXPECT_EQ(outcome(read_array(sample(), key)), "nullopt") << key;
    EXPECT_EQ(outcome(read_string_list(sample(), key)), "nullopt") << key;
  }
}

TEST(JsonField, NotAnObjectHasNoMembers) {
  const Document list = parse("[1]");
  EXPECT_EQ(outcome(read_string(list, "0")), "nullopt");
  EXPECT_EQ(outcome(read_bool(*find(sample(), "text"), "text")), "nullopt");
}

TEST(JsonField, Bool) {
  EXPECT_EQ(read_bool(sample(), "yes")->value(), true);
  EXPECT_EQ(read_bool(sample(), "no")->value(), false);
  EXPECT_EQ(outcome(read_bool(sample(), "text")), "wrong: expected a boolean, found a string");
  EXPECT_EQ(outcome(read_bool(sample(), "zero")), "wrong: expected a boolean, found a number");
}

TEST(JsonField, Int64) {
  EXPECT_EQ(read_int64(sample(), "zero")->value(), 0);
  EXPECT_EQ(read_int64(sample(), "negative")->value(), -3);
  EXPECT_EQ(read_int64(sample(), "big")->value(), 9007199254740993);  // no detour through double
  EXPECT_EQ(outcome(read_int64(sample(), "fraction")), "wrong: expected an integer, found a number");
  EXPECT_EQ(outcome(read_int64(sample(), "text")), "wrong: expected an integer, found a string");
  const Document huge = parse(R"({"n": 9223372036854775808})");
  EXPECT_EQ(outcome(read_int64(huge, "n")), "wrong: expected an integer, found a number");
}

TEST(JsonField, Uint32) {
  EXPECT_EQ(read_uint32(sample(), "zero")->value(), 0U);
  const Document max = parse(R"({"n": 4294967295})");
  EXPECT_EQ(read_uint32(max, "n")->value(), std::numeric_limits<std::uint32_t>::max());
  EXPECT_EQ(outcome(read_uint32(sample(), "negative")), "wrong: expected a non-negative integer, found a number");
  EXPECT_EQ(outcome(read_uint32(sample(), "beyond_uint32")), "wrong: expected a non-negative integer, found a number");
  EXPECT_EQ(outcome(read_uint32(sample(), "fraction")), "wrong: expected a non-negative integer, found a number");
  EXPECT_EQ(outcome(read_uint32(sample(), "yes")), "wrong: expected a non-negative integer, found a boolean");
}

TEST(JsonField, StringIsAViewIntoTheDocument) {
  const Field<std::string_view> text = read_string(sample(), "text");
  EXPECT_EQ(text->value(), "a");
  EXPECT_EQ(text->value().data(), find(sample(), "text")->GetString());
  EXPECT_EQ(read_string(sample(), "empty")->value(), "");  // set to "", not unset
  EXPECT_EQ(outcome(read_string(sample(), "object")), "wrong: expected a string, found an object");
}

TEST(JsonField, ObjectAndArrayAreTheMembersThemselves) {
  EXPECT_EQ(read_object(sample(), "object")->value(), find(sample(), "object"));
  EXPECT_EQ(read_array(sample(), "array")->value(), find(sample(), "array"));
  EXPECT_EQ(outcome(read_object(sample(), "array")), "wrong: expected an object, found an array");
  EXPECT_EQ(outcome(read_array(sample(), "object")), "wrong: expected an array, found an object");
  EXPECT_EQ(outcome(read_array(sample(), "text")), "wrong: expected an array, found a string");
}

TEST(JsonField, StringList) {
  EXPECT_EQ(read_string_list(sample(), "strings")->value(), (std::vector<std::string_view>{"a", "", "b"}));
  EXPECT_TRUE(read_string_list(sample(), "no_strings")->value().empty());
  EXPECT_EQ(outcome(read_string_list(sample(), "text")), "wrong: expected a list of strings, found a string");
  // The first element of another type is the one reported; null is not a string here.
  EXPECT_EQ(outcome(read_string_list(sample(), "mixed")), "wrong: expected a list of strings, found a number at 1");
  const Document nulls = parse(R"({"list": ["a", null]})");
  EXPECT_EQ(outcome(read_string_list(nulls, "list")), "wrong: expected a list of strings, found null at 1");
}

}  // namespace
}  // namespace vmgate::json
