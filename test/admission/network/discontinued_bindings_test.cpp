// Tests of pkg/network/admitter/discontinued.go validateDiscontinuedBindings.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

TEST(ValidationDiscontinuedBindings, SlirpPasstMacvtap) {
  const json::Document spec = parse(R"({"domain": {"devices": {"interfaces": [
      {"name": "a", "masquerade": {}}, {"name": "b", "slirp": {}}, {"name": "c", "passt": {}},
      {"name": "d", "macvtap": {}}]}}})");
  EXPECT_EQ(describe(validate_discontinued_bindings(spec, FieldPath("spec"))),
            "FieldValueInvalid spec.domain.devices.interfaces[1].slirp: Slirp interface support has been "
            "discontinued since v1.3\n"
            "FieldValueInvalid spec.domain.devices.interfaces[2].passt: Passt network binding has been discontinued "
            "since v1.3\n"
            "FieldValueInvalid spec.domain.devices.interfaces[3].macvtap: Macvtap network binding has been "
            "discontinued since v1.3\n");
  // v1.7.0: only slirp (validateCreationSlirpBinding); passt and macvtap are binding methods there.
  EXPECT_EQ(describe(validate_discontinued_bindings(spec, FieldPath("spec"), Release::v1_7)),
            "FieldValueInvalid spec.domain.devices.interfaces[1].slirp: Slirp interface support has been "
            "discontinued since v1.3\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
