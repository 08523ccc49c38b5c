// Tests of admission/src/instancetype/apply.cpp (KubeVirt pkg/instancetype/apply/*.go and their
// _test.go files; conflict texts from pkg/instancetype/conflict/conflicts.go).
#include "vmgate/admission/instancetype/apply.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/json_test_support.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::instancetype {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;
using Paths = std::vector<std::string>;

using vmgate::testing::json_equals;

struct Applied {
  json::Document vmi;  // {"metadata":..., "spec":...}
  Paths conflicts;
  [[nodiscard]] const json::Value& spec() const { return *json::find(vmi, "spec"); }
  [[nodiscard]] const json::Value& domain() const { return *json::find_path(vmi, {"spec", "domain"}); }
  [[nodiscard]] const json::Value& metadata() const { return *json::find(vmi, "metadata"); }
};

// instancetype::apply on a VMI written as {"metadata":..., "spec":...}.
Applied run(std::string_view instancetype, std::string_view vmi, std::string_view preference = {},
            std::string_view base = "spec.template.spec") {
  const json::Document instancetype_doc = parse(instancetype);
  std::optional<json::Document> preference_doc;
  if (!preference.empty()) {
    preference_doc = parse(preference);
  }
  Applied out{parse(vmi), {}};
  out.conflicts = apply(instancetype_doc, preference_doc ? &*preference_doc : nullptr, *json::find(out.vmi, "spec"),
                        *json::find(out.vmi, "metadata"), base, out.vmi.GetAllocator());
  return out;
}

// Same through apply_with_preference (pkg/instancetype/apply/vmi.go ApplyToVMI).
Applied run_with_preference(std::optional<std::string_view> instancetype, std::optional<std::string_view> preference,
                            std::string_view vmi) {
  std::optional<json::Document> instancetype_doc;
  std::optional<json::Document> preference_doc;
  if (instancetype) {
    instancetype_doc = parse(*instancetype);
  }
  if (preference) {
    preference_doc = parse(*preference);
  }
  Applied out{parse(vmi), {}};
  out.conflicts = apply_with_preference(instancetype_doc ? &*instancetype_doc : nullptr,
                                        preference_doc ? &*preference_doc : nullptr, *json::find(out.vmi, "spec"),
                                        *json::find(out.vmi, "metadata"), "spec.template.spec", out.vmi.GetAllocator());
  return out;
}

constexpr std::string_view empty_vmi = R"({"metadata":{},"spec":{"domain":{}}})";

std::string vmi_with_domain(std::string_view domain) {
  return R"({"metadata":{},"spec":{"domain":)" + std::string(domain) + "}}";
}

// ---- CPU (cpu_test.go) ----

constexpr std::string_view full_cpu = R"({"cpu":{"guest":2,"model":"host-passthrough","dedicatedCPUPlacement":true,
    "isolateEmulatorThread":true,"numa":{"guestMappingPassthrough":{}},"realtime":{"mask":"0-3,^1"},"maxSockets":6},
    "memory":{"guest":"128Mi"}})";

TEST(InstancetypeApplyCpu, AppliesEveryCpuFieldWithDefaultSocketsTopology) {
  const Applied a = run(full_cpu, empty_vmi, R"({"cpu":{}})");
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_TRUE(json_equals(a.domain(), R"({"cpu":{"model":"host-passthrough","dedicatedCpuPlacement":true,
      "isolateEmulatorThread":true,"numa":{"guestMappingPassthrough":{}},"realtime":{"mask":"0-3,^1"},"maxSockets":6,
      "cores":1,"sockets":2,"threads":1},"memory":{"guest":"128Mi"}})"));
}

TEST(InstancetypeApplyCpu, PreferredTopologyShapesTheGuestVcpus) {
  struct Case {
    std::string_view preference;
    std::string_view cpu;
  };
  for (const Case& c :
       {Case{R"({"cpu":{"preferredCPUTopology":"any"}})", R"({"sockets":2,"cores":1,"threads":1})"},
        Case{R"({"cpu":{"preferredCPUTopology":"cores"}})", R"({"sockets":1,"cores":2,"threads":1})"},
        Case{R"({"cpu":{"preferredCPUTopology":"threads"}})", R"({"sockets":1,"cores":1,"threads":2})"},
        Case{R"({"cpu":{"preferredCPUTopology":"sockets"}})", R"({"sockets":2,"cores":1,"threads":1})"},
        Case{R"({"cpu":{"preferredCPUTopology":"spread"}})", R"({"sockets":1,"cores":2,"threads":1})"}}) {
    SCOPED_TRACE(c.preference);
    const Applied a = run(R"({"cpu":{"guest":2},"memory":{"guest":"1Gi"}})", empty_vmi, c.preference);
    ASSERT_TRUE(a.conflicts.empty());
    EXPECT_TRUE(json_equals(*json::find(a.domain(), "cpu"), c.cpu));
  }
}

TEST(InstancetypeApplyCpu, OnlyWhatTheInstancetypeSetsIsCopied) {
  const Applied a = run(R"({"cpu":{"guest":4},"memory":{"guest":"1Gi"}})",
                        vmi_with_domain(R"({"cpu":{"model":"host-model","dedicatedCpuPlacement":true,
                            "isolateEmulatorThread":true,"numa":{"guestMappingPassthrough":{}},"realtime":{}}})"));
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_TRUE(json_equals(*json::find(a.domain(), "cpu"), R"({"model":"host-model","dedicatedCpuPlacement":true,
      "isolateEmulatorThread":true,"numa":{"guestMappingPassthrough":{}},"realtime":{},"cores":1,"sockets":4,"threads":1})"));
}

// "should return a conflict if vmi.Spec.Domain.CPU already defined": every count is reported.
TEST(InstancetypeApplyCpu, EveryTopologyCountConflicts) {
  const Applied a = run(R"({"cpu":{"guest":2},"memory":{"guest":"1Gi"}})",
                        vmi_with_domain(R"({"cpu":{"cores":4,"sockets":1,"threads":1}})"));
  EXPECT_EQ(a.conflicts, (Paths{"spec.template.spec.domain.cpu.sockets", "spec.template.spec.domain.cpu.cores",
                                "spec.template.spec.domain.cpu.threads"}));
  // Nothing of the CPU is applied when it conflicts.
  EXPECT_TRUE(json_equals(*json::find(a.domain(), "cpu"), R"({"cores":4,"sockets":1,"threads":1})"));
}

TEST(InstancetypeApplyCpu, CpuRequestsAndLimitsConflict) {
  const Applied requests = run(R"({"cpu":{"guest":2},"memory":{"guest":"1Gi"}})",
                               vmi_with_domain(R"({"resources":{"requests":{"cpu":"1"}}})"));
  EXPECT_EQ(requests.conflicts, (Paths{"spec.template.spec.domain.resources.requests.cpu"}));
  const Applied limits = run(R"({"cpu":{"guest":2},"memory":{"guest":"1Gi"}})",
                             vmi_with_domain(R"({"resources":{"limits":{"cpu":"1"}}})"));
  EXPECT_EQ(limits.conflicts, (Paths{"spec.template.spec.domain.resources.limits.cpu"}));
}

TEST(InstancetypeApplyCpu, OwnedCpuFieldsConflictOnlyWhenBothSet) {
  const Applied both = run(full_cpu, vmi_with_domain(R"({"cpu":{"model":"host-model","dedicatedCpuPlacement":true,
      "isolateEmulatorThread":true,"numa":{"guestMappingPassthrough":{}},"realtime":{}},
      "resources":{"requests":{"cpu":"2"},"limits":{"cpu":"2"}}})"));
  // KubeVirt collects all CPU conflicts, in this order; the two flags use their Go field names.
  EXPECT_EQ(both.conflicts,
            (Paths{"spec.template.spec.domain.resources.requests.cpu", "spec.template.spec.domain.resources.limits.cpu",
                   "spec.template.spec.domain.cpu.model", "spec.template.spec.domain.cpu.dedicatedCPUPlacement",
                   "spec.template.spec.domain.cpu.isolateEmulatorThread", "spec.template.spec.domain.cpu.numa",
                   "spec.template.spec.domain.cpu.realtime"}));
  // false flags and empty model never conflict.
  const Applied falsy = run(full_cpu, vmi_with_domain(R"({"cpu":{"model":"","dedicatedCpuPlacement":false,
      "isolateEmulatorThread":false}})"));
  EXPECT_TRUE(falsy.conflicts.empty());
}

// cpu.maxSockets is never a conflict: the instancetype's value replaces the VM's.
TEST(InstancetypeApplyCpu, MaxSocketsOverwritesWithoutConflict) {
  const Applied a = run(R"({"cpu":{"guest":2,"maxSockets":8},"memory":{"guest":"1Gi"}})",
                        vmi_with_domain(R"({"cpu":{"maxSockets":4}})"));
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_EQ(json::find_path(a.domain(), {"cpu", "maxSockets"})->GetUint64(), 8U);
}

// ---- Memory (memory_test.go) ----

TEST(InstancetypeApplyMemory, AppliesGuestHugepagesAndMaxGuest) {
  const Applied a =
      run(R"({"cpu":{"guest":1},"memory":{"guest":"512M","hugepages":{"pageSize":"1Gi"},"maxGuest":"2G"}})", empty_vmi);
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_TRUE(json_equals(*json::find(a.domain(), "memory"),
                          R"({"guest":"512M","hugepages":{"pageSize":"1Gi"},"maxGuest":"2G"})"));
  // No requests.memory without overcommit: KubeVirt never derives it from guest.
  EXPECT_EQ(json::find(a.domain(), "resources"), nullptr);
}

TEST(InstancetypeApplyMemory, OvercommitPercentSetsRequestsMemory) {
  struct Case {
    std::string_view guest;
    int percent;
    std::string_view requests;
  };
  // float32 arithmetic truncated to an integer, in the guest's format (memory.go).
  for (const Case& c : {Case{"1Gi", 25, "768Mi"}, Case{"1Gi", 15, "912680576"}, Case{"512M", 15, "435200k"},
                        Case{"512M", 80, "102399992"}}) {
    SCOPED_TRACE(std::string(c.guest) + " " + std::to_string(c.percent));
    const Applied a = run(R"({"cpu":{"guest":1},"memory":{"guest":")" + std::string(c.guest) +
                              R"(","overcommitPercent":)" + std::to_string(c.percent) + "}}",
                          empty_vmi);
    EXPECT_TRUE(a.conflicts.empty());
    EXPECT_TRUE(json_equals(a.domain(), R"({"cpu":{"cores":1,"sockets":1,"threads":1},"memory":{"guest":")" +
                                            std::string(c.guest) + R"("},"resources":{"requests":{"memory":")" +
                                            std::string(c.requests) + R"("}}})"));
  }
}

TEST(InstancetypeApplyMemory, OvercommitZeroLeavesRequestsAlone) {
  const Applied a = run(R"({"cpu":{"guest":1},"memory":{"guest":"1Gi","overcommitPercent":0}})", empty_vmi);
  EXPECT_EQ(json::find(a.domain(), "resources"), nullptr);
}

TEST(InstancetypeApplyMemory, EachMemoryFieldConflicts) {
  struct Case {
    std::string_view instancetype_memory;
    std::string_view domain;
    std::string_view conflict;
  };
  for (const Case& c : {
           Case{R"({"guest":"1Gi"})", R"({"memory":{"guest":"512M"}})", "spec.template.spec.domain.memory.guest"},
           Case{R"({"guest":"1Gi","hugepages":{"pageSize":"2Mi"}})", R"({"memory":{"hugepages":{"pageSize":"1Gi"}}})",
                "spec.template.spec.domain.memory.hugepages"},
           Case{R"({"guest":"1Gi","maxGuest":"2G"})", R"({"memory":{"maxGuest":"4G"}})",
                "spec.template.spec.domain.memory.maxGuest"},
           Case{R"({"guest":"1Gi"})", R"({"resources":{"requests":{"memory":"128Mi"}}})",
                "spec.template.spec.domain.resources.requests.memory"},
           Case{R"({"guest":"1Gi"})", R"({"resources":{"limits":{"memory":"128Mi"}}})",
                "spec.template.spec.domain.resources.limits.memory"},
       }) {
    SCOPED_TRACE(c.conflict);
    const Applied a =
        run(R"({"cpu":{"guest":1},"memory":)" + std::string(c.instancetype_memory) + "}", vmi_with_domain(c.domain));
    EXPECT_EQ(a.conflicts, (Paths{std::string(c.conflict)}));
  }
}

TEST(InstancetypeApplyMemory, VmOnlyHugepagesAndMaxGuestAreKept) {
  const Applied a = run(R"({"cpu":{"guest":1},"memory":{"guest":"512M"}})",
                        vmi_with_domain(R"({"memory":{"hugepages":{"pageSize":"2Mi"},"maxGuest":"4G"}})"));
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_TRUE(json_equals(*json::find(a.domain(), "memory"),
                          R"({"hugepages":{"pageSize":"2Mi"},"maxGuest":"4G","guest":"512M"})"));
}

// Memory stops at its first conflict (guest, hugepages, maxGuest, requests, limits); CPU collects all.
TEST(InstancetypeApplyMemory, MemoryStopsAtTheFirstConflictWhileCpuCollectsAll) {
  const Applied a = run(R"({"cpu":{"guest":2},"memory":{"guest":"1Gi","hugepages":{"pageSize":"2Mi"}}})",
                        vmi_with_domain(R"({"cpu":{"sockets":2,"cores":1},"memory":{"guest":"1Gi",
                            "hugepages":{"pageSize":"2Mi"}},"resources":{"requests":{"memory":"1Gi"},
                            "limits":{"memory":"1Gi"}}})"));
  EXPECT_EQ(a.conflicts, (Paths{"spec.template.spec.domain.cpu.sockets", "spec.template.spec.domain.cpu.cores",
                                "spec.template.spec.domain.memory.guest"}));
}

// ---- The other appliers ----

TEST(InstancetypeApplyOther, NodeSelectorAndSchedulerName) {
  const Applied applied = run(R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"},"nodeSelector":{"a":"b"},
      "schedulerName":"sched"})",
                              empty_vmi);
  EXPECT_TRUE(applied.conflicts.empty());
  EXPECT_TRUE(json_equals(*json::find(applied.spec(), "nodeSelector"), R"({"a":"b"})"));
  EXPECT_EQ(json::find_string(applied.spec(), "schedulerName"), "sched");

  const Applied conflicting =
      run(R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"},"nodeSelector":{},
      "schedulerName":"sched"})",
          R"({"metadata":{},"spec":{"nodeSelector":{"x":"y"},"schedulerName":"mine","domain":{}}})");
  EXPECT_EQ(conflicting.conflicts, (Paths{"spec.template.spec.nodeSelector", "spec.template.spec.schedulerName"}));

  const Applied empty_scheduler = run(R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"},"schedulerName":"sched"})",
                                      R"({"metadata":{},"spec":{"schedulerName":"","domain":{}}})");
  EXPECT_TRUE(empty_scheduler.conflicts.empty());
  EXPECT_EQ(json::find_string(empty_scheduler.spec(), "schedulerName"), "sched");
}

TEST(InstancetypeApplyOther, IoThreadsAndPolicy) {
  const Applied applied = run(R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"},
      "ioThreads":{"supplementalPoolThreadCount":4},"ioThreadsPolicy":"supplementalPool"})",
                              vmi_with_domain(R"({"ioThreads":{}})"));
  EXPECT_TRUE(applied.conflicts.empty());
  EXPECT_TRUE(json_equals(*json::find(applied.domain(), "ioThreads"), R"({"supplementalPoolThreadCount":4})"));
  EXPECT_EQ(json::find_string(applied.domain(), "ioThreadsPolicy"), "supplementalPool");

  const Applied conflicting =
      run(R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"},
      "ioThreads":{"supplementalPoolThreadCount":4},"ioThreadsPolicy":"auto"})",
          vmi_with_domain(R"({"ioThreads":{"supplementalPoolThreadCount":2},"ioThreadsPolicy":"shared"})"));
  EXPECT_EQ(conflicting.conflicts, (Paths{"spec.template.spec.domain.ioThreads.supplementalPoolThreadCount",
                                          "spec.template.spec.domain.ioThreadsPolicy"}));
}

TEST(InstancetypeApplyOther, GpusAndHostDevices) {
  constexpr std::string_view instancetype = R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"},
      "gpus":[{"name":"gpu1","deviceName":"nvidia"}],"hostDevices":[{"name":"hd1","deviceName":"intel"}]})";
  const Applied applied = run(instancetype, vmi_with_domain(R"({"devices":{"gpus":[]}})"));
  EXPECT_TRUE(applied.conflicts.empty());
  EXPECT_TRUE(json_equals(*json::find(applied.domain(), "devices"), R"({"gpus":[{"name":"gpu1","deviceName":"nvidia"}],
      "hostDevices":[{"name":"hd1","deviceName":"intel"}]})"));

  const Applied conflicting =
      run(instancetype, vmi_with_domain(R"({"devices":{"gpus":[{"name":"mine","deviceName":"x"}],
      "hostDevices":[{"name":"mine","deviceName":"y"}]}})"));
  EXPECT_EQ(conflicting.conflicts,
            (Paths{"spec.template.spec.domain.devices.gpus", "spec.template.spec.domain.devices.hostDevices"}));
}

// annotations_test.go: the path has no spec.template.metadata prefix.
TEST(InstancetypeApplyOther, Annotations) {
  constexpr std::string_view instancetype =
      R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"},"annotations":{"annotation-1":"1","annotation-2":"2"}})";
  const Applied applied = run(instancetype, empty_vmi);
  EXPECT_TRUE(applied.conflicts.empty());
  EXPECT_TRUE(json_equals(applied.metadata(), R"({"annotations":{"annotation-1":"1","annotation-2":"2"}})"));

  const Applied same = run(instancetype, R"({"metadata":{"annotations":{"annotation-1":"1","annotation-2":"2"}},
      "spec":{"domain":{}}})");
  EXPECT_TRUE(same.conflicts.empty());

  const Applied different =
      run(instancetype, R"({"metadata":{"annotations":{"annotation-1":"conflict"}},"spec":{"domain":{}}})");
  EXPECT_EQ(different.conflicts, (Paths{"annotations.annotation-1"}));

  const Applied both = run(instancetype, R"({"metadata":{"annotations":{"annotation-2":"x","annotation-1":"y"}},
      "spec":{"domain":{}}})",
                           {}, "spec");
  EXPECT_EQ(both.conflicts, (Paths{"annotations.annotation-1", "annotations.annotation-2"}));
}

// vmi.go: the conflicts of all appliers, concatenated in KubeVirt's order.
TEST(InstancetypeApplyOther, ConflictsAreConcatenatedInApplierOrder) {
  const Applied a = run(R"({"nodeSelector":{"a":"b"},"schedulerName":"s","cpu":{"guest":2},"memory":{"guest":"1Gi"},
      "ioThreads":{"supplementalPoolThreadCount":1},"ioThreadsPolicy":"auto","launchSecurity":{"sev":{}},
      "gpus":[{"name":"g","deviceName":"d"}],"hostDevices":[{"name":"h","deviceName":"d"}],"annotations":{"k":"v"}})",
                        R"({"metadata":{"annotations":{"k":"mine"}},"spec":{"nodeSelector":{},"schedulerName":"mine",
      "domain":{"cpu":{"threads":2},"memory":{"guest":"1Gi"},"ioThreads":{"supplementalPoolThreadCount":2},
      "ioThreadsPolicy":"shared","launchSecurity":{},"devices":{"gpus":[{"name":"x","deviceName":"y"}],
      "hostDevices":[{"name":"x","deviceName":"y"}]}}}})");
  EXPECT_EQ(a.conflicts, (Paths{"spec.template.spec.nodeSelector", "spec.template.spec.schedulerName",
                                "spec.template.spec.domain.cpu.threads", "spec.template.spec.domain.memory.guest",
                                "spec.template.spec.domain.ioThreads.supplementalPoolThreadCount",
                                "spec.template.spec.domain.ioThreadsPolicy", "spec.template.spec.domain.launchSecurity",
                                "spec.template.spec.domain.devices.gpus",
                                "spec.template.spec.domain.devices.hostDevices", "annotations.k"}));
}

TEST(InstancetypeApplyOther, ControllerBaseIsSpec) {
  const Applied a =
      run(R"({"cpu":{"guest":2},"memory":{"guest":"1Gi"},"annotations":{"k":"v"}})",
          R"({"metadata":{"annotations":{"k":"mine"}},"spec":{"domain":{"cpu":{"sockets":1}}}})", {}, "spec");
  EXPECT_EQ(a.conflicts, (Paths{"spec.domain.cpu.sockets", "annotations.k"}));
}

// conflicts.go: one FieldValueInvalid cause per path.
TEST(InstancetypeApplyOther, ConflictCausesUseKubeVirtsWords) {
  const ErrorList causes = conflict_causes({"spec.template.spec.domain.cpu.sockets", "annotations.k"});
  ASSERT_EQ(causes.size(), 2U);
  EXPECT_EQ(causes[0].type, CauseType::field_value_invalid);
  EXPECT_EQ(causes[0].field, "spec.template.spec.domain.cpu.sockets");
  EXPECT_EQ(causes[0].message,
            "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type");
  EXPECT_EQ(causes[1].field, "annotations.k");
  EXPECT_EQ(causes[1].message, "VM field(s) annotations.k conflicts with selected instance type");
  EXPECT_TRUE(conflict_causes({}).empty());
}

// ---- Instancetype + preference (vmi.go ApplyToVMI; launchsecurity_test.go) ----

TEST(InstancetypeApplyWithPreference, LaunchSecurityTable) {
  struct Case {
    std::string_view name;
    std::string_view vmi;           // "" = unset
    std::string_view preference;    // "" = unset
    std::string_view instancetype;  // "" = unset
    bool conflict;
    std::string_view expected;  // "" = unset
  };
  constexpr std::string_view vmi_ls = R"({"sev":{}})";
  constexpr std::string_view preference_ls = R"({"sev":{"policy":{}}})";
  constexpr std::string_view instancetype_ls = R"({"tdx":{}})";
  for (const Case& c : {
           Case{"all nil", "", "", "", false, ""},
           Case{"preference set", "", preference_ls, "", false, preference_ls},
           Case{"vmi set", vmi_ls, "", "", false, vmi_ls},
           Case{"vmi and preference set", vmi_ls, preference_ls, "", false, vmi_ls},
           Case{"instancetype set", "", "", instancetype_ls, false, instancetype_ls},
           Case{"instancetype and preference set", "", preference_ls, instancetype_ls, false, instancetype_ls},
           Case{"instancetype and vmi set", vmi_ls, "", instancetype_ls, true, ""},
           Case{"all set", vmi_ls, preference_ls, instancetype_ls, true, ""},
       }) {
    SCOPED_TRACE(c.name);
    const std::string instancetype =
        R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"})" +
        (c.instancetype.empty() ? std::string() : R"(,"launchSecurity":)" + std::string(c.instancetype)) + "}";
    const std::string preference =
        c.preference.empty() ? "{}" : R"({"preferredLaunchSecurity":)" + std::string(c.preference) + "}";
    const std::string vmi = vmi_with_domain(c.vmi.empty() ? "{}" : R"({"launchSecurity":)" + std::string(c.vmi) + "}");
    const Applied a = run_with_preference(instancetype, preference, vmi);
    if (c.conflict) {
      EXPECT_EQ(a.conflicts, (Paths{"spec.template.spec.domain.launchSecurity"}));
      continue;
    }
    EXPECT_TRUE(a.conflicts.empty());
    const json::Value* launch_security = json::find(a.domain(), "launchSecurity");
    if (c.expected.empty()) {
      EXPECT_EQ(launch_security, nullptr);
    } else {
      ASSERT_NE(launch_security, nullptr);
      EXPECT_TRUE(json_equals(*launch_security, c.expected));
    }
  }
}

TEST(InstancetypeApplyWithPreference, PreferenceNotAppliedOnConflict) {
  const Applied a = run_with_preference(R"({"cpu":{"guest":2},"memory":{"guest":"1Gi"}})",
                                        R"({"preferredSubdomain":"sub","annotations":{"p":"1"}})",
                                        vmi_with_domain(R"({"cpu":{"sockets":2}})"));
  EXPECT_EQ(a.conflicts, (Paths{"spec.template.spec.domain.cpu.sockets"}));
  EXPECT_EQ(json::find(a.spec(), "subdomain"), nullptr);
  EXPECT_EQ(json::find_path(a.metadata(), {"annotations", "p"}), nullptr);
}

TEST(InstancetypeApplyWithPreference, InstancetypeAnnotationsWinOverThePreferences) {
  const Applied a =
      run_with_preference(R"({"cpu":{"guest":1},"memory":{"guest":"1Gi"},"annotations":{"k":"instancetype"}})",
                          R"({"annotations":{"k":"preference","p":"1"}})", empty_vmi);
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_TRUE(json_equals(a.metadata(), R"({"annotations":{"k":"instancetype","p":"1"}})"));
}

TEST(InstancetypeApplyWithPreference, PreferenceAloneOrNothing) {
  const Applied preference_only = run_with_preference(std::nullopt, R"({"preferredSubdomain":"sub"})", empty_vmi);
  EXPECT_TRUE(preference_only.conflicts.empty());
  EXPECT_TRUE(json_equals(preference_only.spec(), R"({"domain":{},"subdomain":"sub"})"));
  // The VM's own CPU is left alone without an instancetype.
  const Applied cpu_kept = run_with_preference(std::nullopt, R"({"cpu":{"preferredCPUTopology":"cores"}})",
                                               vmi_with_domain(R"({"cpu":{"sockets":2}})"));
  EXPECT_TRUE(json_equals(cpu_kept.spec(), R"({"domain":{"cpu":{"sockets":2}}})"));
  const Applied nothing = run_with_preference(std::nullopt, std::nullopt, empty_vmi);
  EXPECT_TRUE(nothing.conflicts.empty());
  EXPECT_TRUE(json_equals(nothing.vmi, empty_vmi));
}

TEST(InstancetypeApplyWithPreference, InstancetypeTopologyFollowsThePreference) {
  const Applied a =
      run_with_preference(R"({"cpu":{"guest":9},"memory":{"guest":"1Gi"}})",
                          R"({"cpu":{"preferredCPUTopology":"spread","spreadOptions":{"ratio":3}}})", empty_vmi);
  EXPECT_TRUE(a.conflicts.empty());
  EXPECT_TRUE(json_equals(*json::find(a.domain(), "cpu"), R"({"cores":3,"sockets":3,"threads":1})"));
}

}  // namespace
}  // namespace vmgate::admission::instancetype
