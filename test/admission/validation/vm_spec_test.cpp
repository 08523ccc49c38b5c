// Tests of the VirtualMachine rules (vms-admitter.go ValidateVirtualMachineSpec, validateRunStrategy,
// validateLiveUpdateFeatures; pkg/storage/admitters/data-volume-template.go): the template is
// required and validated like a VMI spec under spec.template.spec (without the VMI-only rules),
// run strategy, dataVolumeTemplates, and the embedded namespace check of the later storage stage.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string check(const std::string& vm, const ClusterConfig& config = ClusterConfig{}) {
  return describe(validate_vm_spec(parse(vm), config, false));
}

// A VM with the given spec members besides the template.
std::string vm_with(std::string_view members, std::string_view template_spec = R"({"domain": {"devices": {}}})") {
  std::string spec = R"({"template": {"spec": )" + std::string(template_spec) + "}";
  if (!members.empty()) {
    spec += ", " + std::string(members);
  }
  return R"({"metadata": {"name": "vm", "namespace": "default"}, "spec": )" + spec + "}}";
}

TEST(ValidationVmSpec, MissingTemplate) {
  constexpr std::string_view missing = "FieldValueRequired spec.template: missing virtual machine template.\n";
  EXPECT_EQ(check(R"({"metadata": {"name": "vm"}, "spec": {"runStrategy": "Always"}})"), missing);
  EXPECT_EQ(check(R"({"metadata": {"name": "vm"}, "spec": {"template": null}})"), missing);
  EXPECT_EQ(check(R"({"metadata": {"name": "vm"}})"), missing);
}

TEST(ValidationVmSpec, EveryRunStrategy) {
  for (std::string_view strategy : {"Always", "RerunOnFailure", "Halted", "Manual", "Once"}) {
    EXPECT_EQ(check(vm_with(R"("runStrategy": ")" + std::string(strategy) + "\"")), "") << strategy;
  }
  // Deprecated spec.running alone is valid (the warning comes from the pipeline).
  EXPECT_EQ(check(vm_with(R"("running": false)")), "");
}

TEST(ValidationVmSpec, RunStrategyMessages) {
  EXPECT_EQ(check(vm_with(R"("running": true, "runStrategy": "Always")")),
            "FieldValueInvalid spec.running: Running and RunStrategy are mutually exclusive. Note that Running is "
            "deprecated, please use RunStrategy instead\n");
  EXPECT_EQ(check(vm_with("")), "FieldValueInvalid spec.running: RunStrategy must be specified\n");
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Sometimes")")),
            "FieldValueInvalid spec.runStrategy: Invalid RunStrategy (Sometimes)\n");
  EXPECT_EQ(check(vm_with(R"("running": false, "runStrategy": "always")")),
            "FieldValueInvalid spec.running: Running and RunStrategy are mutually exclusive. Note that Running is "
            "deprecated, please use RunStrategy instead\n"
            "FieldValueInvalid spec.runStrategy: Invalid RunStrategy (always)\n");
}

TEST(ValidationVmSpec, WaitAsReceiverWhileDecentralizedLiveMigrationIsBeta) {
  // DecentralizedLiveMigration is a Beta gate: on unless disabled in the KubeVirt CR.
  EXPECT_EQ(check(vm_with(R"("runStrategy": "WaitAsReceiver")")), "");
}

TEST(ValidationVmSpec, TemplateIsValidatedUnderItsPath) {
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Always")", R"({"domain": {"devices": {"disks": [{"name": "x"}]}}})")),
            "FieldValueInvalid spec.template.spec.domain.devices.disks[0].name: "
            "spec.template.spec.domain.devices.disks[0].Name 'x' not found.\n");
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Always")",
                          R"({"domain": {"firmware": {"bootloader": {"efi": {}}}, "devices": {}}})")),
            "FieldValueInvalid spec.template.spec.domain: spec.template.spec.domain has EFI SecureBoot enabled. "
            "SecureBoot requires SMM, which is currently disabled.\n");
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Always")",
                          R"({"domain": {"machine": {"type": "pc-i440fx-2.12"}, "devices": {}}})")),
            "FieldValueInvalid spec.template.spec.domain.machine.type: spec.template.spec.domain.machine.type is not "
            "supported: pc-i440fx-2.12 (allowed values: [q35* pc-q35*])\n");
}

TEST(ValidationVmSpec, VmiOnlyRulesDoNotApply) {
  // No memory, a volume without disk, an arm64 CPU model and an unknown architecture are all fine
  // on a VM template.
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Halted")",
                          R"({"architecture": "arm64", "domain": {"cpu": {"model": "host-model"},
      "devices": {}}, "volumes": [{"name": "orphan", "emptyDisk": {"capacity": "1Gi"}}]})")),
            "");
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Halted")", R"({"architecture": "mips", "domain": {"devices": {}}})")), "");
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Halted")", "null")), "");
}

std::string with_templates(std::string_view templates,
                           std::string_view volumes = R"([{"name": "root", "dataVolume": {"name": "root"}}])") {
  return vm_with(R"("runStrategy": "Always", "dataVolumeTemplates": )" + std::string(templates),
                 R"({"domain": {"devices": {"disks": [{"name": "root"}]}}, "volumes": )" + std::string(volumes) + "}");
}

TEST(ValidationVmSpec, ValidDataVolumeTemplates) {
  EXPECT_EQ(
      check(with_templates(
          R"([{"metadata": {"name": "root"}, "spec": {"storage": {}, "sourceRef": {"kind": "DataSource", "name": "fedora"}}}])")),
      "");
  EXPECT_EQ(check(with_templates(
                R"([{"metadata": {"name": "root"}, "spec": {"pvc": {}, "source": {"http": {"url": "http://x"}}}}])")),
            "");
  // Externally populated through the claim's dataSourceRef.
  EXPECT_EQ(
      check(with_templates(
          R"([{"metadata": {"name": "root"}, "spec": {"pvc": {"dataSourceRef": {"kind": "VolumeSnapshot", "name": "s"}}}}])")),
      "");
  // Referenced by a persistentVolumeClaim volume.
  EXPECT_EQ(
      check(with_templates(R"([{"metadata": {"name": "root"}, "spec": {"storage": {}, "source": {"blank": {}}}}])",
                           R"([{"name": "root", "persistentVolumeClaim": {"claimName": "root"}}])")),
      "");
}

TEST(ValidationVmSpec, DataVolumeTemplateMessages) {
  struct Case {
    std::string dvt;
    std::string causes;
  };
  const Case cases[] = {
      {R"({"metadata": {}, "spec": {"storage": {}}})",
       "FieldValueRequired spec.dataVolumeTemplate[0].name: 'name' field must not be empty for DataVolumeTemplate "
       "entry "
       "spec.dataVolumeTemplate[0].name.\n"},
      {R"({"metadata": {"name": "root"}, "spec": {"source": {"blank": {}}}})",
       "FieldValueInvalid spec.dataVolumeTemplate[0].PVC.Storage: Missing Data volume PVC or Storage\n"},
      {R"({"metadata": {"name": "root"}, "spec": {"pvc": {}, "storage": {}, "source": {"blank": {}}}})",
       "FieldValueInvalid spec.dataVolumeTemplate[0].PVC.Storage: Duplicate storage definition, both target storage "
       "and "
       "target pvc defined\n"},
      {R"({"metadata": {"name": "root"}, "spec": {"storage": {"dataSource": {"kind": "PersistentVolumeClaim", "name": "p"}},
          "source": {"blank": {}}}})",
       "FieldValueInvalid spec.dataVolumeTemplate[0].source: External population is incompatible with Source and "
       "SourceRef\n"},
      {R"({"metadata": {"name": "root"}, "spec": {"storage": {}}})",
       "FieldValueInvalid spec.dataVolumeTemplate[0].source.sourceRef: Data volume should have either Source, "
       "SourceRef, "
       "or be externally populated\n"},
      {R"({"metadata": {"name": "root"}, "spec": {"storage": {}, "source": {}}})",
       "FieldValueInvalid spec.dataVolumeTemplate[0].source: Missing dataVolume valid source\n"},
      {R"({"metadata": {"name": "root"}, "spec": {"storage": {}, "source": {"blank": {}, "http": {"url": "http://x"}}}})",
       "FieldValueInvalid spec.dataVolumeTemplate[0].source: Multiple dataVolume sources\n"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(check(with_templates("[" + c.dvt + "]")), c.causes) << c.dvt;
  }
}

TEST(ValidationVmSpec, DataVolumeTemplateMustBeReferenced) {
  EXPECT_EQ(
      check(with_templates(R"([{"metadata": {"name": "root"}, "spec": {"storage": {}, "source": {"blank": {}}}},
                                     {"metadata": {"name": "extra"}, "spec": {"storage": {}, "source": {"blank": {}}}}])")),
      "FieldValueRequired spec.dataVolumeTemplate[1]: DataVolumeTemplate entry spec.dataVolumeTemplate[1] must be "
      "referenced in the VMI template's 'volumes' list\n");
}

TEST(ValidationVmSpec, LiveUpdateSockets) {
  const std::string vm =
      vm_with(R"("runStrategy": "Always")", R"({"domain": {"cpu": {"sockets": 8, "maxSockets": 4}, "devices": {}}})");
  // validateCPUHotplug (every strategy), then validateLiveUpdateCPU again under LiveUpdate.
  const std::string cause =
      "FieldValueInvalid spec.template.spec.domain.cpu.sockets: Number of sockets in CPU topology is greater than the "
      "maximum sockets allowed\n";
  EXPECT_EQ(check(vm), cause + cause);
  ClusterConfig stage;
  stage.vm_rollout_strategy = "Stage";
  EXPECT_EQ(check(vm, stage), cause);
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Always")",
                          R"({"domain": {"cpu": {"sockets": 4, "maxSockets": 4}, "devices": {}}})")),
            "");
}

TEST(ValidationVmSpec, LiveUpdateMemoryWithMaxGuest) {
  struct Case {
    std::string template_spec;
    std::string message;  // empty: accepted
  };
  const Case cases[] = {
      {R"({"architecture": "amd64", "domain": {"memory": {"guest": "2Gi", "maxGuest": "8Gi"}, "devices": {}}})", ""},
      {R"({"architecture": "amd64", "domain": {"memory": {"guest": "1025Mi", "maxGuest": "8Gi"}, "devices": {}}})",
       "Guest memory must be 2Mi aligned"},
      {R"({"architecture": "amd64", "domain": {"memory": {"guest": "2Gi", "maxGuest": "4097Mi"}, "devices": {}}})",
       "MaxGuest must be 2Mi aligned"},
      // With 1Gi pages the alignment is 1Gi (the hugepages rule already forces the guest onto it).
      {R"({"architecture": "amd64", "domain": {"memory": {"guest": "2Gi", "maxGuest": "8704Mi", "hugepages": {"pageSize": "1Gi"}}, "devices": {}}})",
       "MaxGuest must be 1Gi aligned"},
      {R"({"architecture": "amd64", "domain": {"memory": {"guest": "8Gi", "maxGuest": "4Gi"}, "devices": {}}})",
       "Guest memory is greater than the configured maxGuest memory"},
      {R"({"architecture": "s390x", "domain": {"memory": {"guest": "2Gi", "maxGuest": "8Gi"}, "devices": {}}})",
       "Memory hotplug is only available for x86_64 VMs"},
      {R"({"architecture": "amd64", "domain": {"memory": {"guest": "512Mi", "maxGuest": "2Gi"}, "devices": {}}})",
       "Memory hotplug is only available for VMs with at least 1Gi of guest memory"},
      {R"({"architecture": "amd64", "domain": {"memory": {"maxGuest": "2Gi"}, "devices": {}}})",
       "Guest memory must be configured when memory hotplug is enabled"},
      {R"({"architecture": "amd64", "domain": {"cpu": {"realtime": {}, "dedicatedCpuPlacement": true, "cores": 2, "numa": {"guestMappingPassthrough": {}}}, "memory": {"guest": "2Gi", "maxGuest": "8Gi", "hugepages": {"pageSize": "2Mi"}}, "devices": {}}})",
       "Memory hotplug is not compatible with realtime VMs"},
      {R"({"architecture": "amd64", "domain": {"launchSecurity": {"sev": {}}, "firmware": {"bootloader": {"efi": {"secureBoot": false}}},
          "memory": {"guest": "2Gi", "maxGuest": "8Gi"}, "devices": {}}})",
       "Memory hotplug is not compatible with encrypted VMs"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(check(vm_with(R"("runStrategy": "Always")", c.template_spec)),
              c.message.empty() ? "" : "FieldValueInvalid spec.template.spec.domain.memory.guest: " + c.message + "\n")
        << c.template_spec;
  }
  // Without maxGuest there is nothing to check; outside LiveUpdate neither.
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Always")",
                          R"({"architecture": "s390x", "domain": {"memory": {"guest": "1Mi"}, "devices": {}}})")),
            "");
  ClusterConfig stage;
  stage.vm_rollout_strategy = "Stage";
  EXPECT_EQ(check(vm_with(R"("runStrategy": "Always")", cases[1].template_spec), stage), "");
}

TEST(ValidationVmSpec, TemplateCausesThenDataVolumesThenRunStrategy) {
  const std::string vm =
      vm_with(R"("runStrategy": "Never", "dataVolumeTemplates": [{"metadata": {"name": "root"}, "spec": {}}])",
              R"({"domain": {"devices": {"inputs": [{"name": "i", "type": "mouse"}]}},
                                     "volumes": [{"name": "root", "dataVolume": {"name": "root"}}]})");
  EXPECT_EQ(
      check(vm),
      "FieldValueInvalid spec.template.spec.domain.devices.inputs[0].type: Input device can have only tablet type.\n"
      "FieldValueInvalid spec.dataVolumeTemplate[0].PVC.Storage: Missing Data volume PVC or Storage\n"
      "FieldValueInvalid spec.runStrategy: Invalid RunStrategy (Never)\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
