// Tests of vmi-create-admitter.go validateLiveMigration: the four eviction strategies.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

TEST(ValidationEvictionStrategy, KnownStrategiesOnly) {
  for (const char* strategy : {"LiveMigrate", "LiveMigrateIfPossible", "None", "External"}) {
    EXPECT_EQ(describe(validate_eviction_strategy(parse(std::string(R"({"evictionStrategy": ")") + strategy + "\"}"),
                                                  FieldPath("spec"))),
              "")
        << strategy;
  }
  EXPECT_EQ(describe(validate_eviction_strategy(parse("{}"), FieldPath("spec"))), "");
  EXPECT_EQ(describe(validate_eviction_strategy(parse(R"({"evictionStrategy": "Sometimes"})"),
                                                FieldPath("spec.template.spec"))),
            "FieldValueInvalid spec.template.spec.evictionStrategy: spec.template.spec.evictionStrategy is set with an "
            "unrecognized option: Sometimes\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
