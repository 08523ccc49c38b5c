// Tests of the memory rules (vmi-create-admitter.go validateMemoryRequestsNegativeOrNull,
// validateMemoryLimitsNegativeOrNull, validateGuestMemoryLimit), with vmi-create-admitter_test.go
// cases: requests ≥ 1M, no negatives, requests ≤ limits, and guest ≤ limits only outside LiveUpdate.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string check(std::string_view domain, const ClusterConfig& config = ClusterConfig{},
                  std::string_view path = "spec") {
  return describe(
      validate_memory(parse(R"({"domain": )" + std::string(domain) + "}"), FieldPath(std::string(path)), config));
}

ClusterConfig stage_rollout() {
  ClusterConfig config;
  config.vm_rollout_strategy = "Stage";
  return config;
}

TEST(ValidationMemory, CorrectSizesPass) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "64Mi"}, "limits": {"memory": "65Mi"}}})"), "");
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "64Mi"}, "limits": {"memory": "65Mi"}}})", stage_rollout()),
            "");
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "1M"}}})"), "");
  EXPECT_EQ(check("{}"), "");
}

TEST(ValidationMemory, NegativeRequests) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "-64Mi"}}})"),
            "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '-64Mi': "
            "must be greater than or equal to 0.\n");
}

TEST(ValidationMemory, RequestsBelowOneMegabyte) {
  // "should reject small requests.memory size value": 64m is 0.064 bytes, rounded up to 1.
  EXPECT_EQ(
      check(R"({"resources": {"requests": {"memory": "64m"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '64m': must "
      "be greater than or equal to 1M.\n");
  EXPECT_EQ(
      check(R"({"resources": {"requests": {"memory": "999999"}}})", ClusterConfig{}, "spec.template.spec"),
      "FieldValueInvalid spec.template.spec.domain.resources.requests.memory: spec.template.spec.domain.resources."
      "requests.memory '999999': must be greater than or equal to 1M.\n");
  // 1Mi is more than 1M; zero means "not requested".
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "1Mi"}}})"), "");
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "0"}}})"), "");
}

TEST(ValidationMemory, NegativeLimits) {
  EXPECT_EQ(
      check(R"({"resources": {"limits": {"memory": "-65Mi"}}})"),
      "FieldValueInvalid spec.domain.resources.limits.memory: spec.domain.resources.limits.memory '-65Mi': must be "
      "greater than or equal to 0.\n");
}

TEST(ValidationMemory, RequestsGreaterThanLimits) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "128Mi"}, "limits": {"memory": "64Mi"}}})"),
            "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '128Mi' is "
            "greater than spec.domain.resources.limits.memory '64Mi'\n");
  // Compared by value, whatever the notation.
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "1024Mi"}}})"), "");
}

TEST(ValidationMemory, GuestAboveLimitsOnlyMattersOutsideLiveUpdate) {
  constexpr std::string_view domain = R"({"resources": {"limits": {"memory": "64Mi"}}, "memory": {"guest": "128Mi"}})";
  // "should allow bigger guest memory than the memory limit" (LiveUpdate is the default)
  EXPECT_EQ(check(domain), "");
  // "should reject bigger guest memory than the memory limit if vmRolloutStrategy is set to Stage"
  EXPECT_EQ(
      check(domain, stage_rollout()),
      "FieldValueInvalid spec.domain.memory.guest: spec.domain.memory.guest '128Mi' must be equal to or less than "
      "the memory limit spec.domain.resources.limits.memory '64Mi'\n");
}

TEST(ValidationMemory, GuestBetweenRequestsAndLimitsOrWithoutLimits) {
  EXPECT_EQ(
      check(
          R"({"resources": {"requests": {"memory": "64Mi"}, "limits": {"memory": "128Mi"}}, "memory": {"guest": "100Mi"}})",
          stage_rollout()),
      "");
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "64Mi"}}, "memory": {"guest": "100Mi"}})", stage_rollout()),
            "");
  // "should allow smaller guest memory than requested memory even if vmRolloutStrategy is set to Stage"
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "64Mi"}}, "memory": {"guest": "1Mi"}})", stage_rollout()),
            "");
}

TEST(ValidationMemory, SeveralProblemsAtOnce) {
  EXPECT_EQ(
      check(R"({"resources": {"requests": {"memory": "-1Gi"}, "limits": {"memory": "-2Gi"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '-1Gi': must "
      "be greater than or equal to 0.\n"
      "FieldValueInvalid spec.domain.resources.limits.memory: spec.domain.resources.limits.memory '-2Gi': must be "
      "greater than or equal to 0.\n");
}

// ValidateVirtualMachineInstanceSpec runs validateHugepagesMemoryRequests before
// validateGuestMemoryLimit (found by the generated cases, seed 20261128).
TEST(ValidationMemory, HugepagesCausesComeBeforeTheGuestLimit) {
  EXPECT_EQ(
      check(
          R"({"resources": {"limits": {"memory": "1Gi"}}, "memory": {"guest": "4Gi", "hugepages": {"pageSize": "1 Gi"}}})",
          stage_rollout()),
      "FieldValueInvalid spec.domain.memory.hugepages.pageSize: spec.domain.memory.hugepages.pageSize '1 Gi': "
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n"
      "FieldValueInvalid spec.domain.memory.guest: spec.domain.memory.guest '4Gi' must be equal to or less than "
      "the memory limit spec.domain.resources.limits.memory '1Gi'\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
