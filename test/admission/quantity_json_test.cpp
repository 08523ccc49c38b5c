// Tests of admission/src/quantity_json.cpp: quantities as JSON strings or numbers.
#include <gtest/gtest.h>

#include "support/json_test_support.hpp"
#include "vmgate/admission/quantity_json.hpp"

namespace vmgate::admission {
namespace {

using vmgate::testing::parse;

TEST(QuantityJson, StringsAndNumbersParse) {
  const json::Document doc = parse(R"({"s":"1Gi","i":1073741824,"f":0.5,"bad":"1.5.5Gi","b":true,"n":null})");
  EXPECT_EQ(quantity_at(doc, "s")->value().value(), 1073741824);
  EXPECT_EQ(quantity_at(doc, "i")->value().value(), 1073741824);
  EXPECT_EQ(quantity_at(doc, "f")->to_string(), "500m");
  EXPECT_FALSE(quantity_at(doc, "bad").has_value());
  EXPECT_FALSE(quantity_at(doc, "b").has_value());
  EXPECT_FALSE(quantity_at(doc, "n").has_value());
  EXPECT_FALSE(quantity_at(doc, "absent").has_value());
  Result<Quantity> boolean = parse_quantity(*json::find(doc, "b"));
  ASSERT_FALSE(boolean.ok());
  EXPECT_EQ(boolean.error().message,
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

TEST(QuantityJson, ResourceQuantityReadsDomainResourceLists) {
  const json::Document domain = parse(R"({"resources":{"requests":{"memory":"64Mi"},"limits":{"cpu":2}}})");
  EXPECT_EQ(resource_quantity(domain, "requests", "memory")->to_string(), "64Mi");
  EXPECT_EQ(resource_quantity(domain, "limits", "cpu")->value().value(), 2);
  EXPECT_FALSE(resource_quantity(domain, "limits", "memory").has_value());
}

TEST(QuantityJson, QuantityTextShowsWhatTheUserWrote) {
  const json::Document doc = parse(R"({"s":"0.5Gi","i":3})");
  EXPECT_EQ(quantity_text(json::find(doc, "s")), "0.5Gi");
  EXPECT_EQ(quantity_text(json::find(doc, "i")), "3");
  EXPECT_EQ(quantity_text(nullptr), "");
}

}  // namespace
}  // namespace vmgate::admission
