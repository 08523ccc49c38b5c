// Tests of admission/src/instancetype/find.cpp: matcher kinds and revision-first lookup
// (KubeVirt pkg/instancetype/find/{spec,revision}.go, pkg/instancetype/preference/find/*.go,
// pkg/instancetype/compatibility/compatibility.go; cases from find/spec_test.go).
#include "vmgate/admission/instancetype/find.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/admission/cluster.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::instancetype {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

ObjectStore store_of(std::initializer_list<std::string_view> objects) {
  ObjectStore store;
  for (std::string_view text : objects) {
    const Result<ObjectKind> added = store.add(parse(text));
    EXPECT_TRUE(added.ok()) << added.error().message << ": " << text;
  }
  return store;
}

Result<FoundSpec> lookup(MatcherType type, std::string_view vm, const ObjectStore& store) {
  const json::Document vm_doc = parse(vm);
  return find_spec(type, vm_doc, "ns", store);
}

// The guest vCPUs of a found instancetype spec, to tell the live object from a revision.
// 0 when nothing was found.
std::uint64_t guest_of(const Result<FoundSpec>& found) {
  if (!found.ok() || found->spec == nullptr) {
    return 0;
  }
  const json::Value* guest = json::find_path(*found->spec, {"cpu", "guest"});
  return guest != nullptr && guest->IsUint64() ? guest->GetUint64() : 0;
}

constexpr std::string_view cluster_instancetype = R"({"kind":"VirtualMachineClusterInstancetype",
    "metadata":{"name":"u1.small"},"spec":{"cpu":{"guest":2},"memory":{"guest":"128Mi"}}})";
constexpr std::string_view namespaced_instancetype = R"({"kind":"VirtualMachineInstancetype",
    "metadata":{"name":"mine","namespace":"ns"},"spec":{"cpu":{"guest":4},"memory":{"guest":"128Mi"}}})";
constexpr std::string_view cluster_preference = R"({"kind":"VirtualMachineClusterPreference",
    "metadata":{"name":"fedora"},"spec":{"preferredSubdomain":"cluster"}})";
constexpr std::string_view namespaced_preference = R"({"kind":"VirtualMachinePreference",
    "metadata":{"name":"fedora","namespace":"ns"},"spec":{"preferredSubdomain":"namespaced"}})";

// A ControllerRevision as KubeVirt stores it: the whole object in `data`.
std::string revision(std::string_view name, std::string_view object_name, std::string_view kind, int guest) {
  return R"({"kind":"ControllerRevision","revision":1,"metadata":{"name":")" + std::string(name) +
         R"(","namespace":"ns","labels":{"instancetype.kubevirt.io/object-name":")" + std::string(object_name) +
         R"("}},"data":{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":")" + std::string(kind) +
         R"(","metadata":{"name":")" + std::string(object_name) + R"("},"spec":{"cpu":{"guest":)" +
         std::to_string(guest) + R"(},"memory":{"guest":"128Mi"},"preferredSubdomain":"revision"}}})";
}

// ---- matcher_kind (spec.go switch on strings.ToLower(kind)) ----

TEST(InstancetypeFindKind, InstancetypeKinds) {
  for (std::string_view kind : {"", "VirtualMachineClusterInstancetype", "virtualmachineclusterinstancetype",
                                "virtualmachineclusterinstancetypes", "VIRTUALMACHINECLUSTERINSTANCETYPES"}) {
    SCOPED_TRACE(kind);
    const Result<ObjectKind> k = matcher_kind(MatcherType::instancetype, kind);
    ASSERT_TRUE(k.ok());
    EXPECT_EQ(*k, ObjectKind::cluster_instancetype);
  }
  for (std::string_view kind :
       {"VirtualMachineInstancetype", "virtualmachineinstancetype", "VirtualMachineInstancetypes"}) {
    SCOPED_TRACE(kind);
    const Result<ObjectKind> k = matcher_kind(MatcherType::instancetype, kind);
    ASSERT_TRUE(k.ok());
    EXPECT_EQ(*k, ObjectKind::instancetype);
  }
}

TEST(InstancetypeFindKind, PreferenceKinds) {
  for (std::string_view kind : {"", "VirtualMachineClusterPreference", "virtualmachineclusterpreferences"}) {
    SCOPED_TRACE(kind);
    const Result<ObjectKind> k = matcher_kind(MatcherType::preference, kind);
    ASSERT_TRUE(k.ok());
    EXPECT_EQ(*k, ObjectKind::cluster_preference);
  }
  for (std::string_view kind : {"VirtualMachinePreference", "virtualmachinepreferences"}) {
    SCOPED_TRACE(kind);
    const Result<ObjectKind> k = matcher_kind(MatcherType::preference, kind);
    ASSERT_TRUE(k.ok());
    EXPECT_EQ(*k, ObjectKind::preference);
  }
}

// Go's strings.ToLower lowers U+0130 'İ' to 'i': KubeVirt takes such a spelling for the kind it
// lowers to (U+212A lowers to 'k', which no kind has); other non-ASCII letters are refused.
TEST(InstancetypeFindKind, KindsGoLowersIntoTheNamesAreAccepted) {
  const Result<ObjectKind> dotted = matcher_kind(MatcherType::preference, "V\xC4\xB0rtualMachinePreference");
  ASSERT_TRUE(dotted.ok());
  EXPECT_EQ(*dotted, ObjectKind::preference);
  const Result<ObjectKind> cluster =
      matcher_kind(MatcherType::instancetype, "V\xC4\xB0rtualMachineClusterInstancetypes");
  ASSERT_TRUE(cluster.ok());
  EXPECT_EQ(*cluster, ObjectKind::cluster_instancetype);
  const Result<ObjectKind> dotless = matcher_kind(MatcherType::preference, "V\xC4\xB1rtualMachinePreference");
  ASSERT_FALSE(dotless.ok());
  EXPECT_EQ(dotless.error().message, "got unexpected kind in PreferenceMatcher: V\xC4\xB1rtualMachinePreference");
}

TEST(InstancetypeFindKind, ShortNamesAndOtherKindsAreRejected) {
  for (std::string_view kind :
       {"vmcf", "vmf", "vminstancetype", "vmclusterinstancetype", "VirtualMachinePreference", "VirtualMachine"}) {
    SCOPED_TRACE(kind);
    const Result<ObjectKind> k = matcher_kind(MatcherType::instancetype, kind);
    ASSERT_FALSE(k.ok());
    EXPECT_EQ(k.error().message, "got unexpected kind in InstancetypeMatcher: " + std::string(kind));
  }
  for (std::string_view kind : {"vmcp", "vmp", "vmpref", "vmcpref", "VirtualMachineClusterInstancetype"}) {
    SCOPED_TRACE(kind);
    const Result<ObjectKind> k = matcher_kind(MatcherType::preference, kind);
    ASSERT_FALSE(k.ok());
    EXPECT_EQ(k.error().message, "got unexpected kind in PreferenceMatcher: " + std::string(kind));
  }
}

// ---- live objects ----

TEST(InstancetypeFindLive, NoMatcherFindsNothing) {
  const ObjectStore store = store_of({cluster_instancetype});
  for (std::string_view vm : {R"({"spec":{}})", R"({"spec":{"instancetype":null}})",
                              R"({"spec":{"instancetype":{"inferFromVolume":"root"}}})"}) {
    SCOPED_TRACE(vm);
    const Result<FoundSpec> found = lookup(MatcherType::instancetype, vm, store);
    ASSERT_TRUE(found.ok()) << found.error().message;
    EXPECT_EQ(found->spec, nullptr);
  }
}

TEST(InstancetypeFindLive, ClusterInstancetypeByDefault) {
  const ObjectStore store = store_of({cluster_instancetype, namespaced_instancetype});
  for (std::string_view kind : {"", "VirtualMachineClusterInstancetype", "virtualmachineclusterinstancetypes"}) {
    SCOPED_TRACE(kind);
    const Result<FoundSpec> found =
        lookup(MatcherType::instancetype,
               R"({"spec":{"instancetype":{"name":"u1.small","kind":")" + std::string(kind) + R"("}}})", store);
    ASSERT_TRUE(found.ok()) << found.error().message;
    ASSERT_NE(found->spec, nullptr);
    EXPECT_EQ(dump(*found->spec), R"({"cpu":{"guest":2},"memory":{"guest":"128Mi"}})");
    EXPECT_EQ(found->kind, ObjectKind::cluster_instancetype);
    EXPECT_EQ(found->name, "u1.small");
  }
}

TEST(InstancetypeFindLive, NamespacedInstancetypeInTheVmNamespace) {
  const ObjectStore store = store_of({namespaced_instancetype});
  const Result<FoundSpec> found =
      lookup(MatcherType::instancetype,
             R"({"spec":{"instancetype":{"name":"mine","kind":"VirtualMachineInstancetype"}}})", store);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(guest_of(found), 4U);
  EXPECT_EQ(found->kind, ObjectKind::instancetype);

  const json::Document vm = parse(R"({"spec":{"instancetype":{"name":"mine","kind":"virtualmachineinstancetypes"}}})");
  const Result<FoundSpec> elsewhere = find_spec(MatcherType::instancetype, vm, "other", store);
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.error().message, R"(virtualmachineinstancetypes.instancetype.kubevirt.io "mine" not found)");
}

TEST(InstancetypeFindLive, NotFoundUsesTheApiServersWords) {
  const ObjectStore store = store_of({namespaced_instancetype});
  const Result<FoundSpec> cluster =
      lookup(MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"x"}}})", store);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.error().message, R"(virtualmachineclusterinstancetypes.instancetype.kubevirt.io "x" not found)");
  // A namespaced instancetype is not found through the cluster kind.
  const Result<FoundSpec> wrong_scope =
      lookup(MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"mine"}}})", store);
  ASSERT_FALSE(wrong_scope.ok());
  EXPECT_EQ(wrong_scope.error().message,
            R"(virtualmachineclusterinstancetypes.instancetype.kubevirt.io "mine" not found)");
  const Result<FoundSpec> preference =
      lookup(MatcherType::preference, R"({"spec":{"preference":{"name":"x"}}})", store);
  ASSERT_FALSE(preference.ok());
  EXPECT_EQ(preference.error().message, R"(virtualmachineclusterpreferences.instancetype.kubevirt.io "x" not found)");
  const Result<FoundSpec> namespaced = lookup(
      MatcherType::preference, R"({"spec":{"preference":{"name":"x","kind":"VirtualMachinePreference"}}})", store);
  ASSERT_FALSE(namespaced.ok());
  EXPECT_EQ(namespaced.error().message, R"(virtualmachinepreferences.instancetype.kubevirt.io "x" not found)");
}

TEST(InstancetypeFindLive, UnexpectedKindIsAnError) {
  const ObjectStore store = store_of({cluster_instancetype, cluster_preference});
  const Result<FoundSpec> instancetype =
      lookup(MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"u1.small","kind":"vmcf"}}})", store);
  ASSERT_FALSE(instancetype.ok());
  EXPECT_EQ(instancetype.error().message, "got unexpected kind in InstancetypeMatcher: vmcf");
  const Result<FoundSpec> preference =
      lookup(MatcherType::preference, R"({"spec":{"preference":{"name":"fedora","kind":"vmcp"}}})", store);
  ASSERT_FALSE(preference.ok());
  EXPECT_EQ(preference.error().message, "got unexpected kind in PreferenceMatcher: vmcp");
}

TEST(InstancetypeFindLive, Preferences) {
  const ObjectStore store = store_of({cluster_preference, namespaced_preference});
  const Result<FoundSpec> cluster =
      lookup(MatcherType::preference, R"({"spec":{"preference":{"name":"fedora"}}})", store);
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  EXPECT_EQ(dump(*cluster->spec), R"({"preferredSubdomain":"cluster"})");
  EXPECT_EQ(cluster->kind, ObjectKind::cluster_preference);
  const Result<FoundSpec> namespaced = lookup(
      MatcherType::preference, R"({"spec":{"preference":{"name":"fedora","kind":"VirtualMachinePreference"}}})", store);
  ASSERT_TRUE(namespaced.ok()) << namespaced.error().message;
  EXPECT_EQ(dump(*namespaced->spec), R"({"preferredSubdomain":"namespaced"})");
  EXPECT_EQ(namespaced->kind, ObjectKind::preference);
}

TEST(InstancetypeFindLive, ObjectWithoutSpecGivesAnEmptySpec) {
  const ObjectStore store = store_of({R"({"kind":"VirtualMachineClusterPreference","metadata":{"name":"bare"}})"});
  const Result<FoundSpec> found = lookup(MatcherType::preference, R"({"spec":{"preference":{"name":"bare"}}})", store);
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_NE(found->spec, nullptr);
  EXPECT_EQ(dump(*found->spec), "{}");
}

// ---- revisions (spec_test.go "returns expected instancetype referenced by") ----

TEST(InstancetypeFindRevision, RevisionNameWins) {
  const ObjectStore store =
      store_of({cluster_instancetype, revision("vm-rev", "u1.small", "VirtualMachineClusterInstancetype", 99)});
  const Result<FoundSpec> found = lookup(
      MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"u1.small","revisionName":"vm-rev"}}})", store);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(guest_of(found), 99U);
  EXPECT_EQ(found->name, "u1.small");
}

TEST(InstancetypeFindRevision, RevisionNameWithoutNameOrLiveObject) {
  const ObjectStore store = store_of({revision("vm-rev", "gone", "VirtualMachineClusterInstancetype", 99)});
  const Result<FoundSpec> found =
      lookup(MatcherType::instancetype, R"({"spec":{"instancetype":{"revisionName":"vm-rev"}}})", store);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(guest_of(found), 99U);
}

// revision.go is consulted before spec.go looks at the kind.
TEST(InstancetypeFindRevision, RevisionIsFoundBeforeTheKindIsChecked) {
  const ObjectStore store = store_of({revision("vm-rev", "u1.small", "VirtualMachineClusterInstancetype", 99)});
  const Result<FoundSpec> found =
      lookup(MatcherType::instancetype,
             R"({"spec":{"instancetype":{"name":"u1.small","kind":"vmcf","revisionName":"vm-rev"}}})", store);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(guest_of(found), 99U);
}

TEST(InstancetypeFindRevision, RevisionNameOverControllerRevisionRef) {
  const ObjectStore store = store_of({revision("vm-rev", "u1.small", "VirtualMachineClusterInstancetype", 99),
                                      revision("foobar", "u1.small", "VirtualMachineClusterInstancetype", 7)});
  const Result<FoundSpec> found =
      lookup(MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"u1.small","revisionName":"vm-rev"}},
          "status":{"instancetypeRef":{"controllerRevisionRef":{"name":"foobar"}}}})",
             store);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(guest_of(found), 99U);
}

TEST(InstancetypeFindRevision, MissingRevisionNameIsNotFound) {
  const ObjectStore store = store_of({cluster_instancetype});
  const Result<FoundSpec> found = lookup(
      MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"u1.small","revisionName":"gone"}}})", store);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().message, R"(controllerrevisions.apps "gone" not found)");
}

TEST(InstancetypeFindRevision, ControllerRevisionRefOfTheNamedObject) {
  const ObjectStore store =
      store_of({cluster_instancetype, revision("vm-rev", "u1.small", "VirtualMachineClusterInstancetype", 99)});
  const Result<FoundSpec> found = lookup(MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"u1.small"}},
      "status":{"instancetypeRef":{"controllerRevisionRef":{"name":"vm-rev"}}}})",
                                         store);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(guest_of(found), 99U);
}

// bug #14595: a status revision of another object is ignored in favour of the live object.
TEST(InstancetypeFindRevision, ControllerRevisionRefOfAnotherObjectIsIgnored) {
  const ObjectStore store =
      store_of({cluster_instancetype, revision("vm-stored", "stored", "VirtualMachineClusterInstancetype", 99)});
  const Result<FoundSpec> found = lookup(MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"u1.small"}},
      "status":{"instancetypeRef":{"name":"stored","controllerRevisionRef":{"name":"vm-stored"}}}})",
                                         store);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(guest_of(found), 2U);
}

// revision.go returns the lookup error of the referenced revision.
TEST(InstancetypeFindRevision, MissingControllerRevisionRefIsNotFound) {
  const ObjectStore store = store_of({cluster_instancetype});
  const Result<FoundSpec> found = lookup(MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"u1.small"}},
      "status":{"instancetypeRef":{"controllerRevisionRef":{"name":"gone"}}}})",
                                         store);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().message, R"(controllerrevisions.apps "gone" not found)");
}

TEST(InstancetypeFindRevision, PreferenceRevisions) {
  const ObjectStore store =
      store_of({cluster_preference, revision("vm-pref", "fedora", "VirtualMachineClusterPreference", 1),
                revision("vm-pref-ns", "fedora", "VirtualMachinePreference", 1)});
  const Result<FoundSpec> by_name = lookup(
      MatcherType::preference, R"({"spec":{"preference":{"name":"fedora","revisionName":"vm-pref-ns"}}})", store);
  ASSERT_TRUE(by_name.ok()) << by_name.error().message;
  EXPECT_EQ(json::find_string(*by_name->spec, "preferredSubdomain"), "revision");
  const Result<FoundSpec> by_status = lookup(MatcherType::preference, R"({"spec":{"preference":{"name":"fedora"}},
      "status":{"preferenceRef":{"controllerRevisionRef":{"name":"vm-pref"}},
                "instancetypeRef":{"controllerRevisionRef":{"name":"unrelated"}}}})",
                                             store);
  ASSERT_TRUE(by_status.ok()) << by_status.error().message;
  EXPECT_EQ(json::find_string(*by_status->spec, "preferredSubdomain"), "revision");
}

// compatibility.go: the revision must hold an object of the matcher's type.
TEST(InstancetypeFindRevision, RevisionOfTheWrongTypeIsAnError) {
  const ObjectStore store = store_of({revision("vm-pref", "fedora", "VirtualMachineClusterPreference", 1),
                                      revision("vm-it", "u1.small", "VirtualMachineInstancetype", 1)});
  const Result<FoundSpec> instancetype = lookup(
      MatcherType::instancetype, R"({"spec":{"instancetype":{"name":"fedora","revisionName":"vm-pref"}}})", store);
  ASSERT_FALSE(instancetype.ok());
  EXPECT_EQ(instancetype.error().message,
            "unexpected type in ControllerRevision: *v1beta1.VirtualMachineClusterPreference");
  const Result<FoundSpec> preference =
      lookup(MatcherType::preference, R"({"spec":{"preference":{"name":"u1.small","revisionName":"vm-it"}}})", store);
  ASSERT_FALSE(preference.ok());
  EXPECT_EQ(preference.error().message, "unexpected type in ControllerRevision: *v1beta1.VirtualMachineInstancetype");
}

TEST(InstancetypeFindRevision, RevisionWithoutAV1beta1ObjectIsAnError) {
  const ObjectStore store = store_of({R"({"kind":"ControllerRevision","metadata":{"name":"old","namespace":"ns"},
      "data":{"apiVersion":"instancetype.kubevirt.io/v1alpha2","kind":"VirtualMachineInstancetype","spec":{}}})",
                                      R"({"kind":"ControllerRevision","metadata":{"name":"empty","namespace":"ns"}})"});
  for (std::string_view name : {"old", "empty"}) {
    SCOPED_TRACE(name);
    const Result<FoundSpec> found =
        lookup(MatcherType::instancetype,
               R"({"spec":{"instancetype":{"name":"x","revisionName":")" + std::string(name) + R"("}}})", store);
    ASSERT_FALSE(found.ok());
    EXPECT_EQ(found.error().message.rfind("failed to decode object in ControllerRevision", 0), 0U)
        << found.error().message;
  }
}

// A cluster holding an instancetype the rules cannot read (the watch cache keeps such objects
// with their problem): the VM is told which object and field, not that it is missing.
class UnreadableInstancetype final : public ClusterView {
 public:
  [[nodiscard]] const json::Value* find(ObjectKind, std::string_view, std::string_view) const override {
    return nullptr;
  }
  [[nodiscard]] const ClusterConfig& config() const override { return config_; }
  [[nodiscard]] std::string_view unreadable(ObjectKind kind, std::string_view, std::string_view name) const override {
    return kind == ObjectKind::cluster_instancetype && name == "huge"
               ? "spec.memory.guest '999999999999Ei': quantity too large"
               : "";
  }

 private:
  ClusterConfig config_;
};

TEST(InstancetypeFindLive, UnreadableObjectIsNamedWithItsField) {
  const UnreadableInstancetype cluster;
  const json::Document vm = parse(R"({"spec":{"instancetype":{"name":"huge"}}})");
  const Result<FoundSpec> found = find_spec(MatcherType::instancetype, vm, "ns", cluster);
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().message,
            "virtualmachineclusterinstancetypes.instancetype.kubevirt.io \"huge\" cannot be read by vmgate: "
            "spec.memory.guest '999999999999Ei': quantity too large");
  const json::Document other = parse(R"({"spec":{"instancetype":{"name":"small"}}})");
  const Result<FoundSpec> missing = find_spec(MatcherType::instancetype, other, "ns", cluster);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "virtualmachineclusterinstancetypes.instancetype.kubevirt.io \"small\" not found");
}

}  // namespace
}  // namespace vmgate::admission::instancetype
