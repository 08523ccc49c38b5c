// Tests of the feature-gated fields of vmi-create-admitter.go: validatePersistentReservation,
// validateDownwardMetrics, validateFilesystemsWithVirtIOFSEnabled, validateRebootPolicy,
// validateReservedOverheadMemlock; v1.7's validateArchitecture.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

ClusterConfig with_gates(std::vector<std::string> gates) {
  ClusterConfig config;
  config.feature_gates = std::move(gates);
  return config;
}

TEST(ValidationFeatureGatedFields, PersistentReservationIsOptIn) {
  const json::Document spec =
      parse(R"({"domain": {"devices": {"disks": [{"name": "a", "lun": {}}, {"name": "b", "lun": {"reservation": true}},
                                                   {"name": "c", "lun": {"reservation": true}}]}}})");
  EXPECT_EQ(describe(validate_persistent_reservation(spec, FieldPath("spec"), ClusterConfig{})),
            "FieldValueInvalid spec.domain.devices.disks.luns.reservation: persistent reservation is not enabled in "
            "kubevirt config\n");
  EXPECT_EQ(describe(validate_persistent_reservation(spec, FieldPath("spec"), with_gates({"PersistentReservation"}))),
            "");
  ClusterConfig configured;
  configured.persistent_reservation = true;
  EXPECT_EQ(describe(validate_persistent_reservation(spec, FieldPath("spec"), configured)), "");
  configured.persistent_reservation = false;
  configured.feature_gates = {"PersistentReservation"};
  EXPECT_NE(describe(validate_persistent_reservation(spec, FieldPath("spec"), configured)), "");
}

TEST(ValidationFeatureGatedFields, DownwardMetricsDevice) {
  const json::Document spec = parse(R"({"domain": {"devices": {"downwardMetrics": {}}}})");
  EXPECT_EQ(describe(validate_downward_metrics_device(spec, FieldPath("spec"), ClusterConfig{})),
            "FieldValueInvalid spec.domain.devices.downwardMetrics: downwardMetrics virtio serial is not allowed: "
            "DownwardMetrics feature gate is not enabled\n");
  EXPECT_EQ(describe(validate_downward_metrics_device(spec, FieldPath("spec"), with_gates({"DownwardMetrics"}))), "");
}

TEST(ValidationFeatureGatedFields, VirtiofsOnStorageVolumes) {
  const json::Document spec = parse(R"({"domain": {"devices": {"filesystems": [
      {"name": "pvc", "virtiofs": {}}, {"name": "cm", "virtiofs": {}}, {"name": "none", "virtiofs": {}}]}},
    "volumes": [{"name": "pvc", "persistentVolumeClaim": {"claimName": "c"}}, {"name": "cm", "configMap": {"name": "m"}}]})");
  EXPECT_EQ(describe(validate_virtiofs_storage(spec, FieldPath("spec"), ClusterConfig{})),
            "FieldValueInvalid spec.domain.devices.filesystems: virtiofs is not allowed: virtiofs feature gate is not "
            "enabled for PVC\n");
  EXPECT_EQ(describe(validate_virtiofs_storage(spec, FieldPath("spec"), with_gates({"EnableVirtioFsStorageVolumes"}))),
            "");
}

// v1.7.0: EnableVirtioFsConfigVolumes is Alpha (GA at v1.8), and the deprecated
// ExperimentalVirtiofsSupport still allows both kinds of volume.
TEST(ValidationFeatureGatedFields, AtV17VirtiofsOnConfigVolumesNeedsItsGate) {
  const json::Document spec = parse(R"({"domain": {"devices": {"filesystems": [
      {"name": "cm", "virtiofs": {}}, {"name": "pvc", "virtiofs": {}}]}},
    "volumes": [{"name": "pvc", "persistentVolumeClaim": {"claimName": "c"}}, {"name": "cm", "configMap": {"name": "m"}}]})");
  const auto v17 = [](std::vector<std::string> gates) {
    ClusterConfig config = with_gates(std::move(gates));
    config.release = Release::v1_7;
    return config;
  };
  EXPECT_EQ(describe(validate_virtiofs_storage(spec, FieldPath("spec"), v17({}))),
            "FieldValueInvalid spec.domain.devices.filesystems: virtiofs is not allowed: virtiofs feature gate is not "
            "enabled for config volumes\n"
            "FieldValueInvalid spec.domain.devices.filesystems: virtiofs is not allowed: virtiofs feature gate is not "
            "enabled for PVC\n");
  EXPECT_EQ(describe(validate_virtiofs_storage(spec, FieldPath("spec"), v17({"EnableVirtioFsConfigVolumes"}))),
            "FieldValueInvalid spec.domain.devices.filesystems: virtiofs is not allowed: virtiofs feature gate is not "
            "enabled for PVC\n");
  EXPECT_EQ(describe(validate_virtiofs_storage(spec, FieldPath("spec"), v17({"ExperimentalVirtiofsSupport"}))), "");
  // v1.8: config volumes need no gate; ExperimentalVirtiofsSupport is discontinued.
  EXPECT_EQ(describe(validate_virtiofs_storage(spec, FieldPath("spec"), with_gates({"ExperimentalVirtiofsSupport"}))),
            "FieldValueInvalid spec.domain.devices.filesystems: virtiofs is not allowed: virtiofs feature gate is not "
            "enabled for PVC\n");
}

// v1.7.0's validateArchitecture: another architecture than the control plane's needs the
// MultiArchitecture gate; v1.8 deprecated the gate and dropped the check.
TEST(ValidationFeatureGatedFields, AtV17AnotherArchitectureNeedsMultiArchitecture) {
  ClusterConfig v17;
  v17.release = Release::v1_7;
  const std::string other = webhook_architecture() == "s390x" ? "arm64" : "s390x";
  const json::Document foreign = parse(R"({"architecture": ")" + other + "\"}");
  EXPECT_EQ(describe(validate_architecture_gate(foreign, FieldPath("spec").child("template").child("spec"), v17)),
            "FieldValueRequired spec.template.spec.architecture: MultiArchitecture feature gate is not enabled in "
            "kubevirt-config, invalid entry spec.template.spec.architecture\n");
  const json::Document own = parse(R"({"architecture": ")" + std::string(webhook_architecture()) + "\"}");
  EXPECT_EQ(describe(validate_architecture_gate(own, FieldPath("spec"), v17)), "");
  EXPECT_EQ(describe(validate_architecture_gate(parse("{}"), FieldPath("spec"), v17)), "");
  // The webhook's own architecture, not the CR's status.defaultArchitecture, as runtime.GOARCH.
  v17.default_architecture = other;
  EXPECT_EQ(describe(validate_architecture_gate(foreign, FieldPath("spec"), v17)),
            "FieldValueRequired spec.architecture: MultiArchitecture feature gate is not enabled in kubevirt-config, "
            "invalid entry spec.architecture\n");
  v17.feature_gates = {"MultiArchitecture"};
  EXPECT_EQ(describe(validate_architecture_gate(foreign, FieldPath("spec"), v17)), "");
  EXPECT_EQ(describe(validate_architecture_gate(foreign, FieldPath("spec"), ClusterConfig{})), "");
}

TEST(ValidationFeatureGatedFields, RebootPolicyIsBetaAndOnByDefault) {
  const json::Document spec = parse(R"({"domain": {"rebootPolicy": "Terminate"}})");
  EXPECT_EQ(describe(validate_reboot_policy(spec, FieldPath("spec"), ClusterConfig{})), "");
  ClusterConfig disabled;
  disabled.disabled_feature_gates = {"RebootPolicy"};
  EXPECT_EQ(describe(validate_reboot_policy(spec, FieldPath("spec"), disabled)),
            "FieldValueInvalid spec.domain.rebootPolicy: RebootPolicy is specified but the RebootPolicy feature gate "
            "is not enabled\n");
}

TEST(ValidationFeatureGatedFields, ReservedOverhead) {
  const json::Document spec = parse(R"({"domain": {"memory": {"reservedOverhead": {"addedOverhead": "1Gi"}}}})");
  EXPECT_EQ(describe(validate_reserved_overhead(spec, FieldPath("spec"), ClusterConfig{})),
            "FieldValueInvalid spec.domain.memory.reservedOverhead: Reserved overhead memlock feature gate is not "
            "enabled in kubevirt-config\n");
  EXPECT_EQ(describe(validate_reserved_overhead(spec, FieldPath("spec"), with_gates({"ReservedOverheadMemlock"}))), "");
}

}  // namespace
}  // namespace vmgate::admission::validation
