// Tests of the CPU rules of vmi-create-admitter.go: no negative CPU requests or limits, requests
// ≤ limits (compared in millicores), at most two threads with dedicated CPUs, NUMA passthrough
// needs dedicated CPUs and hugepages, isolateEmulatorThread needs dedicated CPUs.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string check(std::string_view domain, std::string_view path = "spec") {
  return describe(validate_cpu(parse(R"({"domain": )" + std::string(domain) + "}"), FieldPath(std::string(path))));
}

TEST(ValidationCpu, ValidRequestsAndLimits) {
  // "should accept valid cpu requests and limits"-style cases
  EXPECT_EQ(check(R"({"resources": {"requests": {"cpu": "1500m"}, "limits": {"cpu": "2"}}})"), "");
  EXPECT_EQ(check(R"({"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "2000m"}}})"), "");
  EXPECT_EQ(check(R"({"resources": {"requests": {"cpu": "4"}}})"), "");
  EXPECT_EQ(check("{}"), "");
}

TEST(ValidationCpu, NegativeValues) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"cpu": "-1"}, "limits": {"cpu": "-200m"}}})"),
            "FieldValueInvalid spec.domain.resources.requests.cpu: spec.domain.resources.requests.cpu '-1': must be "
            "greater than or equal to 0.\n"
            "FieldValueInvalid spec.domain.resources.limits.cpu: spec.domain.resources.limits.cpu '-200m': must be "
            "greater than or equal to 0.\n");
}

TEST(ValidationCpu, RequestsAboveLimits) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"cpu": "2500m"}, "limits": {"cpu": "2"}}})", "spec.template.spec"),
            "FieldValueInvalid spec.template.spec.domain.resources.requests.cpu: spec.template.spec.domain.resources."
            "requests.cpu '2500m' is greater than spec.template.spec.domain.resources.limits.cpu '2'\n");
  // Go compares MilliValue(): below a millicore the two are equal.
  EXPECT_EQ(check(R"({"resources": {"requests": {"cpu": "1.0004"}, "limits": {"cpu": "1.0001"}}})"), "");
}

TEST(ValidationCpu, IsolateEmulatorThreadNeedsDedicatedCpus) {
  EXPECT_EQ(check(R"({"cpu": {"isolateEmulatorThread": true}})"),
            "FieldValueInvalid spec.domain.cpu.isolateEmulatorThread: IsolateEmulatorThread should be only set in "
            "combination with DedicatedCPUPlacement\n");
  EXPECT_EQ(check(R"({"cpu": {"isolateEmulatorThread": true, "dedicatedCpuPlacement": true}})"), "");
}

TEST(ValidationCpu, NumaPassthroughNeedsDedicatedCpusAndHugepages) {
  // "should reject NUMA passthrough without hugepages" / without dedicated CPUs
  EXPECT_EQ(
      check(R"({"cpu": {"numa": {"guestMappingPassthrough": {}}}})"),
      "FieldValueInvalid spec.domain.cpu.numa.guestMappingPassthrough: spec.domain.cpu.dedicatedCpuPlacement must "
      "be set to true when NUMA topology strategy is set in spec.domain.cpu.numa.guestMappingPassthrough\n"
      "FieldValueInvalid spec.domain.cpu.numa.guestMappingPassthrough: spec.domain.memory.hugepages must be "
      "requested when NUMA topology strategy is set in spec.domain.cpu.numa.guestMappingPassthrough\n");
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "numa": {"guestMappingPassthrough": {}}},
                      "memory": {"guest": "1Gi"}})"),
            "FieldValueInvalid spec.domain.cpu.numa.guestMappingPassthrough: spec.domain.memory.hugepages must be "
            "requested when NUMA topology strategy is set in spec.domain.cpu.numa.guestMappingPassthrough\n");
  EXPECT_EQ(check(R"({"cpu": {"dedicatedCpuPlacement": true, "numa": {"guestMappingPassthrough": {}}},
                      "memory": {"hugepages": {"pageSize": "2Mi"}}})"),
            "");
}

TEST(ValidationCpu, KubeVirtOrder) {
  // requests/limits, then NUMA, then isolateEmulatorThread (validateCpuPinning is validate_dedicated_cpu).
  EXPECT_EQ(
      check(R"({"resources": {"requests": {"cpu": "-1"}},
                      "cpu": {"dedicatedCpuPlacement": false, "isolateEmulatorThread": true, "numa": {"guestMappingPassthrough": {}},
                              "threads": 1}, "memory": {"hugepages": {"pageSize": "2Mi"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.cpu: spec.domain.resources.requests.cpu '-1': must be "
      "greater than or equal to 0.\n"
      "FieldValueInvalid spec.domain.cpu.numa.guestMappingPassthrough: spec.domain.cpu.dedicatedCpuPlacement must "
      "be set to true when NUMA topology strategy is set in spec.domain.cpu.numa.guestMappingPassthrough\n"
      "FieldValueInvalid spec.domain.cpu.isolateEmulatorThread: IsolateEmulatorThread should be only set in "
      "combination with DedicatedCPUPlacement\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
