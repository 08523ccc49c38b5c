// Tests of StructureValidator: real objects pass untouched; a wrong type, range, enum value
// or missing required member anywhere the rules read gives exactly one cause with the
// Kubernetes field path and kube-openapi's wording; no input makes it throw or crash.
#include "vmgate/admission/schema/structure.hpp"

#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"

namespace vmgate::admission {
namespace {

using testing::dump;
using testing::parse;

const StructureValidator& validator() {
  static const StructureValidator instance;
  return instance;
}

std::string describe(const ErrorList& errors) {
  std::string text;
  for (const FieldError& error : errors) {
    text += std::string(to_string(error.type)) + " " + error.field + ": " + error.message + "\n";
  }
  return text.empty() ? "(no errors)" : text;
}

// ---------------------------------------------------------------------------------------
// Base objects: realistic and structurally sound; the table below breaks one field at a time.

constexpr std::string_view base_vm = R"({
  "apiVersion": "kubevirt.io/v1",
  "kind": "VirtualMachine",
  "metadata": {"name": "vm1", "namespace": "default", "labels": {"app": "demo"},
               "annotations": {"description": "a VM"}, "finalizers": ["example.io/keep"]},
  "spec": {
    "runStrategy": "Always",
    "instancetype": {"name": "u1.medium", "kind": "VirtualMachineClusterInstancetype"},
    "preference": {"name": "fedora", "inferFromVolumeFailurePolicy": "Ignore"},
    "dataVolumeTemplates": [{
      "metadata": {"name": "root"},
      "spec": {
        "sourceRef": {"kind": "DataSource", "name": "fedora", "namespace": "os-images"},
        "storage": {"storageClassName": "fast", "resources": {"requests": {"storage": "30Gi"}}}
      }
    }],
    "template": {
      "metadata": {"labels": {"kubevirt.io/domain": "vm1"}, "annotations": {"a": "b"}},
      "spec": {
        "domain": {
          "cpu": {"cores": 2, "sockets": 1, "threads": 1, "model": "host-passthrough",
                  "features": [{"name": "vmx", "policy": "require"}]},
          "memory": {"guest": "2Gi", "hugepages": {"pageSize": "2Mi"}},
          "resources": {"requests": {"memory": "2Gi", "cpu": "500m"}, "limits": {"cpu": 2}},
          "machine": {"type": "q35"},
          "firmware": {"bootloader": {"efi": {"secureBoot": true}}},
          "features": {"smm": {"enabled": true}, "hyperv": {"spinlocks": {"spinlocks": 8191}}},
          "clock": {"utc": {"offsetSeconds": 0}, "timer": {"hpet": {"present": false}}},
          "ioThreads": {"supplementalPoolThreadCount": 2},
          "devices": {
            "disks": [{"name": "root", "bootOrder": 1, "disk": {"bus": "virtio"}},
                      {"name": "cloudinit", "cdrom": {"bus": "sata", "readonly": true}}],
            "interfaces": [{"name": "default", "masquerade": {}}],
            "autoattachGraphicsDevice": false
          }
        },
        "terminationGracePeriodSeconds": 30,
        "nodeSelector": {"kubernetes.io/arch": "amd64"},
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [{"name": "root", "dataVolume": {"name": "root"}},
                    {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config"}}]
      }
    }
  }
})";

constexpr std::string_view base_vmi = R"({
  "apiVersion": "kubevirt.io/v1",
  "kind": "VirtualMachineInstance",
  "metadata": {"name": "vmi1"},
  "spec": {
    "domain": {
      "cpu": {"cores": 1},
      "memory": {"guest": "1Gi"},
      "devices": {"disks": [{"name": "root", "disk": {"bus": "virtio"}}]}
    },
    "volumes": [{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]
  }
})";

constexpr std::string_view base_instancetype = R"({
  "apiVersion": "instancetype.kubevirt.io/v1beta1",
  "kind": "VirtualMachineClusterInstancetype",
  "metadata": {"name": "it1"},
  "spec": {"cpu": {"guest": 2}, "memory": {"guest": "4Gi"}}
})";

constexpr std::string_view base_preference = R"({
  "apiVersion": "instancetype.kubevirt.io/v1beta1",
  "kind": "VirtualMachineClusterPreference",
  "metadata": {"name": "pref1"},
  "spec": {"cpu": {"preferredCPUTopology": "preferSockets"}}
})";

std::string_view base_of(StructureKind kind) {
  switch (kind) {
    case StructureKind::virtual_machine:
      return base_vm;
    case StructureKind::virtual_machine_instance:
      return base_vmi;
    case StructureKind::instancetype_spec:
      return base_instancetype;
    case StructureKind::preference_spec:
      return base_preference;
  }
  return base_vm;
}

TEST(StructureValidator, BaseObjectsAreSound) {
  for (StructureKind kind : {StructureKind::virtual_machine, StructureKind::virtual_machine_instance,
                             StructureKind::instancetype_spec, StructureKind::preference_spec}) {
    const json::Document object = parse(base_of(kind));
    const ErrorList errors = validator().validate(kind, object);
    EXPECT_TRUE(errors.empty()) << describe(errors);
  }
}

// ---------------------------------------------------------------------------------------
// One broken field at a time.

constexpr std::string_view remove_member = "<remove>";

struct BrokenField {
  const char* name;
  StructureKind kind;
  const char* pointer;     // JSON pointer into the base object
  std::string_view value;  // JSON text set at `pointer`, or `remove_member`
  CauseType type;
  const char* field;
  const char* message;
};

void PrintTo(const BrokenField& c, std::ostream* os) {
  *os << c.name;
}

constexpr auto vm = StructureKind::virtual_machine;
constexpr auto vmi = StructureKind::virtual_machine_instance;
constexpr auto it = StructureKind::instancetype_spec;
constexpr auto pref = StructureKind::preference_spec;
constexpr auto invalid = CauseType::field_value_invalid;
constexpr auto required = CauseType::field_value_required;
constexpr auto forbidden = CauseType::field_value_forbidden;
constexpr auto not_supported = CauseType::field_value_not_supported;

const BrokenField broken_fields[] = {
    // VirtualMachine: metadata
    {"labels_value_number", vm, "/metadata/labels/app", "5", invalid, "metadata.labels[app]",
     R"(metadata.labels.app in body must be of type string: "number")"},
    {"labels_array", vm, "/metadata/labels", R"(["app"])", invalid, "metadata.labels",
     R"(metadata.labels in body must be of type object: "array")"},
    {"name_number", vm, "/metadata/name", "1", invalid, "metadata.name",
     R"(metadata.name in body must be of type string: "number")"},
    {"namespace_object", vm, "/metadata/namespace", "{}", invalid, "metadata.namespace",
     R"(metadata.namespace in body must be of type string: "object")"},
    {"finalizers_string", vm, "/metadata/finalizers", R"("example.io/keep")", invalid, "metadata.finalizers",
     R"(metadata.finalizers in body must be of type array: "string")"},
    {"finalizer_number", vm, "/metadata/finalizers/0", "1", invalid, "metadata.finalizers[0]",
     R"(metadata.finalizers in body must be of type string: "number")"},
    {"annotations_string", vm, "/metadata/annotations", R"("a=b")", invalid, "metadata.annotations",
     R"(metadata.annotations in body must be of type object: "string")"},
    // VirtualMachine: spec
    {"running_string", vm, "/spec/running", R"("true")", invalid, "spec.running",
     R"(spec.running in body must be of type boolean: "string")"},
    {"run_strategy_bool", vm, "/spec/runStrategy", "false", invalid, "spec.runStrategy",
     R"(spec.runStrategy in body must be of type string: "boolean")"},
    {"instancetype_string", vm, "/spec/instancetype", R"("u1.medium")", invalid, "spec.instancetype",
     R"(spec.instancetype in body must be of type object: "string")"},
    {"instancetype_name_number", vm, "/spec/instancetype/name", "1", invalid, "spec.instancetype.name",
     R"(spec.instancetype.name in body must be of type string: "number")"},
    {"instancetype_revision_bool", vm, "/spec/instancetype/revisionName", "true", invalid,
     "spec.instancetype.revisionName", R"(spec.instancetype.revisionName in body must be of type string: "boolean")"},
    {"preference_infer_number", vm, "/spec/preference/inferFromVolume", "1", invalid, "spec.preference.inferFromVolume",
     R"(spec.preference.inferFromVolume in body must be of type string: "number")"},
    {"preference_policy_array", vm, "/spec/preference/inferFromVolumeFailurePolicy", "[]", invalid,
     "spec.preference.inferFromVolumeFailurePolicy",
     R"(spec.preference.inferFromVolumeFailurePolicy in body must be of type string: "array")"},
    {"dvts_object", vm, "/spec/dataVolumeTemplates", "{}", invalid, "spec.dataVolumeTemplates",
     R"(spec.dataVolumeTemplates in body must be of type array: "object")"},
    {"dvt_storage_class_number", vm, "/spec/dataVolumeTemplates/0/spec/storage/storageClassName", "1", invalid,
     "spec.dataVolumeTemplates[0].spec.storage.storageClassName",
     R"(spec.dataVolumeTemplates.spec.storage.storageClassName in body must be of type string: "number")"},
    {"dvt_source_ref_name_missing", vm, "/spec/dataVolumeTemplates/0/spec/sourceRef/name", remove_member, required,
     "spec.dataVolumeTemplates[0].spec.sourceRef.name",
     "spec.dataVolumeTemplates.spec.sourceRef.name in body is required"},
    {"dvt_spec_missing", vm, "/spec/dataVolumeTemplates/0/spec", remove_member, required,
     "spec.dataVolumeTemplates[0].spec", "spec.dataVolumeTemplates.spec in body is required"},
    {"dvt_pvc_source_namespace_number", vm, "/spec/dataVolumeTemplates/0/spec/source",
     R"({"pvc": {"name": "golden", "namespace": 3}})", invalid, "spec.dataVolumeTemplates[0].spec.source.pvc.namespace",
     R"(spec.dataVolumeTemplates.spec.source.pvc.namespace in body must be of type string: "number")"},
    {"template_string", vm, "/spec/template", R"("vm")", invalid, "spec.template",
     R"(spec.template in body must be of type object: "string")"},
    {"template_annotations_string", vm, "/spec/template/metadata/annotations", R"("x")", invalid,
     "spec.template.metadata.annotations",
     R"(spec.template.metadata.annotations in body must be of type object: "string")"},
    // VirtualMachine: the VMI template's spec
    {"cores_string", vm, "/spec/template/spec/domain/cpu/cores", R"("4")", invalid,
     "spec.template.spec.domain.cpu.cores",
     R"(spec.template.spec.domain.cpu.cores in body must be of type integer: "string")"},
    {"sockets_negative", vm, "/spec/template/spec/domain/cpu/sockets", "-1", invalid,
     "spec.template.spec.domain.cpu.sockets",
     "spec.template.spec.domain.cpu.sockets in body should be greater than or equal to 0"},
    {"sockets_above_uint32", vm, "/spec/template/spec/domain/cpu/sockets", "4294967296", invalid,
     "spec.template.spec.domain.cpu.sockets",
     "spec.template.spec.domain.cpu.sockets in body should be less than or equal to 4294967295"},
    {"threads_fraction", vm, "/spec/template/spec/domain/cpu/threads", "2.5", invalid,
     "spec.template.spec.domain.cpu.threads",
     R"(spec.template.spec.domain.cpu.threads in body must be of type integer: "number")"},
    {"max_sockets_huge", vm, "/spec/template/spec/domain/cpu/maxSockets", "18446744073709551615", invalid,
     "spec.template.spec.domain.cpu.maxSockets",
     "spec.template.spec.domain.cpu.maxSockets in body should be less than or equal to 4294967295"},
    {"model_number", vm, "/spec/template/spec/domain/cpu/model", "5", invalid, "spec.template.spec.domain.cpu.model",
     R"(spec.template.spec.domain.cpu.model in body must be of type string: "number")"},
    {"cpu_features_object", vm, "/spec/template/spec/domain/cpu/features", R"({"name": "vmx"})", invalid,
     "spec.template.spec.domain.cpu.features",
     R"(spec.template.spec.domain.cpu.features in body must be of type array: "object")"},
    {"cpu_feature_policy_number", vm, "/spec/template/spec/domain/cpu/features/0/policy", "1", invalid,
     "spec.template.spec.domain.cpu.features[0].policy",
     R"(spec.template.spec.domain.cpu.features.policy in body must be of type string: "number")"},
    {"cpu_feature_name_missing", vm, "/spec/template/spec/domain/cpu/features/0/name", remove_member, required,
     "spec.template.spec.domain.cpu.features[0].name",
     "spec.template.spec.domain.cpu.features.name in body is required"},
    {"dedicated_cpu_string", vm, "/spec/template/spec/domain/cpu/dedicatedCpuPlacement", R"("true")", invalid,
     "spec.template.spec.domain.cpu.dedicatedCpuPlacement",
     R"(spec.template.spec.domain.cpu.dedicatedCpuPlacement in body must be of type boolean: "string")"},
    {"numa_passthrough_bool", vm, "/spec/template/spec/domain/cpu/numa/guestMappingPassthrough", "true", invalid,
     "spec.template.spec.domain.cpu.numa.guestMappingPassthrough",
     R"(spec.template.spec.domain.cpu.numa.guestMappingPassthrough in body must be of type object: "boolean")"},
    {"memory_guest_bool", vm, "/spec/template/spec/domain/memory/guest", "true", invalid,
     "spec.template.spec.domain.memory.guest",
     R"(spec.template.spec.domain.memory.guest in body must be of type string,integer,number: "boolean")"},
    {"hugepages_page_size_number", vm, "/spec/template/spec/domain/memory/hugepages/pageSize", "2048", invalid,
     "spec.template.spec.domain.memory.hugepages.pageSize",
     R"(spec.template.spec.domain.memory.hugepages.pageSize in body must be of type string: "number")"},
    {"requests_array", vm, "/spec/template/spec/domain/resources/requests", R"(["memory"])", invalid,
     "spec.template.spec.domain.resources.requests",
     R"(spec.template.spec.domain.resources.requests in body must be of type object: "array")"},
    {"limits_value_bool", vm, "/spec/template/spec/domain/resources/limits/cpu", "true", invalid,
     "spec.template.spec.domain.resources.limits[cpu]",
     R"(spec.template.spec.domain.resources.limits.cpu in body must be of type string,integer,number: "boolean")"},
    {"machine_type_number", vm, "/spec/template/spec/domain/machine/type", "35", invalid,
     "spec.template.spec.domain.machine.type",
     R"(spec.template.spec.domain.machine.type in body must be of type string: "number")"},
    {"secure_boot_string", vm, "/spec/template/spec/domain/firmware/bootloader/efi/secureBoot", R"("true")", invalid,
     "spec.template.spec.domain.firmware.bootloader.efi.secureBoot",
     R"(spec.template.spec.domain.firmware.bootloader.efi.secureBoot in body must be of type boolean: "string")"},
    {"smm_bool", vm, "/spec/template/spec/domain/features/smm", "true", invalid,
     "spec.template.spec.domain.features.smm",
     R"(spec.template.spec.domain.features.smm in body must be of type object: "boolean")"},
    {"spinlocks_negative", vm, "/spec/template/spec/domain/features/hyperv/spinlocks/spinlocks", "-5", invalid,
     "spec.template.spec.domain.features.hyperv.spinlocks.spinlocks",
     "spec.template.spec.domain.features.hyperv.spinlocks.spinlocks in body should be greater than "
     "or equal to 0"},
    {"offset_seconds_string", vm, "/spec/template/spec/domain/clock/utc/offsetSeconds", R"("3600")", invalid,
     "spec.template.spec.domain.clock.utc.offsetSeconds",
     R"(spec.template.spec.domain.clock.utc.offsetSeconds in body must be of type integer: "string")"},
    {"io_threads_count_string", vm, "/spec/template/spec/domain/ioThreads/supplementalPoolThreadCount", R"("2")",
     invalid, "spec.template.spec.domain.ioThreads.supplementalPoolThreadCount",
     R"(spec.template.spec.domain.ioThreads.supplementalPoolThreadCount in body must be of type integer: "string")"},
    {"disks_object", vm, "/spec/template/spec/domain/devices/disks", R"({"name": "root"})", invalid,
     "spec.template.spec.domain.devices.disks",
     R"(spec.template.spec.domain.devices.disks in body must be of type array: "object")"},
    {"disk_item_string", vm, "/spec/template/spec/domain/devices/disks/1", R"("cloudinit")", invalid,
     "spec.template.spec.domain.devices.disks[1]",
     R"(spec.template.spec.domain.devices.disks in body must be of type object: "string")"},
    {"disk_name_missing", vm, "/spec/template/spec/domain/devices/disks/0/name", remove_member, required,
     "spec.template.spec.domain.devices.disks[0].name",
     "spec.template.spec.domain.devices.disks.name in body is required"},
    // A required member given as null is missing: kube-apiserver prunes the null before any
    // webhook sees the object (PruneNonNullableNullsWithoutDefaults).
    {"disk_name_null", vm, "/spec/template/spec/domain/devices/disks/0/name", "null", required,
     "spec.template.spec.domain.devices.disks[0].name",
     "spec.template.spec.domain.devices.disks.name in body is required"},
    {"devices_null", vm, "/spec/template/spec/domain/devices", "null", required, "spec.template.spec.domain.devices",
     "spec.template.spec.domain.devices in body is required"},
    {"template_null", vm, "/spec/template", "null", required, "spec.template", "spec.template in body is required"},
    {"spec_null", vm, "/spec", "null", required, "spec", "spec in body is required"},
    {"dv_source_ref_kind_null", vm, "/spec/dataVolumeTemplates/0/spec/sourceRef/kind", "null", required,
     "spec.dataVolumeTemplates[0].spec.sourceRef.kind",
     "spec.dataVolumeTemplates.spec.sourceRef.kind in body is required"},
    {"boot_order_string", vm, "/spec/template/spec/domain/devices/disks/0/bootOrder", R"("1")", invalid,
     "spec.template.spec.domain.devices.disks[0].bootOrder",
     R"(spec.template.spec.domain.devices.disks.bootOrder in body must be of type integer: "string")"},
    {"disk_bus_number", vm, "/spec/template/spec/domain/devices/disks/0/disk/bus", "1", invalid,
     "spec.template.spec.domain.devices.disks[0].disk.bus",
     R"(spec.template.spec.domain.devices.disks.disk.bus in body must be of type string: "number")"},
    {"cdrom_readonly_string", vm, "/spec/template/spec/domain/devices/disks/1/cdrom/readonly", R"("yes")", invalid,
     "spec.template.spec.domain.devices.disks[1].cdrom.readonly",
     R"(spec.template.spec.domain.devices.disks.cdrom.readonly in body must be of type boolean: "string")"},
    {"masquerade_bool", vm, "/spec/template/spec/domain/devices/interfaces/0/masquerade", "true", invalid,
     "spec.template.spec.domain.devices.interfaces[0].masquerade",
     R"(spec.template.spec.domain.devices.interfaces.masquerade in body must be of type object: "boolean")"},
    {"autoattach_graphics_string", vm, "/spec/template/spec/domain/devices/autoattachGraphicsDevice", R"("false")",
     invalid, "spec.template.spec.domain.devices.autoattachGraphicsDevice",
     R"(spec.template.spec.domain.devices.autoattachGraphicsDevice in body must be of type boolean: "string")"},
    {"termination_grace_string", vm, "/spec/template/spec/terminationGracePeriodSeconds", R"("30")", invalid,
     "spec.template.spec.terminationGracePeriodSeconds",
     R"(spec.template.spec.terminationGracePeriodSeconds in body must be of type integer: "string")"},
    {"node_selector_array", vm, "/spec/template/spec/nodeSelector", R"(["amd64"])", invalid,
     "spec.template.spec.nodeSelector", R"(spec.template.spec.nodeSelector in body must be of type object: "array")"},
    {"node_selector_value_bool", vm, "/spec/template/spec/nodeSelector/kubernetes.io~1arch", "true", invalid,
     "spec.template.spec.nodeSelector[kubernetes.io/arch]",
     R"(spec.template.spec.nodeSelector.kubernetes.io/arch in body must be of type string: "boolean")"},
    {"architecture_number", vm, "/spec/template/spec/architecture", "64", invalid, "spec.template.spec.architecture",
     R"(spec.template.spec.architecture in body must be of type string: "number")"},
    {"network_pod_string", vm, "/spec/template/spec/networks/0/pod", R"("default")", invalid,
     "spec.template.spec.networks[0].pod",
     R"(spec.template.spec.networks.pod in body must be of type object: "string")"},
    {"user_data_number", vm, "/spec/template/spec/volumes/1/cloudInitNoCloud/userData", "7", invalid,
     "spec.template.spec.volumes[1].cloudInitNoCloud.userData",
     R"(spec.template.spec.volumes.cloudInitNoCloud.userData in body must be of type string: "number")"},
    {"data_volume_name_missing", vm, "/spec/template/spec/volumes/0/dataVolume", "{}", required,
     "spec.template.spec.volumes[0].dataVolume.name", "spec.template.spec.volumes.dataVolume.name in body is required"},
    {"pull_policy_not_supported", vm, "/spec/template/spec/volumes/0/containerDisk",
     R"({"image": "quay.io/x", "imagePullPolicy": "Sometimes"})", not_supported,
     "spec.template.spec.volumes[0].containerDisk.imagePullPolicy",
     "spec.template.spec.volumes.containerDisk.imagePullPolicy in body should be one of [Always "
     "IfNotPresent Never]"},
    {"pull_policy_number_is_a_type_error", vm, "/spec/template/spec/volumes/0/containerDisk",
     R"({"image": "quay.io/x", "imagePullPolicy": 1})", invalid,
     "spec.template.spec.volumes[0].containerDisk.imagePullPolicy",
     R"(spec.template.spec.volumes.containerDisk.imagePullPolicy in body must be of type string: "number")"},
    {"pvc_read_only_string", vm, "/spec/template/spec/volumes/0/persistentVolumeClaim",
     R"({"claimName": "disk", "readOnly": "no"})", invalid,
     "spec.template.spec.volumes[0].persistentVolumeClaim.readOnly",
     R"(spec.template.spec.volumes.persistentVolumeClaim.readOnly in body must be of type boolean: "string")"},
    {"empty_disk_capacity_missing", vm, "/spec/template/spec/volumes/0/emptyDisk", "{}", required,
     "spec.template.spec.volumes[0].emptyDisk.capacity",
     "spec.template.spec.volumes.emptyDisk.capacity in body is required"},
    // VirtualMachineInstance
    {"vmi_cores_string", vmi, "/spec/domain/cpu/cores", R"("4")", invalid, "spec.domain.cpu.cores",
     R"(spec.domain.cpu.cores in body must be of type integer: "string")"},
    {"vmi_domain_array", vmi, "/spec/domain", "[]", invalid, "spec.domain",
     R"(spec.domain in body must be of type object: "array")"},
    {"vmi_spec_string", vmi, "/spec", R"("spec")", invalid, "spec", R"(spec in body must be of type object: "string")"},
    {"vmi_hostname_number", vmi, "/spec/hostname", "1", invalid, "spec.hostname",
     R"(spec.hostname in body must be of type string: "number")"},
    {"vmi_eviction_strategy_bool", vmi, "/spec/evictionStrategy", "true", invalid, "spec.evictionStrategy",
     R"(spec.evictionStrategy in body must be of type string: "boolean")"},
    {"vmi_domain_null", vmi, "/spec/domain", "null", required, "spec.domain", "spec.domain in body is required"},
    {"vmi_devices_null", vmi, "/spec/domain/devices", "null", required, "spec.domain.devices",
     "spec.domain.devices in body is required"},
    {"vmi_image_null", vmi, "/spec/volumes/0/containerDisk/image", "null", required,
     "spec.volumes[0].containerDisk.image", "spec.volumes.containerDisk.image in body is required"},
    {"vmi_image_missing", vmi, "/spec/volumes/0/containerDisk/image", remove_member, required,
     "spec.volumes[0].containerDisk.image", "spec.volumes.containerDisk.image in body is required"},
    // Enums of the Kubernetes core types KubeVirt's OpenAPI definitions carry (client-go
    // api/openapi_generated.go, the same at v1.8.2 and d923fdb815).
    {"vmi_toleration_operator", vmi, "/spec/tolerations", R"([{"key": "k", "operator": "Maybe"}])", not_supported,
     "spec.tolerations[0].operator", "spec.tolerations.operator in body should be one of [Equal Exists]"},
    {"vmi_toleration_effect", vmi, "/spec/tolerations", R"([{"key": "k", "operator": "Exists", "effect": "NoRun"}])",
     not_supported, "spec.tolerations[0].effect",
     "spec.tolerations.effect in body should be one of [NoExecute NoSchedule PreferNoSchedule]"},
    {"vmi_spread_when", vmi, "/spec/topologySpreadConstraints",
     R"([{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Maybe"}])", not_supported,
     "spec.topologySpreadConstraints[0].whenUnsatisfiable",
     "spec.topologySpreadConstraints.whenUnsatisfiable in body should be one of [DoNotSchedule ScheduleAnyway]"},
    {"vmi_spread_taints_policy", vmi, "/spec/topologySpreadConstraints",
     R"([{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "nodeTaintsPolicy": "x"}])",
     not_supported, "spec.topologySpreadConstraints[0].nodeTaintsPolicy",
     "spec.topologySpreadConstraints.nodeTaintsPolicy in body should be one of [Honor Ignore]"},
    {"vmi_node_affinity_operator", vmi, "/spec/affinity",
     R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
         {"matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]}]}}})",
     not_supported,
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
     "matchExpressions[0].operator",
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.matchExpressions."
     "operator in body should be one of [DoesNotExist Exists Gt In Lt NotIn]"},
    {"vmi_probe_scheme", vmi, "/spec/readinessProbe", R"({"httpGet": {"port": 80, "scheme": "FTP"}})", not_supported,
     "spec.readinessProbe.httpGet.scheme", "spec.readinessProbe.httpGet.scheme in body should be one of [HTTP HTTPS]"},
    {"dvt_access_mode", vm, "/spec/dataVolumeTemplates/0/spec/storage/accessModes", R"(["ReadWriteSometimes"])",
     not_supported, "spec.dataVolumeTemplates[0].spec.storage.accessModes[0]",
     "spec.dataVolumeTemplates.spec.storage.accessModes in body should be one of [ReadOnlyMany ReadWriteMany "
     "ReadWriteOnce ReadWriteOncePod]"},
    {"dvt_volume_mode", vm, "/spec/dataVolumeTemplates/0/spec/storage/volumeMode", R"("Raw")", not_supported,
     "spec.dataVolumeTemplates[0].spec.storage.volumeMode",
     "spec.dataVolumeTemplates.spec.storage.volumeMode in body should be one of [Block Filesystem "
     "FromStorageProfile]"},
    {"vmi_gpus_object", vmi, "/spec/domain/devices/gpus", "{}", invalid, "spec.domain.devices.gpus",
     R"(spec.domain.devices.gpus in body must be of type array: "object")"},
    {"vmi_host_device_name_number", vmi, "/spec/domain/devices/hostDevices", R"([{"name": 1}])", invalid,
     "spec.domain.devices.hostDevices[0].name",
     R"(spec.domain.devices.hostDevices.name in body must be of type string: "number")"},
    {"vmi_tpm_bool", vmi, "/spec/domain/devices/tpm", "true", invalid, "spec.domain.devices.tpm",
     R"(spec.domain.devices.tpm in body must be of type object: "boolean")"},
    {"vmi_launch_security_string", vmi, "/spec/domain/launchSecurity", R"("sev")", invalid,
     "spec.domain.launchSecurity", R"(spec.domain.launchSecurity in body must be of type object: "string")"},
    // Instancetypes
    {"it_guest_string", it, "/spec/cpu/guest", R"("2")", invalid, "spec.cpu.guest",
     R"(spec.cpu.guest in body must be of type integer: "string")"},
    {"it_guest_negative", it, "/spec/cpu/guest", "-1", invalid, "spec.cpu.guest",
     "spec.cpu.guest in body should be greater than or equal to 0"},
    {"it_guest_missing", it, "/spec/cpu/guest", remove_member, required, "spec.cpu.guest",
     "spec.cpu.guest in body is required"},
    {"it_memory_missing", it, "/spec/memory", remove_member, required, "spec.memory",
     "spec.memory in body is required"},
    {"it_spec_missing", it, "/spec", remove_member, required, "spec", "spec in body is required"},
    {"it_guest_null", it, "/spec/cpu/guest", "null", required, "spec.cpu.guest", "spec.cpu.guest in body is required"},
    {"it_memory_null", it, "/spec/memory", "null", required, "spec.memory", "spec.memory in body is required"},
    {"it_spec_null", it, "/spec", "null", required, "spec", "spec in body is required"},
    {"it_memory_guest_array", it, "/spec/memory/guest", "[]", invalid, "spec.memory.guest",
     R"(spec.memory.guest in body must be of type string,integer,number: "array")"},
    {"it_overcommit_string", it, "/spec/memory/overcommitPercent", R"("10")", invalid, "spec.memory.overcommitPercent",
     R"(spec.memory.overcommitPercent in body must be of type integer: "string")"},
    {"it_dedicated_string", it, "/spec/cpu/dedicatedCPUPlacement", R"("true")", invalid,
     "spec.cpu.dedicatedCPUPlacement", R"(spec.cpu.dedicatedCPUPlacement in body must be of type boolean: "string")"},
    {"it_max_sockets_above_uint32", it, "/spec/cpu/maxSockets", "4294967296", invalid, "spec.cpu.maxSockets",
     "spec.cpu.maxSockets in body should be less than or equal to 4294967295"},
    {"it_node_selector_value_number", it, "/spec/nodeSelector", R"({"zone": 1})", invalid, "spec.nodeSelector[zone]",
     R"(spec.nodeSelector.zone in body must be of type string: "number")"},
    {"it_annotations_array", it, "/spec/annotations", "[]", invalid, "spec.annotations",
     R"(spec.annotations in body must be of type object: "array")"},
    {"it_page_size_number", it, "/spec/memory/hugepages", R"({"pageSize": 1})", invalid,
     "spec.memory.hugepages.pageSize", R"(spec.memory.hugepages.pageSize in body must be of type string: "number")"},
    {"it_io_threads_policy_bool", it, "/spec/ioThreadsPolicy", "true", invalid, "spec.ioThreadsPolicy",
     R"(spec.ioThreadsPolicy in body must be of type string: "boolean")"},
    // Preferences
    {"pref_spec_missing", pref, "/spec", remove_member, required, "spec", "spec in body is required"},
    {"pref_topology_number", pref, "/spec/cpu/preferredCPUTopology", "1", invalid, "spec.cpu.preferredCPUTopology",
     R"(spec.cpu.preferredCPUTopology in body must be of type string: "number")"},
    {"pref_spread_ratio_string", pref, "/spec/cpu/spreadOptions", R"({"ratio": "2"})", invalid,
     "spec.cpu.spreadOptions.ratio", R"(spec.cpu.spreadOptions.ratio in body must be of type integer: "string")"},
    {"pref_spread_across_number", pref, "/spec/cpu/spreadOptions", R"({"across": 1})", invalid,
     "spec.cpu.spreadOptions.across", R"(spec.cpu.spreadOptions.across in body must be of type string: "number")"},
    {"pref_cpu_feature_name_missing", pref, "/spec/cpu/preferredCPUFeatures", R"([{"policy": "require"}])", required,
     "spec.cpu.preferredCPUFeatures[0].name", "spec.cpu.preferredCPUFeatures.name in body is required"},
    {"pref_socket_core_ratio_negative", pref, "/spec/preferSpreadSocketToCoreRatio", "-2", invalid,
     "spec.preferSpreadSocketToCoreRatio",
     "spec.preferSpreadSocketToCoreRatio in body should be greater than or equal to 0"},
    {"pref_disk_bus_number", pref, "/spec/devices", R"({"preferredDiskBus": 1})", invalid,
     "spec.devices.preferredDiskBus", R"(spec.devices.preferredDiskBus in body must be of type string: "number")"},
    {"pref_autoattach_string", pref, "/spec/devices", R"({"preferredAutoattachGraphicsDevice": "false"})", invalid,
     "spec.devices.preferredAutoattachGraphicsDevice",
     R"(spec.devices.preferredAutoattachGraphicsDevice in body must be of type boolean: "string")"},
    {"pref_tpm_bool", pref, "/spec/devices", R"({"preferredTPM": true})", invalid, "spec.devices.preferredTPM",
     R"(spec.devices.preferredTPM in body must be of type object: "boolean")"},
    {"pref_block_size_logical_string", pref, "/spec/devices",
     R"({"preferredDiskBlockSize": {"custom": {"logical": "512"}}})", invalid,
     "spec.devices.preferredDiskBlockSize.custom.logical",
     R"(spec.devices.preferredDiskBlockSize.custom.logical in body must be of type integer: "string")"},
    {"pref_smm_enabled_string", pref, "/spec/features", R"({"preferredSmm": {"enabled": "yes"}})", invalid,
     "spec.features.preferredSmm.enabled",
     R"(spec.features.preferredSmm.enabled in body must be of type boolean: "string")"},
    {"pref_hyperv_vendorid_number", pref, "/spec/features", R"({"preferredHyperv": {"vendorid": {"vendorid": 1}}})",
     invalid, "spec.features.preferredHyperv.vendorid.vendorid",
     R"(spec.features.preferredHyperv.vendorid.vendorid in body must be of type string: "number")"},
    {"pref_use_efi_string", pref, "/spec/firmware", R"({"preferredUseEfi": "true"})", invalid,
     "spec.firmware.preferredUseEfi", R"(spec.firmware.preferredUseEfi in body must be of type boolean: "string")"},
    {"pref_efi_secure_boot_number", pref, "/spec/firmware", R"({"preferredEfi": {"secureBoot": 1}})", invalid,
     "spec.firmware.preferredEfi.secureBoot",
     R"(spec.firmware.preferredEfi.secureBoot in body must be of type boolean: "number")"},
    {"pref_machine_type_number", pref, "/spec/machine", R"({"preferredMachineType": 1})", invalid,
     "spec.machine.preferredMachineType",
     R"(spec.machine.preferredMachineType in body must be of type string: "number")"},
    {"pref_storage_class_number", pref, "/spec/volumes", R"({"preferredStorageClassName": 1})", invalid,
     "spec.volumes.preferredStorageClassName",
     R"(spec.volumes.preferredStorageClassName in body must be of type string: "number")"},
    {"pref_requirements_cpu_string", pref, "/spec/requirements", R"({"cpu": {"guest": "1"}})", invalid,
     "spec.requirements.cpu.guest", R"(spec.requirements.cpu.guest in body must be of type integer: "string")"},
    {"pref_requirements_memory_guest_missing", pref, "/spec/requirements", R"({"memory": {}})", required,
     "spec.requirements.memory.guest", "spec.requirements.memory.guest in body is required"},
    {"pref_requirements_memory_guest_bool", pref, "/spec/requirements", R"({"memory": {"guest": false}})", invalid,
     "spec.requirements.memory.guest",
     R"(spec.requirements.memory.guest in body must be of type string,integer,number: "boolean")"},
    {"pref_clock_offset_string", pref, "/spec/clock", R"({"preferredClockOffset": {"utc": {"offsetSeconds": "1"}}})",
     invalid, "spec.clock.preferredClockOffset.utc.offsetSeconds",
     R"(spec.clock.preferredClockOffset.utc.offsetSeconds in body must be of type integer: "string")"},
    {"pref_timer_present_string", pref, "/spec/clock", R"({"preferredTimer": {"hpet": {"present": "no"}}})", invalid,
     "spec.clock.preferredTimer.hpet.present",
     R"(spec.clock.preferredTimer.hpet.present in body must be of type boolean: "string")"},
    {"pref_termination_grace_string", pref, "/spec/preferredTerminationGracePeriodSeconds", R"("30")", invalid,
     "spec.preferredTerminationGracePeriodSeconds",
     R"(spec.preferredTerminationGracePeriodSeconds in body must be of type integer: "string")"},
    {"pref_architecture_number", pref, "/spec/preferredArchitecture", "1", invalid, "spec.preferredArchitecture",
     R"(spec.preferredArchitecture in body must be of type string: "number")"},
    {"pref_subdomain_bool", pref, "/spec/preferredSubdomain", "true", invalid, "spec.preferredSubdomain",
     R"(spec.preferredSubdomain in body must be of type string: "boolean")"},
    {"pref_annotation_value_bool", pref, "/spec/annotations", R"({"x": true})", invalid, "spec.annotations[x]",
     R"(spec.annotations.x in body must be of type string: "boolean")"},
    {"pref_launch_security_array", pref, "/spec/preferredLaunchSecurity", "[]", invalid, "spec.preferredLaunchSecurity",
     R"(spec.preferredLaunchSecurity in body must be of type object: "array")"},
};

class StructureBrokenField : public ::testing::TestWithParam<BrokenField> {};

TEST_P(StructureBrokenField, GivesExactlyOneCause) {
  const BrokenField& c = GetParam();
  json::Document object = parse(base_of(c.kind));
  const rapidjson::Pointer pointer(c.pointer);
  ASSERT_TRUE(pointer.IsValid()) << c.pointer;
  if (c.value == remove_member) {
    ASSERT_TRUE(pointer.Erase(object)) << c.pointer << " is not in the base object";
  } else {
    json::Document value = parse(c.value);
    pointer.Set(object, static_cast<const json::Value&>(value));  // a deep copy
  }
  const ErrorList errors = validator().validate(c.kind, object);
  ASSERT_EQ(errors.size(), 1U) << describe(errors);
  EXPECT_EQ(to_string(errors[0].type), to_string(c.type));
  EXPECT_EQ(errors[0].field, c.field);
  EXPECT_EQ(errors[0].message, c.message);
}

INSTANTIATE_TEST_SUITE_P(Structure, StructureBrokenField, ::testing::ValuesIn(broken_fields),
                         [](const ::testing::TestParamInfo<BrokenField>& param) { return param.param.name; });

// ---------------------------------------------------------------------------------------
// Null, ordering, roots.

TEST(StructureValidator, NullIsAcceptedForEveryOptionalField) {
  const json::Document object = parse(R"({
    "metadata": {"name": null, "labels": null, "annotations": {"a": null}, "finalizers": [null]},
    "spec": {"running": null, "instancetype": null, "preference": {"name": null},
             "dataVolumeTemplates": [null],
             "template": {"metadata": null, "spec": {
               "domain": {"cpu": {"cores": null, "model": null, "features": null},
                          "memory": {"guest": null}, "resources": {"requests": {"memory": null}},
                          "devices": {"disks": [{"name": "a", "bootOrder": null, "disk": null}],
                                      "interfaces": null}},
               "terminationGracePeriodSeconds": null, "nodeSelector": null,
               "volumes": [{"name": "a", "containerDisk": {"image": "x", "imagePullPolicy": null}}]}}}
  })");
  const ErrorList errors = validator().validate(StructureKind::virtual_machine, object);
  EXPECT_TRUE(errors.empty()) << describe(errors);
}

TEST(StructureValidator, BoundaryValuesAreAccepted) {
  const json::Document object = parse(R"({
    "spec": {"template": {"spec": {
      "terminationGracePeriodSeconds": -1,
      "domain": {"cpu": {"sockets": 4294967295, "cores": 0, "threads": 1},
                 "memory": {"guest": 1073741824, "maxGuest": 1.5},
                 "resources": {"requests": {"cpu": 0.5, "memory": "1Gi"}},
                 "clock": {"utc": {"offsetSeconds": -3600}},
                 "devices": {"disks": [{"name": "a", "bootOrder": 18446744073709551615}]}}}}}
  })");
  const ErrorList errors = validator().validate(StructureKind::virtual_machine, object);
  EXPECT_TRUE(errors.empty()) << describe(errors);

  // The same values next to a real error: still no cause of their own (valijson alone would
  // read the uint64 bootOrder as -1).
  json::Document broken = parse(dump(object));
  rapidjson::Pointer("/spec/template/spec/domain/cpu/threads").Set(broken, "1");
  const ErrorList one = validator().validate(StructureKind::virtual_machine, broken);
  ASSERT_EQ(one.size(), 1U) << describe(one);
  EXPECT_EQ(one[0].field, "spec.template.spec.domain.cpu.threads");
}

TEST(StructureValidator, UnknownFieldsAreForbiddenOutsideStatusAndMetadata) {
  // KubeVirt's openapi.go: additionalProperties false on every definition of the spec, the
  // top level limited to apiVersion, kind, metadata, spec and status; status and metadata
  // are not checked. An unknown member is reported once, whatever it holds.
  const json::Document object = parse(R"({
    "status": {"ready": "maybe"}, "extra": [1, 2],
    "metadata": {"creationTimestamp": null, "managedFields": [{"manager": "m", "x": 1}]},
    "spec": {"somethingNew": 5, "template": {"spec": {"domain": {"cpu": {"futureKnob": "x"}, "devices": {}},
             "affinity": {"nodeAffinity": {"deep": [[[]]]}}}}}
  })");
  const ErrorList errors = validator().validate(StructureKind::virtual_machine, object);
  const ErrorList expected = {
      {forbidden, "extra", ".extra in body is a forbidden property"},
      {forbidden, "spec.somethingNew", "spec.somethingNew in body is a forbidden property"},
      {forbidden, "spec.template.spec.domain.cpu.futureKnob",
       "spec.template.spec.domain.cpu.futureKnob in body is a forbidden property"},
      {forbidden, "spec.template.spec.affinity.nodeAffinity.deep",
       "spec.template.spec.affinity.nodeAffinity.deep in body is a forbidden property"},
  };
  EXPECT_EQ(errors, expected) << describe(errors);
}

TEST(StructureValidator, UnknownFieldsOfAVirtualMachineInstanceAsKubeVirtsTestsHaveThem) {
  // vmi-create-admitter_test.go "should allow unknown fields in the status to allow updates".
  const json::Document object =
      parse(R"({"very": "unknown", "spec": {"extremely": "unknown"}, "status": {"unknown": "allowed"}})");
  const ErrorList errors = validator().validate(StructureKind::virtual_machine_instance, object);
  const ErrorList expected = {
      {forbidden, "very", ".very in body is a forbidden property"},
      {forbidden, "spec.extremely", "spec.extremely in body is a forbidden property"},
      {required, "spec.domain", "spec.domain in body is required"},
  };
  EXPECT_EQ(errors, expected) << describe(errors);
}

TEST(StructureValidator, RequiredMembersOfTheApiAndTheTemplatesMetadata) {
  // vms-admitter_test.go: "domain" renamed "not-a-domain".
  const json::Document renamed = parse(R"({"spec": {"template": {"spec": {"not-a-domain": {"devices": {}}}}}})");
  ErrorList errors = validator().validate(StructureKind::virtual_machine, renamed);
  ErrorList expected = {
      {forbidden, "spec.template.spec.not-a-domain", "spec.template.spec.not-a-domain in body is a forbidden property"},
      {required, "spec.template.spec.domain", "spec.template.spec.domain in body is required"},
  };
  EXPECT_EQ(errors, expected) << describe(errors);

  const json::Document missing = parse(R"({"metadata": {"name": "vm"}})");
  errors = validator().validate(StructureKind::virtual_machine, missing);
  expected = {{required, "spec", "spec in body is required"}};
  EXPECT_EQ(errors, expected) << describe(errors);

  // List items, map values and the template's metadata are followed; a disk without a name,
  // a containerDisk without an image.
  const json::Document items = parse(R"({"spec": {"template": {
      "metadata": {"labels": {"a": "b"}, "colour": "red"},
      "spec": {"domain": {"devices": {"disks": [{"name": "a"}, {"disk": {}}]},
                          "resources": {"requests": {"memory": "1Gi"}}},
               "volumes": [{"name": "a", "containerDisk": {"imagePullPolicy": "Always"}}]}}}})");
  errors = validator().validate(StructureKind::virtual_machine, items);
  expected = {
      {forbidden, "spec.template.metadata.colour", "spec.template.metadata.colour in body is a forbidden property"},
      {required, "spec.template.spec.domain.devices.disks[1].name",
       "spec.template.spec.domain.devices.disks.name in body is required"},
      {required, "spec.template.spec.volumes[0].containerDisk.image",
       "spec.template.spec.volumes.containerDisk.image in body is required"},
  };
  EXPECT_EQ(errors, expected) << describe(errors);
}

TEST(StructureValidator, NamesFirstThenTypesEachInDocumentOrderOnePerPath) {
  // Schema order (alphabetical) would put running before metadata; the document's order wins.
  // A member both checks find missing is reported once, with the names.
  const json::Document object = parse(R"({
    "spec": {
      "template": {"spec": {"domain": {"devices": {"disks": [{"name": "a"}, {"bootOrder": "1"}]},
                                       "cpu": {"threads": "1", "cores": -1}}}},
      "running": "yes"
    },
    "metadata": {"name": 5, "labels": {"b": 1, "a": 2}}
  })");
  const ErrorList errors = validator().validate(StructureKind::virtual_machine, object);
  const ErrorList expected = {
      {required, "spec.template.spec.domain.devices.disks[1].name",
       "spec.template.spec.domain.devices.disks.name in body is required"},
      {invalid, "spec.template.spec.domain.devices.disks[1].bootOrder",
       R"(spec.template.spec.domain.devices.disks.bootOrder in body must be of type integer: "string")"},
      {invalid, "spec.template.spec.domain.cpu.threads",
       R"(spec.template.spec.domain.cpu.threads in body must be of type integer: "string")"},
      {invalid, "spec.template.spec.domain.cpu.cores",
       "spec.template.spec.domain.cpu.cores in body should be greater than or equal to 0"},
      {invalid, "spec.running", R"(spec.running in body must be of type boolean: "string")"},
      {invalid, "metadata.name", R"(metadata.name in body must be of type string: "number")"},
      {invalid, "metadata.labels[b]", R"(metadata.labels.b in body must be of type string: "number")"},
      {invalid, "metadata.labels[a]", R"(metadata.labels.a in body must be of type string: "number")"},
  };
  EXPECT_EQ(errors, expected) << describe(errors);
}

TEST(StructureValidator, NonObjectRootsGiveOneCauseWithoutPath) {
  const std::pair<std::string_view, std::string_view> roots[] = {{"[]", "array"},       {R"([{"spec": {}}])", "array"},
                                                                 {"5", "number"},       {"1.5", "number"},
                                                                 {R"("vm")", "string"}, {"true", "boolean"},
                                                                 {"null", "null"}};
  for (StructureKind kind : {StructureKind::virtual_machine, StructureKind::virtual_machine_instance,
                             StructureKind::instancetype_spec, StructureKind::preference_spec}) {
    for (const auto& [text, type] : roots) {
      const json::Document object = parse(text);
      const ErrorList errors = validator().validate(kind, object);
      const ErrorList expected = {{invalid, "", "body must be of type object: \"" + std::string(type) + "\""}};
      EXPECT_EQ(errors, expected) << text << "\n" << describe(errors);
    }
  }
}

TEST(StructureValidator, VirtualMachineWhoseRootIsAnArrayOfVirtualMachines) {
  const json::Document object = parse("[" + std::string(base_vm) + "]");
  const ErrorList errors = validator().validate(StructureKind::virtual_machine, object);
  ASSERT_EQ(errors.size(), 1U) << describe(errors);
  EXPECT_EQ(errors[0].field, "");
  EXPECT_EQ(errors[0].message, R"(body must be of type object: "array")");
}

// ---------------------------------------------------------------------------------------
// Hostile input: never a throw, never a crash, never quadratic.

TEST(StructureValidator, TenMegabyteStrings) {
  const std::string big(10U * 1024U * 1024U, 'x');
  json::Document object = parse(base_vm);
  json::Allocator& allocator = object.GetAllocator();
  rapidjson::Pointer("/spec/template/spec/volumes/1/cloudInitNoCloud/userData")
      .Set(object, json::make_string(big, allocator));
  EXPECT_TRUE(validator().validate(StructureKind::virtual_machine, object).empty());

  rapidjson::Pointer("/spec/template/spec/domain/cpu/cores").Set(object, json::make_string(big, allocator));
  json::Value& labels = *rapidjson::Pointer("/metadata/labels").Get(object);
  labels.AddMember(json::make_string(big, allocator), json::Value(1), allocator);
  const ErrorList errors = validator().validate(StructureKind::virtual_machine, object);
  ASSERT_EQ(errors.size(), 2U) << errors.size();
  EXPECT_EQ(errors[0].field, "metadata.labels[" + big + "]");
  EXPECT_EQ(errors[1].message, R"(spec.template.spec.domain.cpu.cores in body must be of type integer: "string")");
}

std::string nested_arrays(std::size_t depth, std::string_view leaf) {
  std::string text(depth, '[');
  text.append(leaf);
  text.append(depth, ']');
  return text;
}

TEST(StructureValidator, DeepNesting) {
  for (std::size_t depth : {1000U, 100000U}) {
    const std::string deep = nested_arrays(depth, "1");
    // Under an unknown field: one cause, nothing below it is visited.
    json::Document vm_doc =
        parse(R"({"spec": {"future": )" + deep + R"(, "template": {"spec": {"domain": {"devices": {}}}}}})");
    ErrorList errors = validator().validate(StructureKind::virtual_machine, vm_doc);
    ASSERT_EQ(errors.size(), 1U) << describe(errors);
    EXPECT_EQ(errors[0].message, "spec.future in body is a forbidden property");
    // As a typed field and as the root: one type error each.
    json::Document typed =
        parse(R"({"spec": {"template": {"spec": {"domain": {"devices": {}, "cpu": {"cores": )" + deep + "}}}}}}");
    errors = validator().validate(StructureKind::virtual_machine, typed);
    ASSERT_EQ(errors.size(), 1U) << describe(errors);
    EXPECT_EQ(errors[0].message, R"(spec.template.spec.domain.cpu.cores in body must be of type integer: "array")");
    json::Document root = parse(deep);
    EXPECT_EQ(validator().validate(StructureKind::preference_spec, root).size(), 1U);
  }
}

TEST(StructureValidator, ManyErrorsStayLinear) {
  // 20000 wrong label values and 20000 unknown members: one cause each, in document order,
  // quickly.
  constexpr std::size_t count = 20000;
  std::string text = R"({"spec": {"template": {"spec": {"domain": {"devices": {}, "cpu": {)";
  for (std::size_t i = 0; i < count; ++i) {
    text += (i == 0 ? "" : ",") + ("\"u" + std::to_string(i) + "\": " + std::to_string(i));
  }
  text += R"(}}}}}, "metadata": {"labels": {)";
  for (std::size_t i = 0; i < count; ++i) {
    text += (i == 0 ? "" : ",") + ("\"k" + std::to_string(i) + "\": " + std::to_string(i));
  }
  text += "}}}";
  const json::Document object = parse(text);
  const ErrorList errors = validator().validate(StructureKind::virtual_machine, object);
  ASSERT_EQ(errors.size(), 2 * count);
  EXPECT_EQ(errors.front().field, "spec.template.spec.domain.cpu.u0");
  EXPECT_EQ(errors[count - 1].field, "spec.template.spec.domain.cpu.u" + std::to_string(count - 1));
  EXPECT_EQ(errors[count].field, "metadata.labels[k0]");
  EXPECT_EQ(errors.back().field, "metadata.labels[k" + std::to_string(count - 1) + "]");
}

TEST(StructureValidator, DuplicateKeysDoNotThrow) {
  const json::Document object = parse(R"({"spec": {"running": true, "running": "x"}})");
  EXPECT_NO_THROW((void)validator().validate(StructureKind::virtual_machine, object));
}

TEST(StructureValidator, SafeFromManyThreadsAtOnce) {
  json::Document bad = parse(base_vm);
  rapidjson::Pointer("/spec/template/spec/domain/cpu/cores").Set(bad, "4");
  const json::Document good = parse(base_vm);
  const ErrorList expected_bad = validator().validate(StructureKind::virtual_machine, bad);
  ASSERT_EQ(expected_bad.size(), 1U);

  const StructureValidator copy = validator();  // copies share the compiled schemas
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < failures.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const StructureValidator& v = t % 2 == 0 ? validator() : copy;
        if (!v.validate(StructureKind::virtual_machine, good).empty() ||
            v.validate(StructureKind::virtual_machine, bad) != expected_bad) {
          ++failures[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

// ---------------------------------------------------------------------------------------
// Real objects: the acceptance cases, the benchmark bodies, and every instancetype and
// preference that KubeVirt's common-instancetypes publishes. All must pass untouched.

const std::filesystem::path shared_dir = VMGATE_SHARED_DIR;

std::optional<StructureKind> kind_of(const json::Value& object) {
  const std::string_view kind = json::find_string(object, "kind");
  if (kind == "VirtualMachine") {
    return StructureKind::virtual_machine;
  }
  if (kind == "VirtualMachineInstance") {
    return StructureKind::virtual_machine_instance;
  }
  if (kind == "VirtualMachineInstancetype" || kind == "VirtualMachineClusterInstancetype") {
    return StructureKind::instancetype_spec;
  }
  if (kind == "VirtualMachinePreference" || kind == "VirtualMachineClusterPreference") {
    return StructureKind::preference_spec;
  }
  return std::nullopt;
}

std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir, std::string_view extension) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == extension) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(StructureRealObjects, AcceptanceCasesPass) {
  std::size_t checked = 0;
  for (const auto& path : files_in(shared_dir / "acceptance-sample" / "cases", ".json")) {
    const json::Document document = parse(testing::read_file(path.string()));
    std::vector<const json::Value*> objects;
    if (const json::Value* request = json::find_object(document, "request")) {
      for (const char* key : {"object", "oldObject"}) {
        if (const json::Value* object = json::find_object(*request, key)) {
          objects.push_back(object);
        }
      }
    }
    if (const json::Value* cluster = json::find_array(document, "objects")) {
      for (const json::Value& object : cluster->GetArray()) {
        objects.push_back(&object);
      }
    }
    for (const json::Value* object : objects) {
      if (const auto kind = kind_of(*object)) {
        const ErrorList errors = validator().validate(*kind, *object);
        EXPECT_TRUE(errors.empty()) << path.filename() << " " << json::find_string(*object, "kind") << "\n"
                                    << describe(errors);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 50U);
}

TEST(StructureRealObjects, BenchmarkBodiesPass) {
  for (const char* name : {"admissionreview-small.json", "admissionreview-medium.json", "admissionreview-large.json"}) {
    const json::Document review = parse(testing::read_file((shared_dir / "bench" / "bodies" / name).string()));
    const json::Value* object = json::find_path(review, {"request", "object"});
    ASSERT_NE(object, nullptr) << name;
    const auto kind = kind_of(*object);
    ASSERT_TRUE(kind.has_value()) << name;
    const ErrorList errors = validator().validate(*kind, *object);
    EXPECT_TRUE(errors.empty()) << name << "\n" << describe(errors);
  }
}

// The common-instancetypes files are YAML (kubectl kustomize output) and stay in shared/ (their
// README: use them from there, do not copy them into the project). admission_tests does not
// link yaml-cpp, so this reads the subset kustomize emits for them: block mappings, `|` and
// `|-` block scalars, double-quoted and plain scalars, `{}` / `[]`, documents split by `---`.
// Anything else fails the test loudly rather than being misread.
class KustomizeYamlReader {
 public:
  explicit KustomizeYamlReader(const std::string& text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      lines_.push_back(line);
    }
  }

  std::vector<json::Document> documents() {
    std::vector<json::Document> out;
    while (position_ < lines_.size()) {
      json::Document document;
      json::Value root = mapping(0, document.GetAllocator());
      static_cast<json::Value&>(document) = std::move(root);
      if (document.MemberCount() > 0) {
        out.push_back(std::move(document));
      }
      if (position_ < lines_.size() && lines_[position_] == "---") {
        ++position_;
      }
    }
    return out;
  }

 private:
  static std::size_t indent_of(const std::string& line) { return line.find_first_not_of(' '); }

  [[noreturn]] void unsupported(const std::string& why) const {
    throw std::runtime_error("YAML line " + std::to_string(position_ + 1) + ": " + why + ": " +
                             (position_ < lines_.size() ? lines_[position_] : "<end>"));
  }

  json::Value mapping(std::size_t indent, json::Allocator& allocator) {
    json::Value object(rapidjson::kObjectType);
    while (position_ < lines_.size() && lines_[position_] != "---") {
      const std::string& line = lines_[position_];
      const std::size_t at = indent_of(line);
      if (at == std::string::npos) {
        ++position_;  // blank line between entries
        continue;
      }
      if (at < indent) {
        break;
      }
      if (at > indent) {
        unsupported("unexpected indentation");
      }
      if (line.compare(at, 2, "- ") == 0 || line.compare(at, 1, "#") == 0) {
        unsupported("sequences and comments are outside the subset");
      }
      const std::size_t colon = line.find(':', at);
      if (colon == std::string::npos || (colon + 1 < line.size() && line[colon + 1] != ' ')) {
        unsupported("expected `key: value`");
      }
      const std::string key = line.substr(at, colon - at);
      const std::string rest = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
      ++position_;
      json::Value value;
      if (rest.empty()) {
        const bool nested = position_ < lines_.size() && indent_of(lines_[position_]) != std::string::npos &&
                            indent_of(lines_[position_]) > indent;
        value = nested ? mapping(indent_of(lines_[position_]), allocator) : json::Value();
      } else if (rest == "|" || rest == "|-") {
        value = json::make_string(block_scalar(indent, rest == "|"), allocator);
      } else {
        value = scalar(rest, allocator);
      }
      object.AddMember(json::make_string(key, allocator), std::move(value), allocator);
    }
    return object;
  }

  std::string block_scalar(std::size_t parent_indent, bool keep_last_newline) {
    std::string text;
    std::size_t content_indent = std::string::npos;
    while (position_ < lines_.size()) {
      const std::string& line = lines_[position_];
      const std::size_t at = indent_of(line);
      if (at != std::string::npos && at <= parent_indent) {
        break;
      }
      if (at != std::string::npos && content_indent == std::string::npos) {
        content_indent = at;
      }
      text += (at == std::string::npos ? "" : line.substr(std::min(content_indent, line.size()))) + "\n";
      ++position_;
    }
    while (!text.empty() && text.back() == '\n') {
      text.pop_back();
    }
    return keep_last_newline ? text + "\n" : text;
  }

  json::Value scalar(const std::string& text, json::Allocator& allocator) const {
    if (text == "{}") {
      return json::Value(rapidjson::kObjectType);
    }
    if (text == "[]") {
      return json::Value(rapidjson::kArrayType);
    }
    if (text.front() == '"') {
      // JSON's string syntax is YAML's double-quoted style for what kustomize writes.
      json::Document quoted = parse(text);
      if (!quoted.IsString()) {
        unsupported("bad double-quoted scalar");
      }
      return json::Value(quoted, allocator);
    }
    if (text.front() == '\'' || text.front() == '{' || text.front() == '[' || text.front() == '&' ||
        text.front() == '*' || text.front() == '!') {
      unsupported("flow, single-quoted, anchored or tagged scalars are outside the subset");
    }
    // Plain scalars resolve as in YAML's core schema (what sigs.k8s.io/yaml does with them).
    if (text == "true" || text == "false") {
      return json::Value(text == "true");
    }
    if (text == "null" || text == "~") {
      return json::Value();
    }
    const bool integer = std::all_of(text.begin() + (text.front() == '-' ? 1 : 0), text.end(),
                                     [](char c) { return c >= '0' && c <= '9'; });
    if (integer && text != "-") {
      return json::Value(static_cast<std::int64_t>(std::stoll(text)));
    }
    return json::make_string(text, allocator);
  }

  std::vector<std::string> lines_;
  std::size_t position_ = 0;
};

TEST(StructureRealObjects, CommonInstancetypesAndPreferencesPass) {
  const std::filesystem::path dir = shared_dir / "data" / "common-instancetypes";
  std::size_t instancetypes = 0;
  std::size_t preferences = 0;
  for (const char* name : {"cluster-instancetypes.yaml", "cluster-preferences.yaml"}) {
    KustomizeYamlReader reader(testing::read_file((dir / name).string()));
    for (const json::Document& object : reader.documents()) {
      const auto kind = kind_of(object);
      ASSERT_TRUE(kind.has_value()) << name << ": " << json::find_string(object, "kind");
      (*kind == StructureKind::instancetype_spec ? instancetypes : preferences) += 1;
      const ErrorList errors = validator().validate(*kind, object);
      EXPECT_TRUE(errors.empty()) << json::find_string(*json::find_object(object, "metadata"), "name") << "\n"
                                  << describe(errors);
    }
  }
  // The numbers the data's README announces: the reader missed nothing.
  EXPECT_EQ(instancetypes, 65U);
  EXPECT_EQ(preferences, 57U);
}

TEST(StructureRealObjects, KustomizeYamlReaderKeepsTypes) {
  KustomizeYamlReader reader("a:\n  b: 1\n  c: \"1\"\n  d: 1.5Gi\n  e: true\n  f: {}\n  g: |-\n    x\n\n    y\n");
  const std::vector<json::Document> documents = reader.documents();
  ASSERT_EQ(documents.size(), 1U);
  EXPECT_EQ(dump(documents[0]), R"({"a":{"b":1,"c":"1","d":"1.5Gi","e":true,"f":{},"g":"x\n\ny"}})");
}

// ---------------------------------------------------------------------------------------
// The single walk (surely_sound): names and types in one pass for VMs and VMIs. It may only say
// "sound" where validate finds nothing, and it must say so for sound objects, or the fast path
// is silently lost.

// The VMs and VMIs of vmgate's admission cases, the acceptance sample and the benchmark bodies.
std::vector<json::Document> vm_objects() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::filesystem::path(VMGATE_SOURCE_DIR) / "test" / "fixtures")) {
    if (entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  for (const auto& path : files_in(shared_dir / "acceptance-sample" / "cases", ".json")) {
    files.push_back(path);
  }
  for (const char* name : {"admissionreview-small.json", "admissionreview-medium.json", "admissionreview-large.json"}) {
    files.push_back(shared_dir / "bench" / "bodies" / name);
  }
  std::sort(files.begin(), files.end());
  std::vector<json::Document> objects;
  const auto keep = [&objects](const json::Value& object) {
    if (const auto kind = kind_of(object);
        kind == StructureKind::virtual_machine || kind == StructureKind::virtual_machine_instance) {
      json::Document copy;
      copy.CopyFrom(object, copy.GetAllocator());
      objects.push_back(std::move(copy));
    }
  };
  for (const auto& path : files) {
    json::Document document;
    const std::string text = testing::read_file(path.string());
    document.Parse(text.data(), text.size());
    if (document.HasParseError()) {
      continue;  // fixtures of broken bodies
    }
    if (const json::Value* request = json::find_object(document, "request")) {
      for (const char* key : {"object", "oldObject"}) {
        if (const json::Value* object = json::find_object(*request, key)) {
          keep(*object);
        }
      }
    } else if (document.IsObject()) {
      keep(document);
    }
  }
  for (const std::string_view base : {base_vm, base_vmi}) {
    objects.push_back(parse(base));
  }
  return objects;
}

StructureKind vm_kind_of(const json::Value& object) {
  return kind_of(object).value_or(StructureKind::virtual_machine);
}

void expect_sound_only_when_validate_is_empty(const json::Value& object, const std::string& what) {
  for (const Release release : supported_releases) {
    const StructureKind kind = vm_kind_of(object);
    if (validator().surely_sound(kind, object, release)) {
      const ErrorList errors = validator().validate_each_check_apart(kind, object, release);
      EXPECT_TRUE(errors.empty()) << what << " at " << to_string(release) << " was surely sound, but:\n"
                                  << describe(errors);
    }
  }
}

TEST(StructureSingleWalk, SoundObjectsAreToldSoundInOneWalk) {
  const std::vector<json::Document> objects = vm_objects();
  ASSERT_GT(objects.size(), 500U);
  std::size_t sound = 0;
  for (std::size_t index = 0; index < objects.size(); ++index) {
    const StructureKind kind = vm_kind_of(objects[index]);
    for (const Release release : supported_releases) {
      if (validator().validate_each_check_apart(kind, objects[index], release).empty()) {
        ++sound;
        EXPECT_TRUE(validator().surely_sound(kind, objects[index], release))
            << "object " << index << " at " << to_string(release) << ": " << dump(objects[index]).substr(0, 400);
      }
    }
  }
  EXPECT_GT(sound, 1000U);
}

TEST(StructureSingleWalk, NeverSoundWhereValidateFindsSomething) {
  const std::vector<json::Document> objects = vm_objects();
  for (std::size_t index = 0; index < objects.size(); ++index) {
    expect_sound_only_when_validate_is_empty(objects[index], "object " + std::to_string(index));
  }
}

// Every member of the object at every depth, one at a time: renamed to a name no schema has,
// null, removed, or of another JSON type.
void for_each_member_change(const json::Value& root,
                            const std::function<void(const json::Document&, const std::string&)>& visit) {
  std::vector<std::vector<std::string>> paths;  // of members, by name or array index
  std::function<void(const json::Value&, std::vector<std::string>&)> collect = [&](const json::Value& value,
                                                                                   std::vector<std::string>& path) {
    if (value.IsObject()) {
      for (auto member = value.MemberBegin(); member != value.MemberEnd(); ++member) {
        path.push_back(std::string(json::as_view(member->name)));
        paths.push_back(path);
        collect(member->value, path);
        path.pop_back();
      }
    } else if (value.IsArray()) {
      for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
        path.push_back(std::to_string(i));
        collect(value[i], path);
        path.pop_back();
      }
    }
  };
  std::vector<std::string> path;
  collect(root, path);
  for (const std::vector<std::string>& member : paths) {
    std::string pointer;
    for (const std::string& segment : member) {
      pointer += "/" + segment;
    }
    for (const char* change : {"rename", "null", "remove", "number", "string", "object"}) {
      json::Document copy;
      copy.CopyFrom(root, copy.GetAllocator());
      json::Value* parent = &copy;
      for (std::size_t i = 0; i + 1 < member.size(); ++i) {
        parent = parent->IsArray() ? &(*parent)[static_cast<rapidjson::SizeType>(std::stoul(member[i]))]
                                   : json::find(*parent, member[i]);
      }
      const std::string& name = member.back();
      json::Value* value = json::find(*parent, name);
      const std::string_view which(change);
      if (which == "rename") {
        parent->RemoveMember(name.c_str());
        parent->AddMember("notAFieldOfKubeVirt", json::Value(rapidjson::kObjectType), copy.GetAllocator());
      } else if (which == "remove") {
        parent->RemoveMember(name.c_str());
      } else if (which == "null") {
        value->SetNull();
      } else if (which == "number") {
        value->SetInt(-7);
      } else if (which == "string") {
        value->SetString("text");
      } else {
        value->SetObject();
      }
      visit(copy, std::string(change) + " " + json::to_string(json::Value(pointer.c_str(), copy.GetAllocator())));
    }
  }
}

TEST(StructureSingleWalk, NeverSoundWhereValidateFindsSomethingInAnyOneMemberChanged) {
  std::vector<json::Document> objects;
  objects.push_back(parse(base_vm));
  objects.push_back(parse(base_vmi));
  const json::Document small =
      parse(testing::read_file((shared_dir / "bench" / "bodies" / "admissionreview-small.json").string()));
  objects.emplace_back().CopyFrom(*json::find_path(small, {"request", "object"}), objects.back().GetAllocator());
  std::size_t changes = 0;
  std::size_t sound_changes = 0;
  for (const json::Document& object : objects) {
    for_each_member_change(object, [&](const json::Document& changed, const std::string& what) {
      ++changes;
      sound_changes += validator().surely_sound(vm_kind_of(changed), changed) ? 1U : 0U;
      expect_sound_only_when_validate_is_empty(changed, what);
    });
  }
  EXPECT_GT(changes, 1000U);
  // Some changes keep the object sound (an optional member removed or null): the walk says so.
  EXPECT_GT(sound_changes, 100U);
}

}  // namespace
}  // namespace vmgate::admission
