// Tests of equality.Semantic.DeepEqual as vmgate reproduces it on decoded JSON.
#include "vmgate/admission/semantic_equal.hpp"

#include <gtest/gtest.h>

#include "support/json_test_support.hpp"

namespace vmgate::admission {
namespace {

using testing::parse;

bool equal(std::string_view a, std::string_view b) {
  return semantically_equal(parse(a), parse(b));
}

TEST(SemanticEqual, ZeroValuesEqualAbsentMembers) {
  EXPECT_TRUE(equal(R"({"a": 1, "b": false, "c": "", "d": 0, "e": null, "f": []})", R"({"a": 1})"));
  EXPECT_TRUE(equal(R"({"a": {"x": false}})", R"({"a": {}})"));
  EXPECT_FALSE(equal(R"({"a": {}})", R"({})"));  // a set pointer
  EXPECT_FALSE(equal(R"({"a": 1})", R"({"a": 2})"));
  EXPECT_FALSE(equal(R"({"a": true})", R"({})"));
}

TEST(SemanticEqual, QuantitiesByValue) {
  EXPECT_TRUE(equal(R"({"memory": "1Gi"})", R"({"memory": "1024Mi"})"));
  EXPECT_TRUE(equal(R"(["500m"])", R"(["0.5"])"));
  EXPECT_FALSE(equal(R"({"memory": "1Gi"})", R"({"memory": "1G"})"));
  EXPECT_FALSE(equal(R"({"image": "fedora:41"})", R"({"image": "fedora:40"})"));
}

TEST(SemanticEqual, ListsInOrder) {
  EXPECT_TRUE(equal(R"([{"a": 1}, {"b": 2}])", R"([{"a": 1}, {"b": 2, "c": ""}])"));
  EXPECT_FALSE(equal(R"([{"a": 1}, {"b": 2}])", R"([{"b": 2}, {"a": 1}])"));
  EXPECT_FALSE(equal(R"([1])", R"([1, 2])"));
}

}  // namespace
}  // namespace vmgate::admission
