// Tests of admission/src/preference/requirements.cpp (KubeVirt pkg/instancetype/preference/
// requirements/{cpu,memory,arch}_test.go; the cause as vms-admitter.go renders it).
#include "vmgate/admission/preference/requirements.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::preference {
namespace {

using vmgate::testing::parse;

struct Case {
  std::string name;
  std::optional<std::string_view> instancetype;  // spec, or none
  std::string_view preference;
  std::string_view vmi_spec;
  std::string field;
  std::string message;  // "" when the requirements are met; else the error, without the cause's prefix
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

ErrorList check(const Case& c) {
  std::optional<json::Document> instancetype;
  if (c.instancetype) {
    instancetype = parse(*c.instancetype);
  }
  const json::Document preference = parse(c.preference);
  const json::Document vmi_spec = parse(c.vmi_spec);
  return check_requirements(instancetype ? &*instancetype : nullptr, preference, vmi_spec);
}

class PreferenceRequirements : public ::testing::TestWithParam<Case> {};

TEST_P(PreferenceRequirements, Check) {
  const Case& c = GetParam();
  const ErrorList causes = check(c);
  if (c.message.empty()) {
    EXPECT_TRUE(causes.empty()) << causes.front().message;
    return;
  }
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].type, CauseType::field_value_not_found);
  EXPECT_EQ(causes[0].field, c.field);
  EXPECT_EQ(causes[0].message, "failure checking preference requirements: " + c.message);
}

constexpr std::string_view cpu2 = R"({"requirements":{"cpu":{"guest":2}}})";

INSTANTIATE_TEST_SUITE_P(
    PreferenceRequirementsCpu, PreferenceRequirements,
    ::testing::Values(
        // cpu_test.go "should pass when sufficient resources are provided".
        Case{"InstancetypeEnough", R"({"cpu":{"guest":2}})", cpu2, R"({})", "", ""},
        Case{"VmSocketsEnough", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"sockets"},"requirements":{"cpu":{"guest":2}}})",
             R"({"domain":{"cpu":{"sockets":2}}})", "", ""},
        Case{"VmDefaultTopologyIsSockets", std::nullopt, cpu2, R"({"domain":{"cpu":{"sockets":2}}})", "", ""},
        Case{"VmCoresEnough", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"cores"},"requirements":{"cpu":{"guest":2}}})",
             R"({"domain":{"cpu":{"cores":2}}})", "", ""},
        Case{"VmThreadsEnough", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"threads"},"requirements":{"cpu":{"guest":2}}})",
             R"({"domain":{"cpu":{"threads":2}}})", "", ""},
        Case{"VmSpreadSocketsCoresEnough", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"spread"},"requirements":{"cpu":{"guest":6}}})",
             R"({"domain":{"cpu":{"cores":2,"sockets":3}}})", "", ""},
        Case{"VmSpreadCoresThreadsEnough", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"CoresThreads"}},
                 "requirements":{"cpu":{"guest":6}}})",
             R"({"domain":{"cpu":{"threads":2,"cores":3}}})", "", ""},
        Case{"VmSpreadSocketsCoresThreadsEnough", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"SocketsCoresThreads"}},
                 "requirements":{"cpu":{"guest":8}}})",
             R"({"domain":{"cpu":{"threads":2,"cores":2,"sockets":2}}})", "", ""},
        Case{"VmAnyEnough", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"any"},"requirements":{"cpu":{"guest":4}}})",
             R"({"domain":{"cpu":{"sockets":2,"cores":1,"threads":2}}})", "", ""},
        Case{"VmDeprecatedPreferCoresEnough", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"preferCores"},"requirements":{"cpu":{"guest":2}}})",
             R"({"domain":{"cpu":{"cores":2}}})", "", ""},
        // cpu_test.go "should be rejected when insufficient resources are provided".
        Case{"InstancetypeShort", R"({"cpu":{"guest":1}})", cpu2, R"({"domain":{"cpu":{"sockets":8}}})",
             "spec.instancetype",
             "insufficient CPU resources of 1 vCPU provided by instance type, preference requires 2 vCPU"},
        Case{"VmSocketsShort", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"sockets"},"requirements":{"cpu":{"guest":2}}})",
             R"({"domain":{"cpu":{"sockets":1,"cores":4}}})", "spec.template.spec.domain.cpu.sockets",
             "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as "
             "sockets"},
        Case{"VmCoresShort", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"cores"},"requirements":{"cpu":{"guest":2}}})",
             R"({"domain":{"cpu":{"cores":1,"sockets":4}}})", "spec.template.spec.domain.cpu.cores",
             "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as "
             "cores"},
        Case{"VmThreadsShort", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"threads"},"requirements":{"cpu":{"guest":2}}})",
             R"({"domain":{"cpu":{"threads":1}}})", "spec.template.spec.domain.cpu.threads",
             "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 2 vCPU provided as "
             "threads"},
        Case{"VmSpreadSocketsCoresShort", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"spread"},"requirements":{"cpu":{"guest":4}}})",
             R"({"domain":{"cpu":{"cores":1,"sockets":1,"threads":8}}})",
             "spec.template.spec.domain.cpu.sockets, spec.template.spec.domain.cpu.cores",
             "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as "
             "SocketsCores"},
        Case{"VmSpreadCoresThreadsShort", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"CoresThreads"}},
                 "requirements":{"cpu":{"guest":4}}})",
             R"({"domain":{"cpu":{"cores":1,"threads":1,"sockets":8}}})",
             "spec.template.spec.domain.cpu.cores, spec.template.spec.domain.cpu.threads",
             "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as "
             "CoresThreads"},
        Case{"VmSpreadSocketsCoresThreadsShort", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"preferSpread","spreadOptions":{"across":"SocketsCoresThreads"}},
                 "requirements":{"cpu":{"guest":4}}})",
             R"({"domain":{"cpu":{"sockets":1,"cores":1,"threads":1}}})",
             "spec.template.spec.domain.cpu.sockets, spec.template.spec.domain.cpu.cores, "
             "spec.template.spec.domain.cpu.threads",
             "insufficient CPU resources of 1 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as "
             "SocketsCoresThreads"},
        Case{"VmAnyShort", std::nullopt, R"({"cpu":{"preferredCPUTopology":"any"},"requirements":{"cpu":{"guest":4}}})",
             R"({"domain":{"cpu":{"sockets":2,"cores":1,"threads":1}}})",
             "spec.template.spec.domain.cpu.cores, spec.template.spec.domain.cpu.sockets, "
             "spec.template.spec.domain.cpu.threads",
             "insufficient CPU resources of 2 vCPU provided by VirtualMachine, preference requires 4 vCPU provided as "
             "cores, sockets and threads"},
        // The message exists in KubeVirt, though its webhook never reaches it (defaults come first).
        Case{"VmWithoutCpu", std::nullopt, cpu2, R"({"domain":{}})", "spec.template.spec.domain.cpu",
             "no CPU resources provided by VirtualMachine, preference requires 2 vCPU"},
        // An across value KubeVirt does not know provides 0 vCPUs and names no field.
        Case{"VmSpreadUnknownAcross", std::nullopt,
             R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"across":"Nowhere"}},
                 "requirements":{"cpu":{"guest":1}}})",
             R"({"domain":{"cpu":{"sockets":4}}})", "",
             "insufficient CPU resources of 0 vCPU provided by VirtualMachine, preference requires 1 vCPU provided as "
             "Nowhere"}),
    [](const ::testing::TestParamInfo<Case>& case_info) { return case_info.param.name; });

constexpr std::string_view memory2gi = R"({"requirements":{"memory":{"guest":"2Gi"}}})";

INSTANTIATE_TEST_SUITE_P(
    PreferenceRequirementsMemory, PreferenceRequirements,
    ::testing::Values(
        // memory_test.go.
        Case{"InstancetypeEnough", R"({"memory":{"guest":"1Gi"}})", R"({"requirements":{"memory":{"guest":"1Gi"}}})",
             R"({})", "", ""},
        Case{"VmEnough", std::nullopt, R"({"requirements":{"memory":{"guest":"1Gi"}}})",
             R"({"domain":{"memory":{"guest":"1024Mi"}}})", "", ""},
        Case{"InstancetypeShort", R"({"memory":{"guest":"1Gi"}})", memory2gi, R"({})", "spec.instancetype",
             "insufficient Memory resources of 1Gi provided by instance type, preference requires 2Gi"},
        Case{"VmShort", std::nullopt, memory2gi, R"({"domain":{"memory":{"guest":"1073741824"}}})",
             "spec.template.spec.domain.memory",
             "insufficient Memory resources of 1073741824 provided by VirtualMachine, preference requires 2Gi"},
        Case{"VmShortCanonicalForm", std::nullopt, R"({"requirements":{"memory":{"guest":"2048Mi"}}})",
             R"({"domain":{"memory":{"guest":"1024Mi"}}})", "spec.template.spec.domain.memory",
             "insufficient Memory resources of 1Gi provided by VirtualMachine, preference requires 2Gi"},
        Case{"VmWithoutMemory", std::nullopt, memory2gi, R"({"domain":{}})", "spec.template.spec.domain.memory",
             "insufficient Memory resources of 0 provided by VirtualMachine, preference requires 2Gi"},  // bug #14551
        Case{"VmMemoryWithoutGuest", std::nullopt, memory2gi, R"({"domain":{"memory":{}}})",
             "spec.template.spec.domain.memory",
             "insufficient Memory resources of 0 provided by VirtualMachine, preference requires 2Gi"},  // bug #14551
        // The VMI's guest (the applied instancetype's, in the webhook) wins over the instancetype's own.
        Case{"InstancetypeVmGuestWins", R"({"memory":{"guest":"4Gi"}})", memory2gi,
             R"({"domain":{"memory":{"guest":"1Gi"}}})", "spec.instancetype",
             "insufficient Memory resources of 1Gi provided by instance type, preference requires 2Gi"}),
    [](const ::testing::TestParamInfo<Case>& case_info) { return case_info.param.name; });

INSTANTIATE_TEST_SUITE_P(PreferenceRequirementsArchitecture, PreferenceRequirements,
                         ::testing::Values(
                             // arch_test.go.
                             Case{"Amd64", std::nullopt, R"({"requirements":{"architecture":"amd64"}})",
                                  R"({"architecture":"amd64"})", "", ""},
                             Case{"Arm64", std::nullopt, R"({"requirements":{"architecture":"arm64"}})",
                                  R"({"architecture":"arm64"})", "", ""},
                             Case{"S390x", std::nullopt, R"({"requirements":{"architecture":"s390x"}})",
                                  R"({"architecture":"s390x"})", "", ""},
                             Case{"NoArchitectureRequirement", std::nullopt, R"({"requirements":{}})",
                                  R"({"architecture":"amd64"})", "", ""},
                             Case{"NoRequirements", std::nullopt, R"({})", R"({"architecture":"amd64"})", "", ""},
                             Case{"Amd64ButArm64", std::nullopt, R"({"requirements":{"architecture":"amd64"}})",
                                  R"({"architecture":"arm64"})", "spec.template.spec.architecture",
                                  "preference requires architecture amd64 but arm64 is being requested"},
                             Case{"Arm64ButAmd64", std::nullopt, R"({"requirements":{"architecture":"arm64"}})",
                                  R"({"architecture":"amd64"})", "spec.template.spec.architecture",
                                  "preference requires architecture arm64 but amd64 is being requested"},
                             Case{"S390xButAmd64", std::nullopt, R"({"requirements":{"architecture":"s390x"}})",
                                  R"({"architecture":"amd64"})", "spec.template.spec.architecture",
                                  "preference requires architecture s390x but amd64 is being requested"},
                             Case{"Amd64ButEmpty", std::nullopt, R"({"requirements":{"architecture":"amd64"}})",
                                  R"({})", "spec.template.spec.architecture",
                                  "preference requires architecture amd64 but  is being requested"}),
                         [](const ::testing::TestParamInfo<Case>& case_info) { return case_info.param.name; });

// checker.go: cpu, then memory, then architecture; the first failure wins.
INSTANTIATE_TEST_SUITE_P(
    PreferenceRequirementsOrder, PreferenceRequirements,
    ::testing::Values(
        Case{"CpuBeforeMemoryAndArchitecture", R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"}})",
             R"({"requirements":{"cpu":{"guest":2},"memory":{"guest":"2Gi"},"architecture":"arm64"}})",
             R"({"architecture":"amd64"})", "spec.instancetype",
             "insufficient CPU resources of 1 vCPU provided by instance type, preference requires 2 vCPU"},
        Case{"MemoryBeforeArchitecture", R"({"cpu":{"guest":2},"memory":{"guest":"1Gi"}})",
             R"({"requirements":{"cpu":{"guest":2},"memory":{"guest":"2Gi"},"architecture":"arm64"}})",
             R"({"architecture":"amd64"})", "spec.instancetype",
             "insufficient Memory resources of 1Gi provided by instance type, preference requires 2Gi"},
        Case{"ArchitectureLast", R"({"cpu":{"guest":2},"memory":{"guest":"2Gi"}})",
             R"({"requirements":{"cpu":{"guest":2},"memory":{"guest":"2Gi"},"architecture":"arm64"}})",
             R"({"architecture":"amd64"})", "spec.template.spec.architecture",
             "preference requires architecture arm64 but amd64 is being requested"}),
    [](const ::testing::TestParamInfo<Case>& case_info) { return case_info.param.name; });

}  // namespace
}  // namespace vmgate::admission::preference
