#include "vmgate/admission/schema/known_fields.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
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

// Each definition reports its own unknown members, then its required ones missing in the
// order the API lists them, then the members' own; every one of a definition's properties is
// known, a name that differs in one byte is not.
TEST(KnownFields, EveryMemberOfADefinitionIsKnownNearMissesAreNot) {
  EXPECT_EQ(
      messages(KnownFieldsKind::virtual_machine_instance, R"({"spec": {"domain": {"devices": {}},
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "k", "operator": "In", "values": ["a"]}, {"values": [], "kez": "k"}]}]},
        "requiredDuringSchedulingIgnoredDuringExecutioN": {}, "preferredDuringSchedulingIgnoredDuringExecution": []}},
      "readinessProbe": {"httpGet": {"path": "/", "httpHeaders": [{"nam": "a", "": "b"}], "port": 80}},
      "terminationGracePeriodSeconds": 1, "terminationGracePeriodSecond": 1, "hostname": "h", "Hostname": "h"}})"),
      (Messages{
          "spec.terminationGracePeriodSecond in body is a forbidden property",
          "spec.Hostname in body is a forbidden property",
          "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecutioN in body is a forbidden property",
          "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms."
          "matchExpressions.kez in body is a forbidden property",
          "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms."
          "matchExpressions.key in body is required",
          "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms."
          "matchExpressions.operator in body is required",
          "spec.readinessProbe.httpGet.httpHeaders.nam in body is a forbidden property",
          "spec.readinessProbe.httpGet.httpHeaders. in body is a forbidden property",
          "spec.readinessProbe.httpGet.httpHeaders.name in body is required",
          "spec.readinessProbe.httpGet.httpHeaders.value in body is required",
      }));
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
  // A member given twice (KubeVirt's decoder keeps one, the API server's JSON reader the last;
  // objects reach vmgate without duplicates): the first decides, as for any lookup by name.
  EXPECT_EQ(
      messages(KnownFieldsKind::virtual_machine_instance, R"({"spec": {"domain": {"devices": null, "devices": {}}}})"),
      Messages{"spec.domain.devices in body is required"});
  EXPECT_EQ(
      messages(KnownFieldsKind::virtual_machine_instance, R"({"spec": {"domain": {"devices": {}, "devices": null}}})"),
      Messages{});
  // An optional member given as null is simply unset.
  EXPECT_EQ(messages(KnownFieldsKind::virtual_machine_instance,
                     R"({"spec": {"domain": {"devices": {"disks": null}, "cpu": null}, "volumes": null}})"),
            Messages{});
}

std::size_t index_of(const std::vector<KnownFields::Position::Property>& properties, std::string_view name) {
  for (std::size_t index = 0; index < properties.size(); ++index) {
    if (properties[index].name == name) {
      return index;
    }
  }
  ADD_FAILURE() << "no property " << name;
  return 0;
}

std::size_t named_in(const KnownFields::Position& position, std::string_view name) {
  return index_of(position.properties(), name);
}

// The positions StructureValidator lays over its own tree: what check walks, from spec down.
TEST(KnownFields, PositionsDescribeWhatTheCheckWalks) {
  const KnownFields known;
  const KnownFields::Position spec = known.spec(KnownFieldsKind::virtual_machine);
  ASSERT_EQ(spec.shape(), KnownFields::Position::Shape::object);
  const std::vector<KnownFields::Position::Property> properties = spec.properties();
  const std::size_t templ = index_of(properties, "template");
  EXPECT_TRUE(properties[templ].required);
  EXPECT_EQ(properties[templ].since, Release::v1_7);
  EXPECT_FALSE(properties[index_of(properties, "runStrategy")].required);

  const KnownFields::Position template_spec = spec.holds(templ).holds(named_in(spec.holds(templ), "spec"));
  const std::vector<KnownFields::Position::Property> vmi_spec = template_spec.properties();
  const KnownFields::Position volumes = template_spec.holds(index_of(vmi_spec, "volumes"));
  EXPECT_EQ(volumes.shape(), KnownFields::Position::Shape::array);
  EXPECT_EQ(volumes.element().shape(), KnownFields::Position::Shape::object);
  const KnownFields::Position node_selector = template_spec.holds(index_of(vmi_spec, "nodeSelector"));
  EXPECT_EQ(node_selector.shape(), KnownFields::Position::Shape::map);
  EXPECT_EQ(node_selector.element().shape(), KnownFields::Position::Shape::anything);
  EXPECT_EQ(vmi_spec[index_of(vmi_spec, "serviceAccountName")].since, Release::main);
  EXPECT_THROW((void)node_selector.element().element(), std::logic_error);
  EXPECT_THROW((void)volumes.holds(0), std::logic_error);
}

}  // namespace
}  // namespace vmgate::admission
