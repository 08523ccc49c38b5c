// Tests of vmi-create-admitter.go validateCpuPinning (dedicatedCpuPlacement), with KubeVirt's
// messages verbatim (trailing spaces, "interger").
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view domain, const ClusterConfig& config = ClusterConfig{}) {
  return describe(
      validate_dedicated_cpu(parse(R"({"domain": )" + std::string(domain) + "}"), FieldPath("spec"), config));
}

constexpr std::string_view memory = R"("resources": {"requests": {"memory": "1Gi"}})";

TEST(ValidationDedicatedCpu, OnlyWithDedicatedPlacement) {
  EXPECT_EQ(check(R"({"cpu": {"threads": 4}, "resources": {"requests": {"cpu": "500m"}}})"), "");
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "cores": 2}, )" + std::string(memory) + "}"), "");
}

TEST(ValidationDedicatedCpu, MemoryMustBeProvided) {
  const std::string cause =
      "FieldValueInvalid spec.domain.resources.limits.memory: spec.domain.resources.requests.memory, "
      "spec.domain.resources.limits.memory, spec.domain.memory.hugepages or spec.domain.memory.guest should be "
      "provided\n";
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "cores": 1}})"), cause);
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "cores": 1}, "memory": {"guest": "0"}})"), cause);
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "cores": 1}, "memory": {"guest": "1Gi"}})"), "");
  EXPECT_EQ(
      check(R"({"cpu": {"dedicatedCpuPlacement": true, "cores": 1}, "memory": {"hugepages": {"pageSize": "2Mi"}}})"),
      "");
}

TEST(ValidationDedicatedCpu, WholeCpusAndEqualMemory) {
  EXPECT_EQ(
      check(R"({"cpu": {"dedicatedCpuPlacement": true},
                      "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}, "limits": {"cpu": "1.5", "memory": "2Gi"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.cpu: provided resources CPU requests must be an interger\n"
      "FieldValueInvalid spec.domain.resources.limits.cpu: provided resources CPU limits must be an interger\n"
      "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory must be "
      "equal to spec.domain.resources.limits.memory\n");
}

TEST(ValidationDedicatedCpu, CpusFromRequestsLimitsOrTopology) {
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true}, )" + std::string(memory) + "}"),
            "FieldValueInvalid spec.domain.cpu.dedicatedCpuPlacement: either spec.domain.resources.requests.cpu or "
            "spec.domain.resources.limits.cpu or spec.domain.cpu.cores must be provided when DedicatedCPUPlacement is "
            "true \n");
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true},
                      "resources": {"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "4"}}})"),
            "FieldValueInvalid spec.domain.cpu.dedicatedCpuPlacement: spec.domain.resources.requests.cpu or "
            "spec.domain.resources.limits.cpu must be equal when DedicatedCPUPlacement is true \n");
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "cores": 2, "sockets": 2},
                      "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}})"),
            "FieldValueInvalid spec.domain.cpu.dedicatedCpuPlacement: spec.domain.resources.requests.cpu or "
            "spec.domain.resources.limits.cpu must not be provided at the same time with spec.domain.cpu.cores when "
            "DedicatedCPUPlacement is true \n");
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "cores": 2, "sockets": 2},
                      "resources": {"requests": {"cpu": "4", "memory": "1Gi"}}})"),
            "");
}

TEST(ValidationDedicatedCpu, ThreadLimits) {
  // validateThreadCountOnDedicatedCPUPlacement: the cause names dedicatedCpuPlacement.
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "threads": 3}, )" + std::string(memory) + "}"),
            "FieldValueInvalid spec.domain.cpu.dedicatedCpuPlacement: Not more than two threads must be provided at "
            "spec.domain.cpu.threads (got 3) when DedicatedCPUPlacement is true\n");
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "threads": 2}, )" + std::string(memory) + "}"), "");
  ClusterConfig arm64;
  arm64.default_architecture = "arm64";
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "threads": 2}, )" + std::string(memory) + "}", arm64),
            "FieldValueInvalid spec.architecture: threads must not be greater than 1 at spec.domain.cpu.threads (got "
            "2) when spec.architecture is arm64\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
