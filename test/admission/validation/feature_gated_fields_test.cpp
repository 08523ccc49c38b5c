// Tests of the feature-gated fields of vmi-create-admitter.go: validatePersistentReservation,
// validateDownwardMetrics, validateFilesystemsWithVirtIOFSEnabled, validateRebootPolicy,
// validateReservedOverheadMemlock.
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
