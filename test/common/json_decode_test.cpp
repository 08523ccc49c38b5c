#include "vmgate/common/json_decode.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include <chrono>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "support/json_test_support.hpp"

namespace vmgate::json {
namespace {

using vmgate::testing::dump;

struct Accepted {
  std::string name;
  std::string text;
  std::string expected;  // compact JSON of the parsed document
};

void PrintTo(const Accepted& c, std::ostream* out) {
  *out << c.name;
}

class JsonDecodeAccepts : public ::testing::TestWithParam<Accepted> {};

TEST_P(JsonDecodeAccepts, ParsesToTheSameDocument) {
  const Accepted& c = GetParam();
  auto parsed = parse_json(c.text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(dump(*parsed), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    JsonDecode, JsonDecodeAccepts,
    ::testing::Values(Accepted{"null", "null", "null"}, Accepted{"top_level_number", " 42 ", "42"},
                      Accepted{"top_level_string", "\"s\"", "\"s\""}, Accepted{"top_level_bool", "true\n", "true"},
                      Accepted{"object", "{\"a\": [1, 2.5, \"x\", null, false]}", "{\"a\":[1,2.5,\"x\",null,false]}"},
                      Accepted{"surrogate_pair", "\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\""},
                      Accepted{"utf8_passthrough", "\"caf\xc3\xa9\"", "\"caf\xc3\xa9\""},
                      Accepted{"escaped_nul", "\"a\\u0000b\"", "\"a\\u0000b\""},
                      Accepted{"same_key_in_sibling_objects", "[{\"a\":1},{\"a\":2}]", "[{\"a\":1},{\"a\":2}]"},
                      Accepted{"same_key_at_two_levels", "{\"a\":{\"a\":1}}", "{\"a\":{\"a\":1}}"}),
    [](const ::testing::TestParamInfo<Accepted>& test) { return test.param.name; });

struct Rejected {
  std::string name;
  std::string text;
  std::string message;  // expected substring
  std::size_t line;
  std::size_t column;
};

void PrintTo(const Rejected& c, std::ostream* out) {
  *out << c.name;
}

class JsonDecodeRejects : public ::testing::TestWithParam<Rejected> {};

TEST_P(JsonDecodeRejects, WithMessageAndPosition) {
  const Rejected& c = GetParam();
  auto parsed = parse_json(c.text);
  ASSERT_FALSE(parsed.ok()) << dump(*parsed);
  const DecodeError& error = parsed.error();
  EXPECT_NE(error.message.find(c.message), std::string::npos) << error.message;
  EXPECT_EQ(error.line, c.line) << error.message;
  EXPECT_EQ(error.column, c.column) << error.message;
  if (error.line != 0) {
    const std::string where = "(line " + std::to_string(c.line) + ", column " + std::to_string(c.column) + ")";
    EXPECT_NE(error.message.find(where), std::string::npos) << error.message;
  }
}

using namespace std::string_literals;

INSTANTIATE_TEST_SUITE_P(
    JsonDecode, JsonDecodeRejects,
    ::testing::Values(
        Rejected{"empty", "", "empty input", 0, 0}, Rejected{"whitespace_only", " \n\t ", "empty input", 0, 0},
        Rejected{"invalid_utf8", "\"\xff\"", "Invalid encoding in string", 1, 2},
        Rejected{"invalid_utf8_continuation", "[1, 2, \"\xc3\x28\"]", "Invalid encoding in string", 1, 9},
        Rejected{"overlong_utf8", "\"\xc0\xaf\"", "Invalid encoding in string", 1, 2},
        Rejected{"utf8_encoded_surrogate", "\"\xed\xa0\x80\"", "Invalid encoding in string", 1, 2},
        Rejected{"lone_high_surrogate", "\"\\ud800\"", "surrogate pair in string is invalid", 1, 2},
        Rejected{"high_surrogate_then_text", "\"\\ud800x\"", "surrogate pair in string is invalid", 1, 2},
        Rejected{"lone_low_surrogate", "{\"a\":\"\\udc00\"}", "surrogate pair in string is invalid", 1, 6},
        Rejected{"lone_low_surrogate_in_key", "{\"\\udfff\":1}", "surrogate pair in string is invalid", 1, 2},
        Rejected{"number_too_big", "1e999", "Number too big", 1, 1}, Rejected{"nan", "NaN", "Invalid value", 1, 1},
        Rejected{"infinity", "[Infinity]", "Invalid value", 1, 2},
        Rejected{"minus_infinity", "-Infinity", "Invalid value", 1, 2},
        Rejected{"trailing_garbage", "{} x", "root must not be followed by other values", 1, 4},
        Rejected{"two_documents", "{}\n{}", "root must not be followed by other values", 2, 1},
        Rejected{"nul_after_document", "null\0xx"s, "root must not be followed by other values", 1, 5},
        Rejected{"nul_in_string", "\"a\0b\""s, "Missing a closing quotation mark", 1, 3},
        Rejected{"trailing_comma_array", "[1,]", "Invalid value", 1, 4},
        Rejected{"trailing_comma_object", "{\"a\":1,}", "Missing a name for object member", 1, 8},
        Rejected{"comment", "{} // no", "root must not be followed", 1, 4},
        Rejected{"byte_order_mark", "\xef\xbb\xbf{}", "Invalid value", 1, 1},
        Rejected{"single_quotes", "{'a':1}", "Missing a name for object member", 1, 2},
        Rejected{"unterminated", "{\"a\":", "Invalid value", 1, 6},
        Rejected{"error_on_later_line", "{\n  \"a\": 1,\n  \"b\": tru\n}", "Invalid value", 3, 11},
        Rejected{"duplicate_top_level", "{\n  \"a\": 1,\n  \"a\": 2\n}", "duplicate key \"a\" in the top-level object",
                 3, 3},
        Rejected{"duplicate_nested",
                 R"({"spec":{"template":{"spec":{"domain":{"cpu":{"cores":1,"sockets":1,"cores":2}}}}}})",
                 R"(duplicate key "cores" in object at spec.template.spec.domain.cpu)", 1, 69},
        Rejected{"duplicate_in_array_element", R"({"a":[{},{"x":1,"x":2}]})", R"(duplicate key "x" in object at a[1])",
                 1, 17},
        Rejected{"duplicate_in_nested_arrays", R"([[1],[2,{"k":{"y":0,"y":0}}]])",
                 R"(duplicate key "y" in object at [1][1].k)", 1, 21},
        Rejected{"duplicate_under_dotted_key", R"({"metadata":{"annotations":{"kubevirt.io/x":{"k":1,"k":2}}}})",
                 R"(duplicate key "k" in object at metadata.annotations[kubevirt.io/x])", 1, 52},
        Rejected{"duplicate_annotation", R"({"metadata":{"annotations":{"kubevirt.io/a":"1","kubevirt.io/a":"2"}}})",
                 R"(duplicate key "kubevirt.io/a" in object at metadata.annotations)", 1, 49},
        Rejected{"duplicate_escaped_key", R"({"a\"b":1,"a\"b":2})", R"(duplicate key "a\"b" in the top-level object)",
                 1, 11},
        Rejected{"duplicate_backslash_key", R"({"\\":1,"\\":2})", R"(duplicate key "\\")", 1, 9},
        Rejected{"duplicate_spelled_differently", R"({"a":1,"\u0061":2})", R"(duplicate key "a")", 1, 8}),
    [](const ::testing::TestParamInfo<Rejected>& test) { return test.param.name; });

TEST(JsonDecodeNumbers, IntegerBeyondUint64BecomesDouble) {
  auto parsed = parse_json("18446744073709551616");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_TRUE(parsed->IsDouble());
  EXPECT_EQ(parsed->GetDouble(), 18446744073709551616.0);
}

TEST(JsonDecodeNumbers, FullPrecisionDoubles) {
  // Without kParseFullPrecisionFlag RapidJSON 1.1.0 may be off in the last bit here.
  auto parsed = parse_json("[0.1, 2.2250738585072014e-308, 1.7976931348623157e308, 9007199254740993]");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ((*parsed)[0].GetDouble(), 0.1);
  EXPECT_EQ((*parsed)[1].GetDouble(), 2.2250738585072014e-308);
  EXPECT_EQ((*parsed)[2].GetDouble(), 1.7976931348623157e308);
  EXPECT_EQ((*parsed)[3].GetUint64(), 9007199254740993U);
}

TEST(JsonDecodeNumbers, InputsThatBrokeRapidJsonsStrtod) {
  // RapidJSON 1.1.0's full-precision strtod: clz(0) on "0E0090", an index below its power
  // table on "g" (both found by launcher_fuzz); vmgate converts numbers with std::from_chars.
  const std::string text =
      R"({"a": 0E0090, "b": -0.00e+300, "c": "0E0090", "d": 10E2, "e\"0e9": [0e-5], "f": 1e-400, "g": 2.0022333393333333333337000000000000000000000000000000330e-333})";
  for (int in_place = 0; in_place < 2; ++in_place) {
    std::string storage;
    auto parsed = in_place != 0 ? parse_json_in_place(text, storage) : parse_json(text);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ((*parsed)["a"].GetDouble(), 0.0);
    EXPECT_TRUE(std::signbit((*parsed)["b"].GetDouble()));
    EXPECT_EQ((*parsed)["b"].GetDouble(), 0.0);
    EXPECT_STREQ((*parsed)["c"].GetString(), "0E0090");
    EXPECT_EQ((*parsed)["d"].GetDouble(), 1000.0);
    EXPECT_EQ((*parsed)["e\"0e9"][0].GetDouble(), 0.0);
    EXPECT_EQ((*parsed)["f"].GetDouble(), 0.0);  // below the range: zero, as RapidJSON and Go
    EXPECT_EQ((*parsed)["g"].GetDouble(), 0.0);
  }
  auto too_big = parse_json("[1, 9.9e308]");
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.error().message, "Number too big to be stored in double (line 1, column 5)");
  // Positions in errors are the input's.
  auto broken = parse_json("[0E99, x]");
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().column, 8U);
}

TEST(JsonDecodeDepth, ExactlyTheLimitParses) {
  const std::string text = std::string(1000, '[') + std::string(1000, ']');
  auto parsed = parse_json(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(check_structure(*parsed), std::nullopt);
}

TEST(JsonDecodeDepth, OneBeyondTheLimitIsRejectedAtTheBracket) {
  const std::string text = std::string(1001, '[') + std::string(1001, ']');
  auto parsed = parse_json(text);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "nesting deeper than 1000 levels (line 1, column 1001)");
  EXPECT_EQ(parsed.error().line, 1U);
  EXPECT_EQ(parsed.error().column, 1001U);
}

// The parse must stop at level 1001, not build 100 000 levels first (nor recurse).
void expect_rejected_quickly(const std::string& text, std::size_t column) {
  const auto start = std::chrono::steady_clock::now();
  auto parsed = parse_json(text);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("nesting deeper than 1000 levels"), std::string::npos)
      << parsed.error().message;
  EXPECT_EQ(parsed.error().line, 1U);
  EXPECT_EQ(parsed.error().column, column);
  // Generous: the work is about a thousand SAX events; only a parse of the whole input (or a
  // quadratic scan) would come near this on a loaded machine.
  EXPECT_LT(elapsed, std::chrono::seconds(2));
}

TEST(JsonDecodeDepth, HundredThousandArraysRejectedQuickly) {
  expect_rejected_quickly(std::string(100000, '['), 1001);
}

TEST(JsonDecodeDepth, HundredThousandObjectsRejectedQuickly) {
  std::string text;
  for (int i = 0; i < 100000; ++i) {
    text += "{\"a\":";
  }
  expect_rejected_quickly(text, 5001);  // 1000 × 5 bytes, then the 1001st '{'
}

TEST(JsonDecodeDepth, CustomLimitAndMixedContainers) {
  const DecodeLimits limits{3};
  EXPECT_TRUE(parse_json(R"({"a":[{"b":1}]})", limits).ok());
  auto parsed = parse_json("{\"a\":[{\"b\":[]}]}", limits);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "nesting deeper than 3 levels (line 1, column 12)");
  EXPECT_TRUE(parse_json("1", DecodeLimits{0}).ok());
  EXPECT_FALSE(parse_json("[]", DecodeLimits{0}).ok());
}

TEST(JsonDecodeStrings, TenMegabyteStringParses) {
  const std::string body(10U * 1024U * 1024U, 'x');
  auto parsed = parse_json("{\"data\":\"" + body + "\"}");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Value* data = find(*parsed, "data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(as_view(*data).size(), body.size());
}

TEST(JsonDecodeStrings, InvalidByteAfterTenMegabytesHasItsColumn) {
  const std::string body(10U * 1024U * 1024U, 'x');
  auto parsed = parse_json("\n\"" + body + "\xff\"");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().line, 2U);
  EXPECT_EQ(parsed.error().column, body.size() + 2);
}

// parse_json_in_place scans strings 16 bytes at a time with a scan of vmgate's own; which bytes end
// a run, and so what is accepted, refused and where, must stay RapidJSON 1.1.0's own in-situ
// parse's (including its SIMD loop's 0x19 for control characters past the first 16-byte
// boundary). Compared here with RapidJSON's ParseInsitu over a buffer allocated the same way, for
// escapes and control characters at every offset from that boundary, alone and after an escape
// (when the run is moved down rather than skipped).
// The in-place scan (16 bytes at a time) against parse_json's byte-by-byte reading of the same
// text (what `vmgate check` runs): the same documents, the same refusals at the same columns, at
// every alignment; every control character is refused (RapidJSON 1.1.0's own SIMD scan let
// 0x1A..0x1F through past a string's first 16-byte boundary).
TEST(JsonDecodeStrings, InPlaceScanRefusesEveryControlCharacter) {
  const std::vector<std::string> specials = {
      "", "\\n", "\\\"", "\\u0041", "\x01", "\x19", "\x1a", "\x1f", "\x7f", "\xc3\xa9", std::string(1, '\0'), "\\/"};
  const std::vector<std::size_t> runs = {0, 1, 14, 15, 16, 17, 40};
  std::size_t refused = 0;
  for (std::size_t shift = 0; shift < 32; ++shift) {
    for (const std::string& first : specials) {
      for (const std::size_t run : runs) {
        for (const std::string& second : specials) {
          const std::string text =
              "[\"" + std::string(shift, 'a') + first + std::string(run, 'b') + second + "c\",\"d\"]";
          std::string storage;
          auto parsed = parse_json_in_place(text, storage);
          auto reference = parse_json(text);
          const std::string where =
              "shift " + std::to_string(shift) + ", run " + std::to_string(run) + ": " +
              dump(Value(rapidjson::StringRef(text.data(), static_cast<rapidjson::SizeType>(text.size()))));
          ASSERT_EQ(parsed.ok(), reference.ok()) << where;
          const bool control = (!first.empty() && static_cast<unsigned char>(first[0]) < 0x20) ||
                               (!second.empty() && static_cast<unsigned char>(second[0]) < 0x20);
          EXPECT_EQ(parsed.ok(), !control) << where;
          if (parsed.ok()) {
            EXPECT_EQ(dump(*parsed), dump(*reference)) << where;
          } else {
            ++refused;
            EXPECT_EQ(parsed.error().column, reference.error().column) << where << ": " << parsed.error().message;
            EXPECT_EQ(parsed.error().message, reference.error().message) << where;
          }
        }
      }
    }
  }
  EXPECT_GT(refused, 0U);
}

// check_structure: documents built without parse_json (YAML conversion).

TEST(JsonDecodeStructure, AcceptsOrdinaryDocuments) {
  for (const char* text : {"null", "1", "[]", "{}", R"({"a":[{"a":1},{"a":2}],"b":{"a":{}}})"}) {
    EXPECT_EQ(check_structure(vmgate::testing::parse(text)), std::nullopt) << text;
  }
}

// Builds {"spec":{"list":[{}, {<keys>}]}} through the DOM API, which allows duplicate keys.
Document with_keys(const std::vector<std::string>& keys) {
  Document document(rapidjson::kObjectType);
  Allocator& allocator = document.GetAllocator();
  Value element(rapidjson::kObjectType);
  for (const std::string& key : keys) {
    element.AddMember(make_string(key, allocator), Value(1), allocator);
  }
  Value list(rapidjson::kArrayType);
  list.PushBack(Value(rapidjson::kObjectType), allocator);
  list.PushBack(element, allocator);
  Value spec(rapidjson::kObjectType);
  spec.AddMember("list", list, allocator);
  document.AddMember("spec", spec, allocator);
  return document;
}

TEST(JsonDecodeStructure, ReportsDuplicateKeyWithPath) {
  auto error = check_structure(with_keys({"a", "b", "a"}));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, R"(duplicate key "a" in object at spec.list[1])");
  EXPECT_EQ(error->line, 0U);
  EXPECT_EQ(error->column, 0U);
}

TEST(JsonDecodeStructure, ReportsDuplicateKeyInLargeObject) {
  std::vector<std::string> keys;
  for (int i = 0; i < 100; ++i) {
    keys.push_back("k" + std::to_string(i));
  }
  keys.emplace_back("k57");
  auto error = check_structure(with_keys(keys));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, R"(duplicate key "k57" in object at spec.list[1])");
}

TEST(JsonDecodeStructure, ReportsDuplicateAtTopLevel) {
  Document document(rapidjson::kObjectType);
  document.AddMember("x", 1, document.GetAllocator());
  document.AddMember("x", 2, document.GetAllocator());
  auto error = check_structure(document);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, R"(duplicate key "x" in the top-level object)");
}

// Nested `depth` levels deep through the DOM API, with no recursion in building or freeing
// (the pool allocator frees without visiting values).
Document nested(std::size_t depth, bool objects) {
  Document document;
  Allocator& allocator = document.GetAllocator();
  Value inner(objects ? rapidjson::kObjectType : rapidjson::kArrayType);
  for (std::size_t level = 1; level < depth; ++level) {
    Value outer(objects ? rapidjson::kObjectType : rapidjson::kArrayType);
    if (objects) {
      outer.AddMember("a", inner, allocator);
    } else {
      outer.PushBack(inner, allocator);
    }
    inner = std::move(outer);
  }
  static_cast<Value&>(document) = std::move(inner);
  return document;
}

TEST(JsonDecodeStructure, DepthLimit) {
  EXPECT_EQ(check_structure(nested(1000, false)), std::nullopt);
  EXPECT_EQ(check_structure(nested(1000, true)), std::nullopt);
  for (bool objects : {false, true}) {
    auto error = check_structure(nested(100000, objects));
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->message, "nesting deeper than 1000 levels");
  }
  auto error = check_structure(nested(5, true), DecodeLimits{4});
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->message, "nesting deeper than 4 levels");
}

}  // namespace
}  // namespace vmgate::json
