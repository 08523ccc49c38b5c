// Tests of the VMI-CREATE-only rules (vmi-create-admitter.go Admit): volumes need a disk or
// filesystem, memory is mandatory (cause without field), reserved kubevirt.io labels, and the
// per-architecture rules of pkg/virt-api/webhooks/{amd64,arm64,s390x}.go.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

// amd64 VMIs with memory, so that only the rule under test speaks.
std::string amd64_with_devices(std::string_view devices) {
  return R"({"metadata": {"name": "v"}, "spec": {"architecture": "amd64", "domain": {"memory": {"guest": "1Gi"},
             "devices": )" +
         std::string(devices) + "}}}";
}

std::string amd64_with_labels(std::string_view labels) {
  return R"({"metadata": {"name": "v", "labels": )" + std::string(labels) +
         R"(}, "spec": {"architecture": "amd64", "domain": {"memory": {"guest": "1Gi"}}}})";
}

std::string check(const std::string& vmi_text, bool kubevirt_account = false) {
  return describe(validate_vmi_only(parse(vmi_text), ClusterConfig{}, kubevirt_account));
}

std::string check_spec(std::string_view spec) {
  return describe(validate_vmi_only(parse(R"({"metadata": {"name": "v"}, "spec": )" + std::string(spec) + "}"),
                                    ClusterConfig{}, false));
}

TEST(ValidationVmiOnly, CompleteVmiPasses) {
  EXPECT_EQ(check(R"({"metadata": {"name": "v", "labels": {"app": "demo"}}, "spec": {"architecture": "amd64",
      "domain": {"memory": {"guest": "1Gi"}, "devices": {"disks": [{"name": "root"}], "filesystems": [{"name": "shared"}]}},
      "volumes": [{"name": "root"}, {"name": "shared"}]}})"),
            "");
}

TEST(ValidationVmiOnly, VolumeWithoutDiskOrFilesystem) {
  EXPECT_EQ(check_spec(R"({"architecture": "amd64", "domain": {"memory": {"guest": "1Gi"},
                           "devices": {"disks": [{"name": "root"}], "filesystems": [{"name": "shared", "virtiofs": {}}]}},
                           "volumes": [{"name": "root"}, {"name": "shared"}, {"name": "orphan"}]})"),
            "FieldValueInvalid spec.domain.volumes[2].name: spec.domain.volumes[2].name 'orphan' not found.\n");
}

TEST(ValidationVmiOnly, MemoryIsMandatory) {
  const std::string missing =
      "FieldValueRequired : no memory requested, at least one of 'spec.domain.memory.guest', "
      "'spec.domain.memory.hugepages.pageSize' or 'spec.domain.resources.requests.memory' must be set\n";
  EXPECT_EQ(check_spec(R"({"architecture": "amd64"})"), missing);
  EXPECT_EQ(check_spec(R"({"architecture": "amd64", "domain": {"memory": {}}})"), missing);
  // Limits alone do not count (the mutator turns them into memory.guest first).
  EXPECT_EQ(check_spec(R"({"architecture": "amd64", "domain": {"resources": {"limits": {"memory": "1Gi"}}}})"),
            missing);
  EXPECT_EQ(check_spec(R"({"architecture": "amd64", "domain": {"resources": {"requests": {"memory": "0"}}}})"),
            missing);
}

// v1.7.0 names the page size memory.hugepages.size in this message.
TEST(ValidationVmiOnly, AtV17MemoryIsMandatoryNamesHugepagesSize) {
  ClusterConfig v17;
  v17.release = Release::v1_7;
  EXPECT_EQ(describe(validate_vmi_only(parse(R"({"spec": {"architecture": "amd64"}})"), v17, false)),
            "FieldValueRequired : no memory requested, at least one of 'spec.domain.memory.guest', "
            "'spec.domain.memory.hugepages.size' or 'spec.domain.resources.requests.memory' must be set\n");
}

TEST(ValidationVmiOnly, AnyOneMemorySettingIsEnough) {
  EXPECT_EQ(check_spec(R"({"architecture": "amd64", "domain": {"memory": {"guest": "1Gi"}}})"), "");
  EXPECT_EQ(check_spec(R"({"architecture": "amd64", "domain": {"memory": {"hugepages": {"pageSize": "1Gi"}}}})"), "");
  EXPECT_EQ(check_spec(R"({"architecture": "amd64", "domain": {"resources": {"requests": {"memory": "64Mi"}}}})"), "");
}

TEST(ValidationVmiOnly, ReservedLabels) {
  for (std::string_view label :
       {"kubevirt.io/created-by", "kubevirt.io/migrationJobUID", "kubevirt.io/nodeName",
        "kubevirt.io/migrationTargetNodeName", "kubevirt.io/schedulable", "kubevirt.io/install-strategy"}) {
    const std::string object = amd64_with_labels(R"({")" + std::string(label) + R"(": "x"})");
    EXPECT_EQ(check(object),
              "FieldValueNotSupported metadata.labels: creation of the following reserved kubevirt.io/ labels on a VMI "
              "object is prohibited\n")
        << label;
    EXPECT_EQ(check(object, true), "") << label;
  }
  // Other kubevirt.io labels are fine.
  EXPECT_EQ(check(amd64_with_labels(R"({"kubevirt.io/domain": "v", "kubevirt.io/outdatedLauncherImage": ""})")), "");
}

TEST(ValidationVmiOnly, UnsupportedArchitecture) {
  EXPECT_EQ(check_spec(R"({"architecture": "ppc64le", "domain": {"memory": {"guest": "1Gi"}}})"),
            "FieldValueInvalid spec.architecture: unsupported architecture: ppc64le\n");
  EXPECT_EQ(check_spec(R"({"domain": {"memory": {"guest": "1Gi"}}})"),
            "FieldValueInvalid spec.architecture: unsupported architecture: \n");
}

TEST(ValidationVmiOnly, Amd64Watchdog) {
  EXPECT_EQ(check(amd64_with_devices(R"({"watchdog": {"name": "w", "i6300esb": {}}})")), "");
  EXPECT_EQ(check(amd64_with_devices(R"({"watchdog": {"name": "w"}})")),
            "FieldValueNotSupported spec.domain.devices.watchdog: amd64 only supports I6300ESB watchdog device\n");
  EXPECT_EQ(check(amd64_with_devices(R"({"watchdog": {"name": "w", "i6300esb": {}, "diag288": {}}})")),
            "FieldValueNotSupported spec.domain.devices.watchdog: amd64 only supports I6300ESB watchdog device\n");
}

TEST(ValidationVmiOnly, Amd64Video) {
  for (std::string_view type : {"vga", "cirrus", "virtio", "ramfb", "bochs"}) {
    EXPECT_EQ(check(amd64_with_devices(R"({"video": {"type": ")" + std::string(type) + "\"}}")), "") << type;
  }
  EXPECT_EQ(check(amd64_with_devices(R"({"video": {"type": "qxl"}})")),
            "FieldValueNotSupported spec.domain.devices.video.type: video model 'qxl' is not supported on amd64 "
            "architecture\n");
  // A video device without a type is rejected too (slices.Contains of "").
  EXPECT_EQ(check(amd64_with_devices(R"({"video": {}})")),
            "FieldValueNotSupported spec.domain.devices.video.type: video model '' is not supported on amd64 "
            "architecture\n");
}

TEST(ValidationVmiOnly, Arm64Rules) {
  EXPECT_EQ(
      check_spec(
          R"({"architecture": "arm64", "domain": {"memory": {"guest": "1Gi"}, "cpu": {"model": "host-passthrough"},
                           "firmware": {"bootloader": {"efi": {"secureBoot": false}}},
                           "devices": {"disks": [{"name": "a", "disk": {"bus": "virtio"}}, {"name": "b", "cdrom": {"bus": "scsi"}}],
                                       "video": {"type": "ramfb"}}}})"),
      "");
  EXPECT_EQ(
      check_spec(R"({"architecture": "arm64", "domain": {"memory": {"guest": "1Gi"}, "cpu": {"model": "host-model"},
                           "firmware": {"bootloader": {"bios": {}}},
                           "devices": {"disks": [{"name": "a", "disk": {"bus": "sata"}}, {"name": "b", "cdrom": {"bus": "usb"}},
                                                 {"name": "c", "lun": {"bus": "sata"}}],
                                       "watchdog": {"name": "w", "i6300esb": {}}, "sound": {"name": "s"},
                                       "video": {"type": "vga"}}}})"),
      "FieldValueNotSupported spec.domain.firmware.bootloader.bios: Arm64 does not support bios boot, please change "
      "to uefi boot\n"
      "FieldValueNotSupported spec.domain.cpu.model: currently, host-passthrough is the only model supported on "
      "Arm64\n"
      "FieldValueNotSupported spec.domain.devices.disks[0].disk.bus: Arm64 not support this disk bus type, please "
      "use virtio or scsi\n"
      "FieldValueNotSupported spec.domain.devices.disks[1].cdrom.bus: Arm64 not support this disk bus type, please "
      "use virtio or scsi\n"
      "FieldValueNotSupported spec.domain.devices.disks[2].lun.bus: Arm64 not support this disk bus type, please "
      "use virtio or scsi\n"
      "FieldValueNotSupported spec.domain.devices.watchdog: Arm64 not support Watchdog device\n"
      "FieldValueNotSupported spec.domain.devices.sound: Arm64 not support sound device\n"
      "FieldValueNotSupported spec.domain.devices.video.type: video model 'vga' is not supported on arm64 "
      "architecture\n");
}

TEST(ValidationVmiOnly, S390xRules) {
  EXPECT_EQ(check_spec(R"({"architecture": "s390x", "domain": {"memory": {"guest": "1Gi"},
                           "devices": {"watchdog": {"name": "w", "diag288": {}}, "video": {"type": "virtio"}}}})"),
            "");
  EXPECT_EQ(check_spec(R"({"architecture": "s390x", "domain": {"memory": {"guest": "1Gi"},
                           "devices": {"watchdog": {"name": "w", "i6300esb": {}}, "video": {"type": "vga"}}}})"),
            "FieldValueNotSupported spec.domain.devices.watchdog: s390x only supports Diag288 watchdog device\n"
            "FieldValueNotSupported spec.domain.devices.video.type: video model 'vga' is not supported on s390x "
            "architecture\n");
}

TEST(ValidationVmiOnly, KubeVirtOrder) {
  EXPECT_EQ(check(R"({"metadata": {"name": "v", "labels": {"kubevirt.io/nodeName": "n"}},
                      "spec": {"architecture": "mips", "volumes": [{"name": "x"}]}})"),
            "FieldValueInvalid spec.domain.volumes[0].name: spec.domain.volumes[0].name 'x' not found.\n"
            "FieldValueRequired : no memory requested, at least one of 'spec.domain.memory.guest', "
            "'spec.domain.memory.hugepages.pageSize' or 'spec.domain.resources.requests.memory' must be set\n"
            "FieldValueNotSupported metadata.labels: creation of the following reserved kubevirt.io/ labels on a VMI "
            "object is prohibited\n"
            "FieldValueInvalid spec.architecture: unsupported architecture: mips\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
