#include "vmgate/kube/yaml_json.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "support/json_test_support.hpp"

namespace vmgate::kube {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

// The documents as "doc1 | doc2 | ..." (compact JSON), or "L:C: message" for an error.
std::string convert(std::string_view text, const YamlLimits& limits = {}) {
  Result<std::vector<YamlDocument>, YamlError> documents = yaml_to_json(text, limits);
  if (!documents) {
    const YamlError& e = documents.error();
    return std::to_string(e.line) + ":" + std::to_string(e.column) + ": " + e.message;
  }
  std::string out;
  for (const YamlDocument& d : *documents) {
    out += out.empty() ? "" : " | ";
    out += dump(*d.document);
  }
  return out;
}

struct Case {
  std::string name;
  std::string yaml;
  std::string expected;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

class YamlToJson : public ::testing::TestWithParam<Case> {};

TEST_P(YamlToJson, Converts) {
  EXPECT_EQ(convert(GetParam().yaml), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    Typing, YamlToJson,
    ::testing::Values(
        Case{"yes_is_true", "a: yes", R"({"a":true})"}, Case{"quoted_yes_is_string", "a: \"yes\"", R"({"a":"yes"})"},
        Case{"single_quoted", "a: 'no'", R"({"a":"no"})"}, Case{"hex", "a: 0x1f", R"({"a":31})"},
        Case{"octal", "a: 010", R"({"a":8})"}, Case{"exponent_is_integral", "a: 1e3", R"({"a":1000})"},
        Case{"fraction", "a: 1.5", R"({"a":1.5})"}, Case{"tilde", "a: ~", R"({"a":null})"},
        Case{"empty_value", "a:", R"({"a":null})"}, Case{"str_tag", "a: !!str 010", R"({"a":"010"})"},
        Case{"int_tag_quoted", "a: !!int \"12\"", R"({"a":12})"}, Case{"float_tag", "a: !!float 2", R"({"a":2})"},
        Case{"bool_tag", "a: !!bool off", R"({"a":false})"}, Case{"null_tag", "a: !!null ''", R"({"a":null})"},
        Case{"empty_str_tag", "a: !!str", R"({"a":""})"},
        Case{"uint64", "a: 18446744073709551615", R"({"a":18446744073709551615})"},
        Case{"quantities_stay_strings", "memory: 1Gi\ncpu: 500m", R"({"memory":"1Gi","cpu":"500m"})"},
        Case{"block_scalar", "a: |\n  x\n  y\n", R"({"a":"x\ny\n"})"},
        Case{"unicode", "a: \"\\u00e9\\U0001F600\"", R"({"a":"é😀"})"}));

INSTANTIATE_TEST_SUITE_P(
    Keys, YamlToJson,
    ::testing::Values(Case{"order_kept", "z: 1\na: 2\nm: 3", R"({"z":1,"a":2,"m":3})"},
                      Case{"int_key", "1: a", R"({"1":"a"})"}, Case{"octal_key", "010: a", R"({"8":"a"})"},
                      Case{"bool_key", "on: a\nn: b", R"({"true":"a","false":"b"})"},
                      Case{"y_and_on_are_the_same_key", "y: a\non: b", "2:1: duplicate key \"true\""},
                      Case{"float_key", "1.5: a\n1e6: b", R"({"1.5":"a","1e+06":"b"})"},
                      Case{"quoted_key", "\"on\": a", R"({"on":"a"})"}));

INSTANTIATE_TEST_SUITE_P(
    Structure, YamlToJson,
    ::testing::Values(Case{"multi_document", "a: 1\n---\nb: 2\n", R"({"a":1} | {"b":2})"},
                      Case{"empty_documents_are_null", "---\n---\na: 1\n", R"(null | {"a":1})"},
                      Case{"no_document", "# only a comment\n", ""},
                      Case{"flow", "{a: [1, {b: c}], d: []}", R"({"a":[1,{"b":"c"}],"d":[]})"},
                      Case{"anchor_and_alias", "a: &x {k: v}\nb: *x\nc: &s str\nd: *s",
                           R"({"a":{"k":"v"},"b":{"k":"v"},"c":"str","d":"str"})"},
                      Case{"alias_as_key", "a: &k key\n*k : v", R"({"a":"key","key":"v"})"},
                      Case{"merge", "base: &b {x: 1, p: 2}\nd:\n  <<: *b\n  p: 3\n  z: 4",
                           R"({"base":{"x":1,"p":2},"d":{"x":1,"p":3,"z":4}})"},
                      Case{"merge_after_keys_does_not_override", "b: &b {x: 1, p: 2}\nd:\n  p: 3\n  <<: *b",
                           R"({"b":{"x":1,"p":2},"d":{"p":3,"x":1}})"},
                      Case{"merge_sequence_earlier_wins", "a: &a {x: 1}\nb: &b {x: 2, p: 2}\nd:\n  <<: [*a, *b]",
                           R"({"a":{"x":1},"b":{"x":2,"p":2},"d":{"x":1,"p":2}})"},
                      Case{"quoted_merge_key_is_a_key", "\"<<\": 1", R"({"<<":1})"},
                      Case{"utf16_bom",
                           std::string("\xFF\xFE"
                                       "a\0:\0 \0b\0",
                                       10),
                           R"({"a":"b"})"}));

INSTANTIATE_TEST_SUITE_P(
    Errors, YamlToJson,
    ::testing::Values(Case{"duplicate_key", "a: 1\nb: 2\na: 3\n", "3:1: duplicate key \"a\""},
                      Case{"duplicate_nested_key", "spec:\n  cpu:\n    cores: 1\n    cores: 2\n",
                           "4:5: duplicate key \"cores\""},
                      Case{"duplicate_after_key_conversion", "1: a\n\"1\": b", "2:1: duplicate key \"1\""},
                      Case{"mapping_key", "? {a: 1}\n: v", "1:3: a map key is a mapping; keys must be scalars"},
                      Case{"sequence_key", "{[1]: 2}", "1:2: a map key is a sequence; keys must be scalars"},
                      Case{"null_key", "~: 1", "1:1: a map key is null; keys must be strings, numbers or booleans"},
                      Case{"inf", "a: 1\nb: .inf", "2:4: infinity cannot be represented in JSON"},
                      Case{"nan", "a: [.nan]", "1:5: NaN cannot be represented in JSON"},
                      Case{"bad_tag", "a: !!int x", "1:4: cannot decode !!str `x` as a !!int"},
                      Case{"syntax", "a: 1\nb: [1, 2\nc: 3\n", "3:2: end of sequence flow not found"},
                      Case{"bad_indentation", "a:\n  b: 1\n c: 2\n", "3:2: end of map not found"},
                      Case{"unknown_anchor", "a: *nope", "1:4: the referenced anchor is not defined"},
                      Case{"merge_of_scalar", "a:\n  <<: 1",
                           "2:7: the value of a merge key (<<) must be a mapping or a sequence of mappings"},
                      Case{"invalid_utf8", "a: ok\nb: \"x\xC3\x28\"\n", "2:6: invalid UTF-8"},
                      Case{"binary_not_utf8", "a: !!binary /w==", "1:4: invalid UTF-8 in a string"},
                      Case{"overlong_utf8", "a: \xC0\xAF", "1:4: invalid UTF-8"},
                      Case{"surrogate_escape", "a: \"\\ud800\"", "1:11: invalid unicode: 55296"}));

TEST(YamlToJson, DocumentPositions) {
  auto documents = yaml_to_json("a: 1\n---\n\n  b: 2\n");
  ASSERT_TRUE(documents.ok());
  ASSERT_EQ(documents->size(), 2U);
  EXPECT_EQ((*documents)[0].line, 1U);
  EXPECT_EQ((*documents)[1].line, 4U);
  EXPECT_EQ((*documents)[1].column, 3U);
}

TEST(YamlToJson, IntegersBeyondUint64BecomeFloats) {
  auto documents = yaml_to_json("a: 100000000000000000000000");  // as go-yaml v2 does
  ASSERT_TRUE(documents.ok());
  const json::Value* a = json::find(*(*documents)[0].document, "a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->IsDouble());
  EXPECT_EQ(a->GetDouble(), 1e23);
}

TEST(YamlToJson, DeepFlowNestingIsAnErrorNotACrash) {
  const std::string deep = "a: " + std::string(100000, '[') + std::string(100000, ']');
  const std::string result = convert(deep);
  EXPECT_NE(result.find("nesting too deep"), std::string::npos) << result;
}

TEST(YamlToJson, DeepBlockNestingIsAnErrorNotACrash) {
  std::string deep;
  for (std::size_t i = 0; i < 100000; ++i) {
    deep += "- ";
  }
  deep += "x\n";
  const std::string result = convert(deep);
  EXPECT_NE(result.find("nesting too deep"), std::string::npos) << result.substr(0, 200);
}

TEST(YamlToJson, UnclosedDeepFlowIsAnErrorNotACrash) {
  const std::string result = convert(std::string(100000, '{'));
  EXPECT_NE(result.find(": "), std::string::npos);
  EXPECT_EQ(result.find('{'), std::string::npos) << result.substr(0, 200);
}

TEST(YamlToJson, ModerateNestingIsFine) {
  const std::string nested = std::string(200, '[') + std::string(200, ']');
  const std::string result = convert(nested);
  EXPECT_EQ(result, nested);
}

TEST(YamlToJson, AliasesCannotExceedTheDepthLimit) {
  // Each anchor nests the previous one 300 levels deeper: 4 of them reach 1200 > 1000.
  std::string yaml;
  for (int i = 0; i < 4; ++i) {
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " " + std::string(300, '[');
    if (i > 0) {
      yaml += "*a" + std::to_string(i - 1);
    }
    yaml += std::string(300, ']') + "\n";
  }
  const std::string result = convert(yaml);
  EXPECT_NE(result.find("nesting deeper than 1000 levels"), std::string::npos) << result.substr(0, 200);
}

TEST(YamlToJson, TenMegabyteString) {
  const std::string big(10U << 20U, 'x');
  auto documents = yaml_to_json("data: \"" + big + "\"\n");
  ASSERT_TRUE(documents.ok()) << documents.error().message;
  const json::Value* data = json::find(*(*documents)[0].document, "data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->GetStringLength(), big.size());
}

TEST(YamlToJson, AliasBombIsStopped) {
  // "Billion laughs": 9 levels of 10 aliases each would expand to 10^9 strings.
  std::string yaml =
      "a0: &a0 [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n";
  for (int i = 1; i < 10; ++i) {
    const std::string previous = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) {
      yaml += (k == 0 ? "" : ", ") + previous;
    }
    yaml += "]\n";
  }
  const std::string result = convert(yaml);
  EXPECT_NE(result.find("document larger than 64 MiB once aliases are expanded"), std::string::npos) << result;
}

TEST(YamlToJson, SizeLimitIsConfigurable) {
  YamlLimits limits;
  limits.max_document_bytes = 100;
  EXPECT_NE(convert("a: " + std::string(200, 'x'), limits).find("document larger than"), std::string::npos);
}

TEST(YamlToJson, RecursiveAliasIsRejected) {
  const std::string result = convert("a: &x [1, *x]");
  EXPECT_NE(result.find("1:"), std::string::npos);
  EXPECT_EQ(result.find('{'), std::string::npos) << result;
}

// json_to_yaml must write what yaml_to_json reads back as the same value.
void expect_round_trip(const json::Value& value) {
  Result<std::string> yaml = json_to_yaml(value);
  ASSERT_TRUE(yaml.ok()) << yaml.error().message;
  auto back = yaml_to_json(*yaml);
  ASSERT_TRUE(back.ok()) << back.error().message << "\n" << *yaml;
  ASSERT_EQ(back->size(), 1U) << *yaml;
  EXPECT_TRUE(json::equal(*(*back)[0].document, value)) << *yaml << "\nread back as " << dump(*(*back)[0].document);
}

TEST(JsonToYaml, QuotesStringsThatWouldBeMisread) {
  const json::Document doc = parse(R"({"t":"true","one":"1","empty":"","null":"null","exp":"1e3","yes":"yes",
      "tilde":"~","hex":"0x1f","octal":"010","inf":".inf","merge":"<<","y":"y","Off":"Off","neg":"-1",
      "plain":"u1.medium","space":" lead","colon":"a: b","hash":"a #b","dash":"- x","quote":"'\"",
      "multi":"line1\nline2\n","tab":"a\tb","ctl":"\u0001\u007f","nel":"a\u0085b","ls":"a\u2028b",
      "bom":"\ufeffx","nonascii":"é😀","yes_key":{"on":1,"1":2,"":3,"null":4,"<<":5}})");
  expect_round_trip(doc);
  Result<std::string> yaml = json_to_yaml(doc);
  ASSERT_TRUE(yaml.ok());
  EXPECT_NE(yaml->find("t: \"true\""), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("one: \"1\""), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("empty: \"\""), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("plain: u1.medium"), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("\"on\": 1"), std::string::npos) << *yaml;
}

TEST(JsonToYaml, NumbersBooleansNullsAndContainers) {
  const json::Document doc = parse(R"({"i":-5,"big":18446744073709551615,"f":1.5,"tenth":0.1,"fint":1000.0,
      "huge":1e300,"tiny":-2.5e-300,"b":true,"f2":false,"n":null,"ea":[],"eo":{},
      "nested":[[1,[2,[]]],{"a":{"b":[{}]}}],"list":[1,"x",null,true]})");
  expect_round_trip(doc);
  Result<std::string> yaml = json_to_yaml(doc);
  ASSERT_TRUE(yaml.ok());
  EXPECT_NE(yaml->find("ea: []"), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("eo: {}"), std::string::npos) << *yaml;
  EXPECT_NE(yaml->find("\"n\": ~"), std::string::npos) << *yaml;  // n is false in YAML 1.1
  EXPECT_NE(yaml->find("f: 1.5"), std::string::npos) << *yaml;
}

TEST(JsonToYaml, TopLevelScalarsAndLongKeys) {
  expect_round_trip(parse(R"("yes")"));
  expect_round_trip(parse("42"));
  expect_round_trip(parse("[]"));
  json::Document doc;
  doc.SetObject();
  doc.AddMember(json::make_string(std::string(2000, 'k'), doc.GetAllocator()), json::Value(1), doc.GetAllocator());
  expect_round_trip(doc);
}

TEST(JsonToYaml, DeepValuesDoNotRecurse) {
  const std::string nested = std::string(400, '[') + std::string(400, ']');
  expect_round_trip(parse(nested));
}

}  // namespace
}  // namespace vmgate::kube
