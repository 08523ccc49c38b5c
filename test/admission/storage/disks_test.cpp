// Tests of the disk and volume rules: vmi-create-admitter.go validateBootOrder (disk → volume,
// unique boot orders) and pkg/storage/admitters/disks.go ValidateDisks (unique names, one target,
// boot order > 0, bus support, IOThreads only on virtio), plus unique volume names.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

// Both disk rule groups, in KubeVirt's order: validateBootOrder's, then ValidateDisks'.
ErrorList both(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes = validate_disk_volumes(spec, path, config);
  ErrorList fields = validate_disk_fields(spec, path);
  causes.insert(causes.end(), fields.begin(), fields.end());
  return causes;
}

std::string check(std::string_view disks, std::string_view volumes, const ClusterConfig& config = ClusterConfig{},
                  std::string_view path = "spec") {
  return describe(both(parse(R"({"domain": {"devices": {"disks": )" + std::string(disks) + R"(}}, "volumes": )" +
                             std::string(volumes) + "}"),
                       FieldPath(std::string(path)), config));
}

TEST(ValidationDisks, MatchingDisksAndVolumesPass) {
  EXPECT_EQ(
      check(R"([{"name": "root", "bootOrder": 1, "disk": {"bus": "virtio"}}, {"name": "ci", "cdrom": {"bus": "sata"}},
                      {"name": "data", "lun": {"bus": "scsi"}}, {"name": "usb", "disk": {"bus": "usb"}}, {"name": "plain"}])",
            R"([{"name": "root"}, {"name": "ci"}, {"name": "data", "persistentVolumeClaim": {"claimName": "c"}},
                {"name": "usb"}, {"name": "plain"}])"),
      "");
  EXPECT_TRUE(both(parse("{}"), FieldPath("spec"), ClusterConfig{}).empty());
}

TEST(ValidationDisks, DiskWithoutVolume) {
  // KubeVirt's message says "Name", the field says "name".
  EXPECT_EQ(check(R"([{"name": "x", "disk": {}}])", "[]"),
            "FieldValueInvalid spec.domain.devices.disks[0].name: spec.domain.devices.disks[0].Name 'x' not found.\n");
  EXPECT_EQ(
      check(R"([{"name": "root"}, {"name": "x"}])", R"([{"name": "root"}])", ClusterConfig{}, "spec.template.spec"),
      "FieldValueInvalid spec.template.spec.domain.devices.disks[1].name: "
      "spec.template.spec.domain.devices.disks[1].Name 'x' not found.\n");
}

TEST(ValidationDisks, EmptyCdromIsAllowedWhileDeclarativeHotplugVolumesIsBeta) {
  // DeclarativeHotplugVolumes is a Beta gate: enabled unless disabled in the KubeVirt CR.
  EXPECT_EQ(check(R"([{"name": "cd", "cdrom": {}}])", "[]"), "");
}

TEST(ValidationDisks, DuplicateDiskNames) {
  EXPECT_EQ(check(R"([{"name": "a"}, {"name": "b"}, {"name": "a"}])", R"([{"name": "a"}, {"name": "b"}])"),
            "FieldValueInvalid spec.domain.devices.disks[2].name: spec.domain.devices.disks[2] and "
            "spec.domain.devices.disks[0] must not have the same Name.\n");
}

TEST(ValidationDisks, OneTargetOnly) {
  EXPECT_EQ(
      check(R"([{"name": "a", "disk": {}, "cdrom": {}}])", R"([{"name": "a"}])"),
      "FieldValueInvalid spec.domain.devices.disks[0]: spec.domain.devices.disks[0] can only have a single target "
      "type defined\n");
}

TEST(ValidationDisks, BootOrder) {
  EXPECT_EQ(
      check(R"([{"name": "a", "bootOrder": 1}, {"name": "b", "bootOrder": 1}])", R"([{"name": "a"}, {"name": "b"}])"),
      "FieldValueInvalid spec.domain.devices.disks[1].bootOrder: Boot order for "
      "spec.domain.devices.disks[1].bootOrder already set for a different device.\n");
  EXPECT_EQ(check(R"([{"name": "a", "bootOrder": 0}])", R"([{"name": "a"}])"),
            "FieldValueInvalid spec.domain.devices.disks[0].bootOrder: spec.domain.devices.disks[0] must have a boot "
            "order > 0, if supplied\n");
}

TEST(ValidationDisks, InterfaceBootOrdersShareTheDisksOnes) {
  const auto spec = [](std::string_view devices) {
    return describe(
        both(parse(R"({"domain": {"devices": )" + std::string(devices) + R"(}, "volumes": [{"name": "a"}]})"),
             FieldPath("spec"), ClusterConfig{}));
  };
  EXPECT_EQ(spec(R"({"disks": [{"name": "a", "bootOrder": 1}], "interfaces": [{"name": "n", "bootOrder": 2}]})"), "");
  EXPECT_EQ(spec(R"({"disks": [{"name": "a", "bootOrder": 1}], "interfaces": [{"name": "n", "bootOrder": 1}]})"),
            "FieldValueInvalid spec.domain.devices.interfaces[0].bootOrder: Boot order for "
            "spec.domain.devices.interfaces[0].bootOrder already set for a different device.\n");
  // Without disks too; KubeVirt's "> 0" message indexes the spec path itself.
  EXPECT_EQ(spec(R"({"interfaces": [{"name": "n", "bootOrder": 0}, {"name": "m", "bootOrder": 3},
                     {"name": "o", "bootOrder": 3}]})"),
            "FieldValueInvalid spec[0].bootOrder: spec[0] must have a boot order > 0, if supplied\n"
            "FieldValueInvalid spec.domain.devices.interfaces[2].bootOrder: Boot order for "
            "spec.domain.devices.interfaces[2].bootOrder already set for a different device.\n");
}

TEST(ValidationDisks, SerialCacheIoErrorPolicyAndNameAsContainerName) {
  EXPECT_EQ(check(R"([{"name": "a", "serial": "SN-0001_x.y+z", "cache": "writeback", "io": "native",
                      "errorPolicy": "report"}])",
                  R"([{"name": "a"}])"),
            "");
  EXPECT_EQ(
      check(R"([{"name": "a", "serial": "SN 0001", "cache": "unsafe", "io": "io_uring", "errorPolicy": "retry"}])",
            R"([{"name": "a"}])"),
      "FieldValueInvalid spec.domain.devices.disks[0].serial: spec.domain.devices.disks[0] must be made up of the "
      "following characters [A-Za-z0-9_.+-], if specified\n"
      "FieldValueInvalid spec.domain.devices.disks[0].cache: spec.domain.devices.disks[0].cache has invalid value "
      "unsafe\n"
      "FieldValueNotSupported spec.domain.devices.disks.domain.devices.disks[0].io: Disk IO mode for "
      "spec.domain.devices.disks is not supported. Supported modes are: native, threads.\n"
      "FieldValueInvalid spec.domain.devices.disks[0].errorPolicy: spec.domain.devices.disks[0].errorPolicy has "
      "invalid value \"retry\"\n");
  EXPECT_EQ(
      check(R"([{"name": "rootDisk"}])", R"([{"name": "rootDisk"}])"),
      "FieldValueInvalid spec.domain.devices.disks.domain.devices.disks[0].name: a lowercase RFC 1123 label must "
      "consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric "
      "character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n");
  EXPECT_EQ(check(R"([{"name": "a", "serial": ")" + std::string(257, 'x') + R"("}])", R"([{"name": "a"}])"),
            "FieldValueInvalid spec.domain.devices.disks[0].serial: spec.domain.devices.disks[0] must be less than or "
            "equal to 256 in length, if specified\n");
}

TEST(ValidationDisks, Buses) {
  EXPECT_EQ(check(R"([{"name": "a", "disk": {"bus": "ide"}}])", R"([{"name": "a"}])"),
            "FieldValueInvalid spec.domain.devices.disks[0].disk.bus: IDE bus is not supported\n");
  EXPECT_EQ(check(R"([{"name": "a", "cdrom": {"bus": "virtio"}}])", R"([{"name": "a"}])"),
            "FieldValueInvalid spec.domain.devices.disks[0].cdrom.bus: Bus type virtio is invalid for CD-ROM device\n");
  EXPECT_EQ(check(R"([{"name": "a", "disk": {"bus": "sata", "readonly": true}}])", R"([{"name": "a"}])"),
            "FieldValueInvalid spec.domain.devices.disks[0].disk.bus: sata hard-disks do not support read-only.\n");
  EXPECT_EQ(check(R"([{"name": "a", "cdrom": {"bus": "sata", "readonly": true}}])", R"([{"name": "a"}])"), "");
  EXPECT_EQ(check(R"([{"name": "a", "lun": {"bus": "floppy"}}])", R"([{"name": "a", "dataVolume": {"name": "d"}}])"),
            "FieldValueInvalid spec.domain.devices.disks[0].lun.bus: spec.domain.devices.disks[0] is set with an "
            "unrecognized bus floppy, must be one of: [virtio scsi sata usb]\n");
}

TEST(ValidationDisks, DedicatedIoThreadOnlyOnVirtio) {
  // KubeVirt appends domain.devices.disks[i] to a path that already names the disks: kept verbatim.
  EXPECT_EQ(check(R"([{"name": "a", "dedicatedIOThread": true, "disk": {"bus": "sata"}}])", R"([{"name": "a"}])"),
            "FieldValueNotSupported spec.domain.devices.disks.domain.devices.disks[0]: IOThreads are not supported for "
            "disks on a sata bus\n");
  EXPECT_EQ(check(R"([{"name": "a", "dedicatedIOThread": true, "disk": {}}])", R"([{"name": "a"}])"),
            "FieldValueNotSupported spec.domain.devices.disks.domain.devices.disks[0]: IOThreads are not supported for "
            "disks on a  bus\n");
  EXPECT_EQ(check(R"([{"name": "a", "dedicatedIOThread": true, "disk": {"bus": "virtio"}}])", R"([{"name": "a"}])"),
            "");
  EXPECT_EQ(check(R"([{"name": "a", "dedicatedIOThread": false, "disk": {"bus": "sata"}}])", R"([{"name": "a"}])"), "");
}

TEST(ValidationDisks, LunNeedsAClaimOrDataVolume) {
  EXPECT_EQ(
      check(
          R"([{"name": "a", "lun": {}}, {"name": "b", "lun": {}}])",
          R"([{"name": "a", "persistentVolumeClaim": {"claimName": "c"}}, {"name": "b", "dataVolume": {"name": "d"}}])"),
      "");
  EXPECT_EQ(
      check(R"([{"name": "a", "lun": {}}])", R"([{"name": "a", "containerDisk": {"image": "i"}}])"),
      "FieldValueInvalid spec.domain.devices.disks[0].lun: spec.domain.devices.disks[0].lun can only be mapped to "
      "a DataVolume or PersistentVolumeClaim volume.\n");
}

TEST(ValidationDisks, DownwardMetricsVolumeOnAVirtioDisk) {
  const std::string_view volume = R"([{"name": "m", "downwardMetrics": {}}])";
  EXPECT_EQ(check(R"([{"name": "m", "disk": {}}])", volume), "");
  EXPECT_EQ(check(R"([{"name": "m", "disk": {"bus": "virtio"}}])", volume), "");
  EXPECT_EQ(check(R"([{"name": "m", "disk": {"bus": "sata"}}])", volume),
            "FieldValueInvalid spec.domain.devices.disks[0].disk.bus: DownwardMetrics volume must be mapped to virtio "
            "bus, but spec.domain.devices.disks[0].disk.bus is set to sata\n");
  EXPECT_EQ(
      check(R"([{"name": "m", "cdrom": {}}])", volume),
      "FieldValueRequired spec.domain.devices.disks[0].disk: DownwardMetrics volume must be mapped to a disk, but "
      "disk is not set on spec.domain.devices.disks[0].disk.\n");
}

TEST(ValidationDisks, BootOrderCausesComeBeforeDiskCauses) {
  EXPECT_EQ(check(R"([{"name": "a", "disk": {"bus": "ide"}}, {"name": "a"}, {"name": "z"}])", R"([{"name": "a"}])"),
            "FieldValueInvalid spec.domain.devices.disks[2].name: spec.domain.devices.disks[2].Name 'z' not found.\n"
            "FieldValueInvalid spec.domain.devices.disks[0].disk.bus: IDE bus is not supported\n"
            "FieldValueInvalid spec.domain.devices.disks[1].name: spec.domain.devices.disks[1] and "
            "spec.domain.devices.disks[0] must not have the same Name.\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
