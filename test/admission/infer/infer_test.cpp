// Tests of admission/src/infer/infer.cpp: inferFromVolume (KubeVirt pkg/instancetype/infer/
// {handler,volume}.go; cases from handler_test.go).
#include "vmgate/admission/infer/infer.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/admission/cluster.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::infer {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::json_equals;

// The four labels with names ending in `suffix` ("FromPVC" → defaultInferedNameFromPVC, ...).
std::string labels(std::string_view suffix) {
  const std::string name = "defaultInferedName" + std::string(suffix);
  const std::string kind = "defaultInferedKind" + std::string(suffix);
  return R"({"instancetype.kubevirt.io/default-instancetype":")" + name +
         R"(","instancetype.kubevirt.io/default-instancetype-kind":")" + kind +
         R"(","instancetype.kubevirt.io/default-preference":")" + name +
         R"(","instancetype.kubevirt.io/default-preference-kind":")" + kind + R"("})";
}

constexpr std::string_view volume_name = "inferVolumeName";

struct Inferred {
  json::Document vm;
  std::optional<std::string> error;
  [[nodiscard]] const json::Value* instancetype() const { return json::find_path(vm, {"spec", "instancetype"}); }
  [[nodiscard]] const json::Value* preference() const { return json::find_path(vm, {"spec", "preference"}); }
  [[nodiscard]] const json::Value* memory() const {
    return json::find_path(vm, {"spec", "template", "spec", "domain", "memory"});
  }
};

// The same matcher on both sides, as handler_test.go's tables run each row for one of them.
std::string both(std::string_view policy = {}) {
  const std::string matcher =
      R"({"inferFromVolume":")" + std::string(volume_name) + R"(")" +
      (policy.empty() ? std::string() : R"(,"inferFromVolumeFailurePolicy":")" + std::string(policy) + R"(")") + "}";
  return R"("instancetype":)" + matcher + R"(,"preference":)" + matcher;
}

class InferFromVolume : public ::testing::Test {
 protected:
  void SetUp() override {
    add(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"pvcName","namespace":"default","labels":)" +
        labels("FromPVC") + "}}");
    add(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"unlabelledPVC","namespace":"default"}})");
    add(R"({"kind":"DataVolume","metadata":{"name":"dvWithSourcePVCName","namespace":"default"},
        "spec":{"source":{"pvc":{"name":"pvcName","namespace":"default"}}}})");
    add(R"({"kind":"DataVolume","metadata":{"name":"dvWithLabelsName","namespace":"default","labels":)" +
        labels("FromDV") + R"(},"spec":{"source":{"pvc":{"name":"pvcName","namespace":"default"}}}})");
    add(R"({"kind":"DataVolume","metadata":{"name":"dvWithSourceSnapshotName","namespace":"default"},
        "spec":{"source":{"snapshot":{"name":"volumeSnapshotName","namespace":"default"}}}})");
    add(R"({"kind":"VolumeSnapshot","metadata":{"name":"volumeSnapshotName","namespace":"default","labels":)" +
        labels("FromSnapshot") + "}}");
    add(R"({"kind":"DataSource","metadata":{"name":"dsWithSourcePVCName","namespace":"default"},
        "spec":{"source":{"pvc":{"name":"pvcName","namespace":"default"}}}})");
    add(R"({"kind":"DataSource","metadata":{"name":"dsWithLabelsName","namespace":"default","labels":)" +
        labels("FromDS") + R"(},"spec":{"source":{"pvc":{"name":"pvcName","namespace":"default"}}}})");
    add(R"({"kind":"DataSource","metadata":{"name":"dsWithSourceSnapshotName","namespace":"default"},
        "spec":{"source":{"snapshot":{"name":"volumeSnapshotName","namespace":"default"}}}})");
    add(R"({"kind":"DataSource","metadata":{"name":"dsInOtherNamespace","namespace":"images","labels":)" +
        labels("FromOtherDS") + "}}");
    add(R"({"kind":"DataSource","metadata":{"name":"dsNested","namespace":"default"},
        "spec":{"source":{"dataSource":{"name":"dsWithLabelsName","namespace":"default"}}}})");
  }

  void add(const std::string& text) {
    const Result<ObjectKind> added = store_.add(parse(text));
    ASSERT_TRUE(added.ok()) << added.error().message;
  }

  // A VM whose volume `volume_name` is `volume_source` (the member after "name").
  static std::string vm(std::string_view matchers, std::string_view volume_source, std::string_view extra_spec = {}) {
    return R"({"metadata":{"name":"vm","namespace":"default"},"spec":{)" + std::string(matchers) +
           R"(,"template":{"spec":{"domain":{"memory":{"guest":"1Gi"},"devices":{}},"volumes":[{"name":")" +
           std::string(volume_name) + R"(",)" + std::string(volume_source) + "}]}}" +
           (extra_spec.empty() ? std::string() : "," + std::string(extra_spec)) + "}}";
  }

  [[nodiscard]] Inferred run(const std::string& text) const {
    Inferred out{parse(text), std::nullopt};
    out.error = infer_matchers(out.vm, "default", store_, out.vm.GetAllocator());
    return out;
  }

  // Expects both matchers replaced by {name, kind} from labels("suffix").
  static void expect_inferred(const Inferred& out, std::string_view suffix) {
    ASSERT_FALSE(out.error) << *out.error;
    const std::string expected = R"({"name":"defaultInferedName)" + std::string(suffix) +
                                 R"(","kind":"defaultInferedKind)" + std::string(suffix) + R"("})";
    EXPECT_TRUE(json_equals(out.instancetype(), expected));
    EXPECT_TRUE(json_equals(out.preference(), expected));
  }

  ObjectStore store_;
};

// ---- successful inference ----

TEST_F(InferFromVolume, PersistentVolumeClaim) {
  expect_inferred(run(vm(both(), R"("persistentVolumeClaim":{"claimName":"pvcName"})")), "FromPVC");
}

TEST_F(InferFromVolume, DataVolumeWithSourcePvc) {
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"dvWithSourcePVCName"})")), "FromPVC");
}

TEST_F(InferFromVolume, DataVolumeWithSourceSnapshot) {
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"dvWithSourceSnapshotName"})")), "FromSnapshot");
}

TEST_F(InferFromVolume, DataVolumeLabelsComeFirst) {
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"dvWithLabelsName"})")), "FromDV");
}

// DataVolume labels without the name label are passed over for the DataVolume's spec.
TEST_F(InferFromVolume, DataVolumeWithoutNameLabelFollowsItsSpec) {
  add(R"({"kind":"DataVolume","metadata":{"name":"kindOnly","namespace":"default","labels":{
      "instancetype.kubevirt.io/default-instancetype-kind":"VirtualMachineInstancetype",
      "instancetype.kubevirt.io/default-preference-kind":"VirtualMachinePreference"}},
      "spec":{"source":{"pvc":{"name":"pvcName","namespace":"default"}}}})");
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"kindOnly"})")), "FromPVC");
}

// The claim is read in the VM's namespace only.
TEST_F(InferFromVolume, PersistentVolumeClaimOfAnotherNamespaceIsNotFound) {
  add(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"elsewhere","namespace":"images","labels":)" +
      labels("FromPVC") + "}}");
  const Inferred out = run(vm(both("Ignore"), R"("persistentVolumeClaim":{"claimName":"elsewhere"})"));
  ASSERT_TRUE(out.error.has_value());
  EXPECT_EQ(*out.error, R"(persistentvolumeclaims "elsewhere" not found)");
}

// A DataVolumeTemplate of the same name wins over any DataVolume, and only its spec is read.
TEST_F(InferFromVolume, DataVolumeTemplateSpecOnlyLabelsIgnored) {
  const std::string templates =
      R"("dataVolumeTemplates":[{"metadata":{"name":"dvWithLabelsName","labels":)" + labels("FromTemplate") +
      R"(},"spec":{"source":{"snapshot":{"name":"volumeSnapshotName","namespace":"default"}}}}])";
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"dvWithLabelsName"})", templates)), "FromSnapshot");
}

TEST_F(InferFromVolume, DataVolumeTemplateWithSourcePvc) {
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"fromTemplate"})",
                         R"("dataVolumeTemplates":[{"metadata":{"name":"fromTemplate"},
                             "spec":{"source":{"pvc":{"name":"pvcName","namespace":"default"}}}}])")),
                  "FromPVC");
}

TEST_F(InferFromVolume, DataVolumeTemplateSourceRefDataSource) {
  for (std::string_view ref : {R"({"kind":"DataSource","name":"dsWithSourcePVCName","namespace":"default"})",
                               R"({"kind":"DataSource","name":"dsWithSourcePVCName"})"}) {
    SCOPED_TRACE(ref);
    expect_inferred(run(vm(both(), R"("dataVolume":{"name":"fromTemplate"})",
                           R"("dataVolumeTemplates":[{"metadata":{"name":"fromTemplate"},"spec":{"sourceRef":)" +
                               std::string(ref) + "}}]")),
                    "FromPVC");
  }
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"fromTemplate"})",
                         R"("dataVolumeTemplates":[{"metadata":{"name":"fromTemplate"},
                             "spec":{"sourceRef":{"kind":"DataSource","name":"dsWithLabelsName"}}}])")),
                  "FromDS");
}

TEST_F(InferFromVolume, DataSourceWithSnapshotSource) {
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"fromTemplate"})",
                         R"("dataVolumeTemplates":[{"metadata":{"name":"fromTemplate"},
                             "spec":{"sourceRef":{"kind":"DataSource","name":"dsWithSourceSnapshotName"}}}])")),
                  "FromSnapshot");
}

// volume.go at v1.8.2 follows PVC sources only: a snapshot source is unsupported there.
TEST_F(InferFromVolume, AtV18SnapshotSourcesAreNotFollowed) {
  add(R"({"apiVersion":"kubevirt.io/v1","kind":"KubeVirt","metadata":{"name":"kubevirt","namespace":"kubevirt"},
          "status":{"observedKubeVirtVersion":"v1.8.2"}})");
  const Inferred from_dv = run(vm(both(), R"("dataVolume":{"name":"dvWithSourceSnapshotName"})"));
  ASSERT_TRUE(from_dv.error);
  EXPECT_EQ(*from_dv.error, "unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported");
  const Inferred from_ds = run(vm(both(), R"("dataVolume":{"name":"fromTemplate"})",
                                  R"("dataVolumeTemplates":[{"metadata":{"name":"fromTemplate"},
                                      "spec":{"sourceRef":{"kind":"DataSource","name":"dsWithSourceSnapshotName"}}}])"));
  ASSERT_TRUE(from_ds.error);
  EXPECT_EQ(*from_ds.error, "unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC");
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"dvWithSourcePVCName"})")), "FromPVC");
}

// The sourceRef namespace, when given, wins over the VM's.
TEST_F(InferFromVolume, DataSourceInAnotherNamespace) {
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"fromTemplate"})",
                         R"("dataVolumeTemplates":[{"metadata":{"name":"fromTemplate"},
                             "spec":{"sourceRef":{"kind":"DataSource","name":"dsInOtherNamespace","namespace":"images"}}}])")),
                  "FromOtherDS");
}

// handler_test.go "should infer defaults from garbage collected DataVolume using PVC with the same name".
TEST_F(InferFromVolume, GarbageCollectedDataVolumeFallsBackToThePvc) {
  expect_inferred(run(vm(both(), R"("dataVolume":{"name":"pvcName"})")), "FromPVC");
}

// The matcher is replaced: inferFromVolume, the policy and any other member disappear.
TEST_F(InferFromVolume, MatcherIsReplacedByNameAndKind) {
  const Inferred out = run(vm(both("Reject"), R"("persistentVolumeClaim":{"claimName":"pvcName"})"));
  ASSERT_FALSE(out.error) << *out.error;
  EXPECT_EQ(dump(*out.instancetype()), R"({"name":"defaultInferedNameFromPVC","kind":"defaultInferedKindFromPVC"})");
}

TEST_F(InferFromVolume, KindOmittedWithoutKindLabel) {
  add(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"nameOnly","namespace":"default","labels":{
      "instancetype.kubevirt.io/default-instancetype":"u1.medium","instancetype.kubevirt.io/default-preference":"fedora"}}})");
  const Inferred out = run(vm(both(), R"("persistentVolumeClaim":{"claimName":"nameOnly"})"));
  ASSERT_FALSE(out.error) << *out.error;
  EXPECT_EQ(dump(*out.instancetype()), R"({"name":"u1.medium"})");
  EXPECT_EQ(dump(*out.preference()), R"({"name":"fedora"})");
}

TEST_F(InferFromVolume, EmptyLabelValuesLeaveEmptyMatchers) {
  // infer/volume.go only asks that the label exist; the matcher's name and kind are omitempty.
  add(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"emptyLabels","namespace":"default","labels":{
      "instancetype.kubevirt.io/default-instancetype":"","instancetype.kubevirt.io/default-preference":""}}})");
  const Inferred out = run(vm(both(), R"("persistentVolumeClaim":{"claimName":"emptyLabels"})"));
  ASSERT_FALSE(out.error) << *out.error;
  EXPECT_EQ(dump(*out.instancetype()), "{}");
  EXPECT_EQ(dump(*out.preference()), "{}");
}

TEST_F(InferFromVolume, MatchersWithoutInferenceAreLeftAlone) {
  constexpr std::string_view matchers =
      R"("instancetype":{"name":"u1.small","revisionName":"r"},"preference":{"name":"p"})";
  const Inferred out = run(vm(matchers, R"("persistentVolumeClaim":{"claimName":"pvcName"})"));
  ASSERT_FALSE(out.error) << *out.error;
  EXPECT_TRUE(json_equals(out.instancetype(), R"({"name":"u1.small","revisionName":"r"})"));
  EXPECT_TRUE(json_equals(out.preference(), R"({"name":"p"})"));
  const Inferred none = run(vm(R"("running":false)", R"("persistentVolumeClaim":{"claimName":"pvcName"})"));
  ASSERT_FALSE(none.error);
  EXPECT_EQ(none.instancetype(), nullptr);
  EXPECT_EQ(none.preference(), nullptr);
}

// ---- Ignore + success (handler_test.go "When inference was successful") ----

TEST_F(InferFromVolume, IgnoreAndSuccessClearsGuestMemory) {
  const Inferred out =
      run(vm(R"("instancetype":{"inferFromVolume":"inferVolumeName","inferFromVolumeFailurePolicy":"Ignore"})",
             R"("persistentVolumeClaim":{"claimName":"pvcName"})"));
  ASSERT_FALSE(out.error) << *out.error;
  EXPECT_TRUE(
      json_equals(out.instancetype(), R"({"name":"defaultInferedNameFromPVC","kind":"defaultInferedKindFromPVC"})"));
  EXPECT_EQ(out.memory(), nullptr);
}

TEST_F(InferFromVolume, RejectAndSuccessKeepsGuestMemory) {
  for (std::string_view policy : {"Reject", ""}) {
    SCOPED_TRACE(policy);
    const std::string matcher =
        policy.empty() ? std::string(R"("instancetype":{"inferFromVolume":"inferVolumeName"})")
                       : R"("instancetype":{"inferFromVolume":"inferVolumeName","inferFromVolumeFailurePolicy":")" +
                             std::string(policy) + R"("})";
    const Inferred out = run(vm(matcher, R"("persistentVolumeClaim":{"claimName":"pvcName"})"));
    ASSERT_FALSE(out.error) << *out.error;
    EXPECT_TRUE(json_equals(out.memory(), R"({"guest":"1Gi"})"));
  }
}

// Only the instancetype matcher clears memory.
TEST_F(InferFromVolume, PreferenceIgnoreAndSuccessKeepsGuestMemory) {
  const Inferred out =
      run(vm(R"("preference":{"inferFromVolume":"inferVolumeName","inferFromVolumeFailurePolicy":"Ignore"})",
             R"("persistentVolumeClaim":{"claimName":"pvcName"})"));
  ASSERT_FALSE(out.error) << *out.error;
  EXPECT_TRUE(
      json_equals(out.preference(), R"({"name":"defaultInferedNameFromPVC","kind":"defaultInferedKindFromPVC"})"));
  EXPECT_TRUE(json_equals(out.memory(), R"({"guest":"1Gi"})"));
}

// ---- failures: ignorable ones honour the policy, the others always reject ----

struct Failure {
  std::string_view volume_source;
  std::string_view extra_spec;
  std::string instancetype_message;
  std::string preference_message;
  bool ignorable;
};

class InferFromVolumeFailure : public InferFromVolume {
 protected:
  // Each matcher alone, under each policy.
  void check(const Failure& f) {
    for (std::string_view key : {"instancetype", "preference"}) {
      for (std::string_view policy : {"", "Reject", "Ignore"}) {
        SCOPED_TRACE(std::string(key) + " policy '" + std::string(policy) + "'");
        const std::string matcher =
            R"(")" + std::string(key) + R"(":{"inferFromVolume":"inferVolumeName")" +
            (policy.empty() ? std::string() : R"(,"inferFromVolumeFailurePolicy":")" + std::string(policy) + R"(")") +
            "}";
        const Inferred out = run(vm(matcher, f.volume_source, f.extra_spec));
        const json::Value* matcher_after = key == "instancetype" ? out.instancetype() : out.preference();
        if (f.ignorable && policy == "Ignore") {
          EXPECT_FALSE(out.error) << *out.error;
          EXPECT_EQ(matcher_after, nullptr) << "the matcher is cleared";
          EXPECT_TRUE(json_equals(out.memory(), R"({"guest":"1Gi"})"));
          continue;
        }
        ASSERT_TRUE(out.error.has_value());
        EXPECT_EQ(*out.error, key == "instancetype" ? f.instancetype_message : f.preference_message);
        EXPECT_NE(matcher_after, nullptr) << "a rejected request keeps its matcher";
      }
    }
  }
};

TEST_F(InferFromVolumeFailure, UnknownVolumeIsNeverIgnorable) {
  for (std::string_view key : {"instancetype", "preference"}) {
    for (std::string_view policy : {"Reject", "Ignore"}) {
      SCOPED_TRACE(std::string(key) + " " + std::string(policy));
      const std::string matcher = R"(")" + std::string(key) +
                                  R"(":{"inferFromVolume":"missing","inferFromVolumeFailurePolicy":")" +
                                  std::string(policy) + R"("})";
      const Inferred out = run(vm(matcher, R"("persistentVolumeClaim":{"claimName":"pvcName"})"));
      ASSERT_TRUE(out.error.has_value());
      EXPECT_EQ(*out.error, "unable to find volume missing to infer defaults");
      EXPECT_NE(key == "instancetype" ? out.instancetype() : out.preference(), nullptr);
    }
  }
}

TEST_F(InferFromVolumeFailure, UnknownPersistentVolumeClaim) {
  const std::string message = R"(persistentvolumeclaims "unknownPVCName" not found)";
  check({R"("persistentVolumeClaim":{"claimName":"unknownPVCName"})", "", message, message, false});
}

TEST_F(InferFromVolumeFailure, UnknownDataVolumeAndPersistentVolumeClaim) {
  const std::string message = R"(persistentvolumeclaims "unknownDVName" not found)";
  check({R"("dataVolume":{"name":"unknownDVName"})", "", message, message, false});
}

TEST_F(InferFromVolumeFailure, UnknownDataSource) {
  const std::string message = R"(datasources.cdi.kubevirt.io "unknownDS" not found)";
  check(
      {R"("dataVolume":{"name":"t"})",
       R"("dataVolumeTemplates":[{"metadata":{"name":"t"},"spec":{"sourceRef":{"kind":"DataSource","name":"unknownDS"}}}])",
       message, message, false});
}

TEST_F(InferFromVolumeFailure, UnknownVolumeSnapshot) {
  const std::string message = R"(volumesnapshots.snapshot.storage.k8s.io "unknownSnapshot" not found)";
  check({R"("dataVolume":{"name":"t"})",
         R"("dataVolumeTemplates":[{"metadata":{"name":"t"},
             "spec":{"source":{"snapshot":{"name":"unknownSnapshot","namespace":"default"}}}}])",
         message, message, false});
}

TEST_F(InferFromVolumeFailure, UnsupportedVolumeType) {
  const std::string message = "unable to infer defaults from volume inferVolumeName as type is not supported";
  check({R"("containerDisk":{"image":"quay.io/containerdisks/fedora"})", "", message, message, true});
}

TEST_F(InferFromVolumeFailure, UnsupportedDataVolumeSource) {
  const std::string message = "unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported";
  check({R"("dataVolume":{"name":"t"})",
         R"("dataVolumeTemplates":[{"metadata":{"name":"t"},"spec":{"source":{"http":{"url":"http://x"}}}}])", message,
         message, true});
}

TEST_F(InferFromVolumeFailure, UnsupportedDataVolumeSourceRefKind) {
  const std::string message = "unable to infer defaults from DataVolumeSourceRef as Kind foo is not supported";
  check({R"("dataVolume":{"name":"t"})",
         R"("dataVolumeTemplates":[{"metadata":{"name":"t"},"spec":{"sourceRef":{"kind":"foo","name":"x"}}}])", message,
         message, true});
}

// Nested DataSources are not followed by inference.
TEST_F(InferFromVolumeFailure, DataSourceWithoutPvcOrSnapshot) {
  const std::string message =
      "unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC or DataVolumeSourceSnapshot";
  check(
      {R"("dataVolume":{"name":"t"})",
       R"("dataVolumeTemplates":[{"metadata":{"name":"t"},"spec":{"sourceRef":{"kind":"DataSource","name":"dsNested"}}}])",
       message, message, true});
}

TEST_F(InferFromVolumeFailure, MissingNameLabel) {
  check({R"("persistentVolumeClaim":{"claimName":"unlabelledPVC"})", "",
         "unable to find required instancetype.kubevirt.io/default-instancetype label on the volume",
         "unable to find required instancetype.kubevirt.io/default-preference label on the volume", true});
}

// The instancetype is inferred first and its error stops the request before the preference.
TEST_F(InferFromVolume, InstancetypeErrorStopsBeforeThePreference) {
  const Inferred out = run(vm(R"("instancetype":{"inferFromVolume":"inferVolumeName"},
                                 "preference":{"inferFromVolume":"inferVolumeName"})",
                              R"("persistentVolumeClaim":{"claimName":"unknownPVCName"})"));
  ASSERT_TRUE(out.error.has_value());
  EXPECT_EQ(*out.error, R"(persistentvolumeclaims "unknownPVCName" not found)");
  EXPECT_TRUE(json_equals(out.preference(), R"({"inferFromVolume":"inferVolumeName"})"));
}

// An ignored instancetype failure still lets the preference be inferred.
TEST_F(InferFromVolume, IgnoredInstancetypeFailureThenPreference) {
  add(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"prefOnly","namespace":"default","labels":{
      "instancetype.kubevirt.io/default-preference":"fedora"}}})");
  const Inferred out =
      run(vm(R"("instancetype":{"inferFromVolume":"inferVolumeName","inferFromVolumeFailurePolicy":"Ignore"},
                                 "preference":{"inferFromVolume":"inferVolumeName"})",
             R"("persistentVolumeClaim":{"claimName":"prefOnly"})"));
  ASSERT_FALSE(out.error) << *out.error;
  EXPECT_EQ(out.instancetype(), nullptr);
  EXPECT_TRUE(json_equals(out.preference(), R"({"name":"fedora"})"));
  EXPECT_TRUE(json_equals(out.memory(), R"({"guest":"1Gi"})"));
}

}  // namespace
}  // namespace vmgate::admission::infer
