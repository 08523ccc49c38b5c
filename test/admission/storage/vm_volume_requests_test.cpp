// Tests of vms-admitter.go validateVolumeRequests (status.volumeRequests of a VirtualMachine).
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

constexpr std::string_view template_spec = R"({"domain": {"devices": {"disks": [{"name": "root", "disk": {}}]}},
    "volumes": [{"name": "root", "containerDisk": {"image": "i"}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "data", "readOnly": false}}]})";

std::string check(std::string_view requests, std::string_view spec = template_spec) {
  return describe(
      validate_vm_volume_requests(parse(R"({"spec": {"template": {"spec": )" + std::string(spec) +
                                        R"(}}, "status": {"volumeRequests": )" + std::string(requests) + "}}"),
                                  ClusterConfig{}));
}

std::string add(std::string_view name, std::string_view disk,
                std::string_view source = R"({"persistentVolumeClaim": {"claimName": "c"}})") {
  return R"({"addVolumeOptions": {"name": ")" + std::string(name) + R"(", "disk": )" + std::string(disk) +
         R"(, "volumeSource": )" + std::string(source) + "}}";
}

const std::string virtio = R"({"disk": {"bus": "virtio"}})";

TEST(ValidationVmVolumeRequests, WellFormedRequestsPass) {
  EXPECT_EQ(check("[]"), "");
  EXPECT_EQ(check("[" + add("hot", virtio) + R"(, {"removeVolumeOptions": {"name": "root"}}])"), "");
  // The same volume as the template's (false is Go's zero value) is no conflict.
  EXPECT_EQ(check("[" + add("data", virtio, R"({"persistentVolumeClaim": {"claimName": "data"}})") + "]"), "");
}

TEST(ValidationVmVolumeRequests, MalformedOrRepeatedRequests) {
  const std::string field = "FieldValueInvalid Status.volumeRequests: ";
  EXPECT_EQ(check(R"([{}])"),
            field + "VolumeRequests require one of either addVolumeOptions or removeVolumeOptions to be set\n");
  EXPECT_EQ(
      check(R"([{"addVolumeOptions": {"name": "a", "disk": {"disk": {}}}, "removeVolumeOptions": {"name": "a"}}])"),
      field + "VolumeRequests require either addVolumeOptions or removeVolumeOptions to be set, not both\n");
  EXPECT_EQ(check("[" + add("hot", virtio) + ", " + add("hot", virtio) + "]"),
            field + "AddVolume request for [hot] aleady exists\n");
  EXPECT_EQ(check(R"([{"removeVolumeOptions": {"name": "x"}}, {"removeVolumeOptions": {"name": "x"}}])"),
            field + "RemoveVolume request for [x] aleady exists\n");
  EXPECT_EQ(check("[" + add("data", virtio, R"({"dataVolume": {"name": "dv"}})") + "]"),
            field +
                "AddVolume request for [data] conflicts with an existing volume of the same name on the vmi "
                "template.\n");
}

TEST(ValidationVmVolumeRequests, HotpluggedDisks) {
  const std::string field = "FieldValueInvalid Status.volumeRequests: ";
  EXPECT_EQ(check(R"([{"addVolumeOptions": {"name": "hot", "volumeSource": {}}}])"),
            field + "AddVolume request for [hot] requires the disk field to be set.\n");
  EXPECT_EQ(
      check("[" + add("hot", R"({"disk": {"bus": "sata"}})") + "]"),
      field + "AddVolume request for disk [hot] requires bus to be 'scsi' or 'virtio'. [sata] is not permitted.\n");
  EXPECT_EQ(check("[" + add("hot", R"({"lun": {"bus": "virtio"}})") + "]"),
            field + "AddVolume request for LUN [hot] requires bus to be 'scsi'. [virtio] is not permitted.\n");
  EXPECT_EQ(check("[" + add("hot", R"({"cdrom": {}})") + "]"),
            field + "AddVolume request for [hot] requires diskDevice of type 'disk' or 'lun' to be used.\n");
  EXPECT_EQ(check("[" + add("hot", R"({"disk": {"bus": "scsi"}, "dedicatedIOThread": true})") + "]"),
            field + "AddVolume request for [hot] requires virtio bus for IOThreads.\n");
  EXPECT_EQ(check("[" + add("hot", R"({"disk": {"bus": "virtio"}, "bootOrder": 0})") + "]"),
            "FieldValueInvalid spec.domain.devices.disks[1].bootOrder: spec.domain.devices.disks[1] must have a boot "
            "order > 0, if supplied\n");
}

TEST(ValidationVmVolumeRequests, TheTemplateWithTheRequestsAppliedIsValidated) {
  // Removing the volume behind a disk leaves the disk without a volume.
  EXPECT_EQ(check(R"([{"removeVolumeOptions": {"name": "nothing"}}])",
                  R"({"domain": {"devices": {"disks": [{"name": "root", "disk": {"bus": "ide"}}]}},
                      "volumes": [{"name": "root", "containerDisk": {"image": "i"}}]})"),
            "FieldValueInvalid spec.template.spec.domain.devices.disks[0].disk.bus: IDE bus is not supported\n");
  // An added disk reaches the disk rules (its name becomes a container name).
  EXPECT_EQ(check("[" + add("Hot", virtio) + "]"),
            "FieldValueInvalid spec.template.spec.domain.devices.disks.domain.devices.disks[1].name: a lowercase RFC "
            "1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an "
            "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
