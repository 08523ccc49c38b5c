#include "support/json_pointer.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "support/json_test_support.hpp"

namespace vmgate::json {
namespace {

using vmgate::testing::append_token;
using vmgate::testing::dump;
using vmgate::testing::escape_token;
using vmgate::testing::parse;
using vmgate::testing::parse_index;
using vmgate::testing::resolve;
using vmgate::testing::split_pointer;

TEST(JsonPointerEscape, EscapesTildeBeforeSlash) {
  EXPECT_EQ(escape_token(""), "");
  EXPECT_EQ(escape_token("plain"), "plain");
  EXPECT_EQ(escape_token("a/b"), "a~1b");
  EXPECT_EQ(escape_token("m~n"), "m~0n");
  EXPECT_EQ(escape_token("~1"), "~01");  // not "~1" twice unescaped into "/"
  EXPECT_EQ(escape_token("/~/"), "~1~0~1");
  EXPECT_EQ(escape_token("kubevirt.io/pci-topology-version"), "kubevirt.io~1pci-topology-version");
}

TEST(JsonPointerEscape, AppendToken) {
  EXPECT_EQ(append_token("", "metadata"), "/metadata");
  EXPECT_EQ(append_token("/metadata/annotations", "kubevirt.io/latest-observed-api-version"),
            "/metadata/annotations/kubevirt.io~1latest-observed-api-version");
  EXPECT_EQ(append_token("/a", ""), "/a/");
  EXPECT_EQ(append_token("/list", "0"), "/list/0");
}

struct SplitCase {
  std::string pointer;
  std::vector<std::string> tokens;
};

void PrintTo(const SplitCase& c, std::ostream* out) {
  *out << c.pointer;
}

class JsonPointerSplit : public ::testing::TestWithParam<SplitCase> {};

TEST_P(JsonPointerSplit, Tokens) {
  auto tokens = split_pointer(GetParam().pointer);
  ASSERT_TRUE(tokens.ok()) << tokens.error().message;
  EXPECT_EQ(*tokens, GetParam().tokens);
}

INSTANTIATE_TEST_SUITE_P(JsonPointer, JsonPointerSplit,
                         ::testing::Values(SplitCase{"", {}}, SplitCase{"/", {""}}, SplitCase{"/foo", {"foo"}},
                                           SplitCase{"/foo/0", {"foo", "0"}}, SplitCase{"/a~1b", {"a/b"}},
                                           SplitCase{"/m~0n", {"m~n"}}, SplitCase{"/~01", {"~1"}},
                                           SplitCase{"/~10", {"/0"}}, SplitCase{"//", {"", ""}},
                                           SplitCase{"/a/", {"a", ""}}, SplitCase{"/ ", {" "}},
                                           SplitCase{"/c%d", {"c%d"}}));

TEST(JsonPointerSplitErrors, RejectsBadPointers) {
  struct Bad {
    std::string pointer;
    std::string message;
  };
  const std::string rule = " ('~' must be followed by '0' or '1')";
  const std::vector<Bad> cases = {
      {"foo", "JSON pointer \"foo\" must be empty or start with '/'"},
      {"#/foo", "JSON pointer \"#/foo\" must be empty or start with '/'"},
      {"/a~", "JSON pointer \"/a~\" has an invalid escape at offset 2" + rule},
      {"/a~2", "JSON pointer \"/a~2\" has an invalid escape at offset 2" + rule},
      {"/ok/~x", "JSON pointer \"/ok/~x\" has an invalid escape at offset 4" + rule},
  };
  for (const Bad& bad : cases) {
    auto tokens = split_pointer(bad.pointer);
    ASSERT_FALSE(tokens.ok()) << bad.pointer;
    EXPECT_EQ(tokens.error().message, bad.message);
  }
}

TEST(JsonPointerIndex, CanonicalDecimalOnly) {
  EXPECT_EQ(parse_index("0"), 0U);
  EXPECT_EQ(parse_index("7"), 7U);
  EXPECT_EQ(parse_index("1234"), 1234U);
  EXPECT_EQ(parse_index("18446744073709551615"), 18446744073709551615U);
  for (const char* bad : {"", "-", "00", "01", "+1", "-1", " 1", "1 ", "1a", "0x1", "18446744073709551616"}) {
    EXPECT_EQ(parse_index(bad), std::nullopt) << bad;
  }
}

// The example document of RFC 6901 section 5.
constexpr const char* kRfcDocument = R"({
  "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5,
  "k\"l": 6, " ": 7, "m~n": 8})";

struct ResolveCase {
  std::string pointer;
  std::string expected;  // compact JSON, or "" for nullptr
};

void PrintTo(const ResolveCase& c, std::ostream* out) {
  *out << c.pointer;
}

class JsonPointerResolve : public ::testing::TestWithParam<ResolveCase> {};

TEST_P(JsonPointerResolve, Finds) {
  const Document document = parse(kRfcDocument);
  const Value* found = resolve(document, GetParam().pointer);
  if (GetParam().expected.empty()) {
    EXPECT_EQ(found, nullptr) << dump(*found);
  } else {
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(dump(*found), GetParam().expected);
  }
}

INSTANTIATE_TEST_SUITE_P(
    JsonPointer, JsonPointerResolve,
    ::testing::Values(ResolveCase{"/foo", R"(["bar","baz"])"}, ResolveCase{"/foo/0", R"("bar")"},
                      ResolveCase{"/foo/1", R"("baz")"}, ResolveCase{"/", "0"}, ResolveCase{"/a~1b", "1"},
                      ResolveCase{"/c%d", "2"}, ResolveCase{"/e^f", "3"}, ResolveCase{"/g|h", "4"},
                      ResolveCase{"/i\\j", "5"}, ResolveCase{"/k\"l", "6"}, ResolveCase{"/ ", "7"},
                      ResolveCase{"/m~0n", "8"},
                      // absent or invalid
                      ResolveCase{"/foo/2", ""}, ResolveCase{"/foo/-", ""}, ResolveCase{"/foo/01", ""},
                      ResolveCase{"/foo/+1", ""}, ResolveCase{"/foo/bar", ""}, ResolveCase{"/foo/0/x", ""},
                      ResolveCase{"/missing", ""}, ResolveCase{"/a/b", ""}, ResolveCase{"/m~n", ""},
                      ResolveCase{"foo", ""}, ResolveCase{"/foo/99999999999999999999999", ""}));

TEST(JsonPointerResolveRoot, EmptyPointerIsTheWholeDocument) {
  const Document document = parse(kRfcDocument);
  EXPECT_EQ(resolve(document, ""), &static_cast<const Value&>(document));
  const Document scalar = parse("3");
  EXPECT_EQ(resolve(scalar, "/0"), nullptr);
}

TEST(JsonPointerRoundTrip, AppendThenSplit) {
  for (const char* key : {"a/b", "m~n", "~1", "~0/~1", "", "kubevirt.io/pci-topology-version"}) {
    auto tokens = split_pointer(append_token(append_token("", "x"), key));
    ASSERT_TRUE(tokens.ok());
    EXPECT_EQ(*tokens, (std::vector<std::string>{"x", key}));
  }
}

}  // namespace
}  // namespace vmgate::json
