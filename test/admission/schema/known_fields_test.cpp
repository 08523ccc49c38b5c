#include "vmgate/admission/schema/known_fields.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/json_test_support.hpp"

namespace vmgate::admission {
namespace {

using testing::parse;

std::vector<std::string> messages(KnownFieldsKind kind, const char* text, Release release = Release::main) {
  static const KnownFields known;
  std::vector<std::string> out;
  for (const FieldError& error : known.check(kind, parse(text), release)) {
    out.push_back(error.message);
  }
  return out;
}

using Messages = std::vector<std::string>;

TEST(KnownFields, ASoundVirtualMachineAndInstanceHaveNone) {
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine, R"({
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "vm", "whatever": 1},
    "status": {"anything": true},
    "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.small"},
      "dataVolumeTemplates": [{"metadata": {"name": "root"}, "spec": {"sourceRef": {"kind": "DataSource", "name": "f"},
                                                                   "storage": {"resources": {"requests": {"storage": "1Gi"}}}}}],
      "template": {"metadata": {"labels": {"any.key/x": "v"}},
        "spec": {"domain": {"devices": {"disks": [{"name": "root", "disk": {"bus": "virtio"}}],
                                        "interfaces": [{"name": "default", "masquerade": {}}]},
                            "cpu": {"dedicatedCpuPlacement": true}, "resources": {"requests": {"memory": "1Gi"}}},
                 "nodeSelector": {"zone": "a"},
                 "networks": [{"name": "default", "pod": {}}],
                 "volumes": [{"name": "root", "dataVolume": {"name": "root"}}]}}}})"),
            Messages{});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance,
                     R"({"spec": {"domain": {"devices": {}, "memory": {"guest": "1Gi"}}}})"),
            Messages{});
}

TEST(KnownFields, EachSpecHasItsOwnMembers) {
  EXPECT_EQ(
      messages(KnownFieldsKind::virtual_machine_instance, R"({"spec": {"domain": {"devices": {}}, "template": {}}})"),
      Messages{"spec.template in body is a forbidden property"});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine,
                     R"({"spec": {"domain": {}, "template": {"spec": {"domain": {"devices": {}}}}}})"),
            Messages{"spec.domain in body is a forbidden property"});
}

// v1.8's API (api/core/v1 at v1.8.2) has neither spec.serviceAccountName nor interfaces[].portRanges.
TEST(KnownFields, MembersAddedAfterV18AreUnknownAtV18) {
  const char* vmi = R"({"spec": {"serviceAccountName": "sa", "domain": {"devices": {"interfaces": [
      {"name": "default", "masquerade": {}, "portRanges": [{"protocol": "TCP", "start": 1, "end": 2}]}]}}}})";
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance, vmi), Messages{});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance, vmi, Release::v1_8),
            (Messages{"spec.serviceAccountName in body is a forbidden property",
                      "spec.domain.devices.interfaces.portRanges in body is a forbidden property"}));
}

// v1.7's API (api/openapi-spec at v1.7.0) has no passtBinding, rebootPolicy, reservedOverhead,
// utilityVolumes or containerPath, and its hyperv tlbflush is a plain FeatureState.
TEST(KnownFields, MembersAddedAfterV17AreUnknownAtV17) {
  const char* vmi = R"({"spec": {"domain": {"rebootPolicy": "Terminate", "memory": {"reservedOverhead": {}},
      "features": {"hyperv": {"tlbflush": {"enabled": true, "direct": {}}}},
      "devices": {"interfaces": [{"name": "default", "passtBinding": {}}]}}}})";
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance, vmi, Release::v1_8), Messages{});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance, vmi, Release::v1_7),
            (Messages{"spec.domain.rebootPolicy in body is a forbidden property",
                      "spec.domain.memory.reservedOverhead in body is a forbidden property",
                      "spec.domain.features.hyperv.tlbflush.direct in body is a forbidden property",
                      "spec.domain.devices.interfaces.passtBinding in body is a forbidden property"}));
}

TEST(KnownFields, ListItemsAndMapValuesAreFollowedMapKeysAreFree) {
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance, R"({"spec": {
    "domain": {"devices": {"interfaces": [{"name": "a"}, {"name": "b", "colour": "red", "bridge": {"x": 1}}]}},
    "nodeSelector": {"not.a.field": "x"},
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                 {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": "In", "valuez": ["a"]}]}]}}}}})"),
            // go-openapi/validate v0.24.0 writes no list index (structure.cpp, openapi_child)
            (Messages{"spec.domain.devices.interfaces.colour in body is a forbidden property",
                      "spec.domain.devices.interfaces.bridge.x in body is a forbidden property",
                      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms."
                      "matchExpressions.valuez in body is a forbidden property"}));
}

TEST(KnownFields, ValuesOfTheWrongTypeAreLeftToTheStructureCheck) {
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine, R"({"spec": "x"})"), Messages{});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance, R"({"spec": {"domain": [], "volumes": {"a": 1}}})"),
            Messages{});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine, "[]"), Messages{});
}

TEST(KnownFields, TopLevelMembersAndAMissingSpec) {
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine, R"({"apiVersion": "v", "Spec": {}})"),
            (Messages{".Spec in body is a forbidden property", "spec in body is required"}));
}

// kube-apiserver drops a null member the CRD schema does not mark nullable before any webhook
// runs (apiextensions-apiserver PruneNonNullableNullsWithoutDefaults), so KubeVirt's check
// finds a required member given as null missing.
TEST(KnownFields, ARequiredMemberGivenAsNullIsMissing) {
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance,
                     R"({"spec": {"domain": {"devices": null, "memory": {"guest": "1Gi"}}}})"),
            Messages{"spec.domain.devices in body is required"});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance, R"({"spec": {"domain": null}})"),
            Messages{"spec.domain in body is required"});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine, R"({"spec": {"template": null}})"),
            Messages{"spec.template in body is required"});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine, R"({"spec": null})"), Messages{"spec in body is required"});
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance,
                     R"({"spec": {"domain": {"devices": {"disks": [{"name": null}]}}}})"),
            Messages{"spec.domain.devices.disks.name in body is required"});
  // An optional member given as null is simply unset.
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance,
                     R"({"spec": {"domain": {"devices": {"disks": null}, "cpu": null}, "volumes": null}})"),
            Messages{});
}

}  // namespace
}  // namespace vmgate::admission
