// Tests of vmi-create-admitter.go validateVideoConfig.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

TEST(ValidationVideo, NotWithoutAGraphicsDevice) {
  const auto check = [](std::string_view devices) {
    return describe(
        validate_video(parse(R"({"domain": {"devices": )" + std::string(devices) + "}}"), FieldPath("spec"), {}));
  };
  EXPECT_EQ(check(R"({"video": {"type": "virtio"}})"), "");
  EXPECT_EQ(check(R"({"autoattachGraphicsDevice": false})"), "");
  EXPECT_EQ(check(R"({"video": {"type": "virtio"}, "autoattachGraphicsDevice": false})"),
            "FieldValueInvalid spec.video: Video configuration is not allowed when autoattachGraphicsDevice is set to "
            "false\n");
}

// VideoConfig is Beta at v1.8: without the gate its cause alone, with it as at main.
TEST(ValidationVideo, AtV18TheFeatureGateFirst) {
  ClusterConfig v18;
  v18.release = Release::v1_8;
  const json::Document spec =
      parse(R"({"domain": {"devices": {"video": {"type": "virtio"}, "autoattachGraphicsDevice": false}}})");
  EXPECT_EQ(describe(validate_video(spec, FieldPath("spec"), v18)),
            "FieldValueInvalid spec.video: Video configuration is specified but the VideoConfig feature gate is not "
            "enabled\n");
  v18.feature_gates = {"VideoConfig"};
  EXPECT_EQ(describe(validate_video(spec, FieldPath("spec"), v18)),
            "FieldValueInvalid spec.video: Video configuration is not allowed when autoattachGraphicsDevice is set to "
            "false\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
