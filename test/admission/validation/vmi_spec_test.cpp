// Tests of validate_vmi_spec, vmgate's ValidateVirtualMachineInstanceSpec: a real spec passes, every
// rule family is wired in, the VM path prefix reaches every cause, and causes keep KubeVirt's order.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

constexpr std::string_view good_spec = R"({
  "architecture": "amd64",
  "hostname": "vm1", "subdomain": "lab.example",
  "domain": {
    "machine": {"type": "pc-q35-rhel9.4.0"},
    "cpu": {"sockets": 2, "cores": 1, "threads": 1, "model": "host-model",
            "features": [{"name": "vmx", "policy": "require"}, {"name": "pcid"}]},
    "memory": {"guest": "2Gi", "hugepages": {"pageSize": "2Mi"}},
    "resources": {"requests": {"memory": "2Gi", "cpu": "1"}, "limits": {"memory": "2Gi", "cpu": "2"}},
    "firmware": {"bootloader": {"efi": {"secureBoot": true}}},
    "features": {"smm": {"enabled": true}},
    "ioThreadsPolicy": "auto",
    "devices": {
      "disks": [{"name": "root", "bootOrder": 1, "disk": {"bus": "virtio"}}, {"name": "ci", "cdrom": {"bus": "sata"}}],
      "interfaces": [{"name": "default", "masquerade": {}}],
      "inputs": [{"name": "tablet", "bus": "usb", "type": "tablet"}]
    }
  },
  "networks": [{"name": "default", "pod": {}}],
  "volumes": [{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:40"}},
              {"name": "ci", "cloudInitNoCloud": {"userData": "#cloud-config"}}]
})";

TEST(ValidationVmiSpec, RealisticSpecPasses) {
  EXPECT_EQ(describe(validate_vmi_spec(parse(good_spec), FieldPath("spec"), ClusterConfig{})), "");
  EXPECT_EQ(describe(validate_vmi_spec(parse(good_spec), FieldPath("spec.template.spec"), ClusterConfig{})), "");
  EXPECT_EQ(describe(validate_vmi_spec(parse("{}"), FieldPath("spec"), ClusterConfig{})), "");
}

TEST(ValidationVmiSpec, NonObjectSpecHasNoCauses) {
  EXPECT_TRUE(validate_vmi_spec(parse("[]"), FieldPath("spec"), ClusterConfig{}).empty());
}

TEST(ValidationVmiSpec, EveryRuleFamilyInKubeVirtOrder) {
  // One problem per rule, in ValidateVirtualMachineInstanceSpec's order (memory, hugepages, machine,
  // CPU, feature policies, network, boot order, inputs, ioThreads, then validateDomainSpec's disks and
  // firmware, volumes, host devices).
  const std::string spec = R"({
    "hostname": "Bad_Host",
    "domain": {
      "machine": {"type": "pc-i440fx-2.12"},
      "cpu": {"isolateEmulatorThread": true, "features": [{"name": "vmx", "policy": "sometimes"}]},
      "memory": {"hugepages": {"pageSize": "10Mi"}},
      "resources": {"requests": {"memory": "64Mi", "cpu": "3"}, "limits": {"cpu": "2"}},
      "firmware": {"bootloader": {"efi": {}, "bios": {}}},
      "features": {"smm": {"enabled": true}},
      "ioThreadsPolicy": "sometimes",
      "devices": {
        "disks": [{"name": "root", "disk": {"bus": "ide"}}],
        "interfaces": [{"name": "default", "masquerade": {}}],
        "inputs": [{"name": "kbd", "type": "keyboard"}],
        "hostDevices": [{"name": "gpu", "deviceName": "nvidia.com/A100"}]
      }
    },
    "networks": [{"name": "other", "pod": {}}],
    "volumes": [{"name": "root", "emptyDisk": {"capacity": "1Gi"}}, {"name": "root", "emptyDisk": {"capacity": "1Gi"}}]
  })";
  EXPECT_EQ(
      describe(validate_vmi_spec(parse(spec), FieldPath("spec.template.spec"), ClusterConfig{})),
      "FieldValueInvalid spec.template.spec.hostname: spec.template.spec.hostname does not conform to the kubernetes "
      "DNS_LABEL rules : a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
      "must "
      "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n"
      "FieldValueInvalid spec.template.spec.domain.resources.requests.memory: spec.template.spec.domain.resources."
      "requests.memory '64Mi' is not a multiple of the page size spec.template.spec.domain.memory.hugepages.pageSize "
      "'10Mi'\n"
      "FieldValueInvalid spec.template.spec.domain.machine.type: spec.template.spec.domain.machine.type is not "
      "supported: pc-i440fx-2.12 (allowed values: [q35* pc-q35*])\n"
      "FieldValueInvalid spec.template.spec.domain.resources.requests.cpu: "
      "spec.template.spec.domain.resources.requests."
      "cpu '3' is greater than spec.template.spec.domain.resources.limits.cpu '2'\n"
      "FieldValueInvalid spec.template.spec.domain.cpu.isolateEmulatorThread: IsolateEmulatorThread should be only set "
      "in combination with DedicatedCPUPlacement\n"
      "FieldValueNotSupported spec.template.spec.domain.cpu.features[0].policy: CPU feature vmx uses policy sometimes "
      "that is not supported.\n"
      "FieldValueInvalid spec.template.spec.domain.devices.interfaces[0].name: Masquerade interface only implemented "
      "with pod network\n"
      "FieldValueRequired spec.template.spec.networks[0].name: spec.template.spec.networks[0].name 'other' not found.\n"
      "FieldValueInvalid spec.template.spec.domain.devices.interfaces[0].name: "
      "spec.template.spec.domain.devices.interfaces[0].name 'default' not found.\n"
      "FieldValueInvalid spec.template.spec.domain.devices.inputs[0].type: Input device can have only tablet type.\n"
      "FieldValueInvalid spec.template.spec.domain.ioThreadsPolicy: Invalid IOThreadsPolicy (sometimes)\n"
      "FieldValueInvalid spec.template.spec.domain.devices.disks[0].disk.bus: IDE bus is not supported\n"
      "FieldValueInvalid spec.template.spec.domain.firmware.bootloader: spec.template.spec.domain.firmware.bootloader "
      "has both EFI and BIOS configured, but they are mutually exclusive.\n"
      "FieldValueInvalid spec.template.spec.volumes[1].name: spec.template.spec.volumes[1] and "
      "spec.template.spec.volumes[0] must not have the same Name.\n"
      "FieldValueInvalid spec.template.spec.HostDevices: Host Devices feature gate is not enabled in "
      "kubevirt-config\n");
}

TEST(ValidationVmiSpec, BadQuantitiesAreReportedFirst) {
  EXPECT_EQ(describe(validate_vmi_spec(parse(R"({"domain": {"resources": {"requests": {"memory": "1Gb"}}}})"),
                                       FieldPath("spec"), ClusterConfig{})),
            "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '1Gb': "
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n");
}

TEST(ValidationVmiSpec, ClusterConfigurationReachesTheRules) {
  ClusterConfig config;
  config.arch_emulated_machines["amd64"] = {"pc-i440fx*"};
  config.feature_gates = {"HostDevices"};
  config.vm_rollout_strategy = "Stage";
  const std::string spec = R"({"domain": {"machine": {"type": "pc-i440fx-2.12"},
      "memory": {"guest": "2Gi"}, "resources": {"limits": {"memory": "1Gi"}},
      "devices": {"hostDevices": [{"name": "gpu", "deviceName": "nvidia.com/A100"}]}}})";
  EXPECT_EQ(
      describe(validate_vmi_spec(parse(spec), FieldPath("spec"), config)),
      "FieldValueInvalid spec.domain.memory.guest: spec.domain.memory.guest '2Gi' must be equal to or less than the "
      "memory limit spec.domain.resources.limits.memory '1Gi'\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
