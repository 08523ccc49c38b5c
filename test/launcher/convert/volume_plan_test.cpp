#include "vmgate/launcher/volume_plan.hpp"

#include <gtest/gtest.h>

#include <string>

#include "support/json_test_support.hpp"
#include "vmgate/launcher/converter.hpp"

namespace vmgate::launcher {
namespace {

using vmgate::testing::parse;

// A VMI with one volume of every kind the plan covers, each on a disk so that it converts.
constexpr std::string_view every_volume = R"({
  "metadata": {"name": "web.01", "namespace": "team-a",
               "annotations": {"kubevirt.io/instancetype-name": "u1.small"}},
  "spec": {
    "domain": {
      "memory": {"guest": "128Mi"},
      "firmware": {"uuid": "6a1b5c1e-0000-4000-8000-000000000001"},
      "devices": {"disks": [
        {"name": "root", "disk": {"bus": "virtio"}},
        {"name": "scratch", "disk": {"bus": "virtio"}},
        {"name": "data", "disk": {"bus": "virtio"}},
        {"name": "host", "disk": {"bus": "virtio"}},
        {"name": "seed", "cdrom": {"bus": "sata"}}]}},
    "volumes": [
      {"name": "root", "containerDisk": {"image": "quay.io/containerdisks/cirros:6.2"}},
      {"name": "scratch", "emptyDisk": {"capacity": "2.5Gi"}},
      {"name": "data", "persistentVolumeClaim": {"claimName": "data-pvc"}},
      {"name": "host", "hostDisk": {"path": "/mnt/host/disk.img", "type": "DiskOrCreate", "capacity": "1G"}},
      {"name": "seed", "cloudInitNoCloud": {"userData": "#cloud-config\n", "networkDataBase64": "dmVyc2lvbjogMgo="}}]}})";

TEST(VolumePlan, ListsWhatEveryVolumeNeeds) {
  const json::Document vmi = parse(every_volume);
  const PodLayout layout = layout_below("/pod");
  Result<VolumePlan> plan = plan_volumes(vmi, layout);
  ASSERT_TRUE(plan.ok()) << plan.error().message;

  ASSERT_EQ(plan->overlays.size(), 1U);
  EXPECT_EQ(plan->overlays[0].field, "spec.volumes[0].containerDisk");
  // The directory vmgate controller mounts the image volume at (controller_pod_test), below /pod.
  EXPECT_EQ(plan->overlays[0].image_volume, "/pod/var/run/kubevirt-image-volume/disk_0");
  EXPECT_EQ(plan->overlays[0].overlay, "/pod/var/run/kubevirt-ephemeral-disks/disk-data/root/disk.qcow2");

  ASSERT_EQ(plan->empty_disks.size(), 1U);
  EXPECT_EQ(plan->empty_disks[0].file, "/pod/var/run/libvirt/empty-disks/scratch.qcow2");
  EXPECT_EQ(plan->empty_disks[0].bytes, 2560ULL * 1024 * 1024);

  ASSERT_EQ(plan->files.size(), 2U);
  EXPECT_EQ(plan->files[0].file, "/pod/var/run/kubevirt-private/vmi-disks/data/disk.img");
  EXPECT_EQ(plan->files[0].create_bytes, 0U);
  // The node's /mnt/host, mounted by the controller where the launcher reads it (never /mnt/host
  // of the launcher's own container).
  EXPECT_EQ(plan->files[1].file, "/pod/var/run/kubevirt-private/vmi-disks/host/disk.img");
  EXPECT_EQ(plan->files[1].create_bytes, 1000000000U);

  ASSERT_EQ(plan->no_cloud.size(), 1U);
  const NoCloudIso& iso = plan->no_cloud[0];
  EXPECT_EQ(iso.iso, "/pod/var/run/kubevirt-ephemeral-disks/cloud-init-data/team-a/web.01/noCloud.iso");
  EXPECT_EQ(iso.user_data, "#cloud-config\n");
  EXPECT_EQ(iso.network_config, "version: 2\n");
  // cloud-init.go: NoCloudMetadata marshalled by encoding/json, hostname up to the first dot.
  EXPECT_EQ(iso.meta_data, R"({"instance-type":"u1.small","instance-id":"6a1b5c1e-0000-4000-8000-000000000001",)"
                           R"("local-hostname":"web"})");
}

// The plan and the XML must agree on every path, or the domain starts on files nobody made.
TEST(VolumePlan, PathsAreTheOnesTheDomainXmlUses) {
  const json::Document vmi = parse(every_volume);
  ConvertOptions options;
  options.software_emulation = true;
  options.layout = layout_below("/pod");
  Result<std::string> xml = convert(vmi, options);
  ASSERT_TRUE(xml.ok()) << xml.error().message;
  Result<VolumePlan> plan = plan_volumes(vmi, options.layout);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_NE(xml->find("file='" + plan->overlays[0].overlay + "'"), std::string::npos) << *xml;
  EXPECT_NE(xml->find("file='" + plan->empty_disks[0].file + "'"), std::string::npos);
  EXPECT_NE(xml->find("file='" + plan->files[0].file + "'"), std::string::npos);
  EXPECT_NE(xml->find("file='" + plan->files[1].file + "'"), std::string::npos);
  EXPECT_NE(xml->find("file='" + plan->no_cloud[0].iso + "'"), std::string::npos);
}

TEST(VolumePlan, HostnameAndMissingUuid) {
  const json::Document vmi = parse(R"({"metadata": {"name": "db"}, "spec": {"hostname": "db-primary",
      "volumes": [{"name": "seed", "cloudInitNoCloud": {"userDataBase64": "I2Nsb3VkLWNvbmZpZwo="}}]}})");
  Result<VolumePlan> plan = plan_volumes(vmi, PodLayout{});
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->no_cloud[0].meta_data, R"({"instance-id":"","local-hostname":"db-primary"})");
  EXPECT_EQ(plan->no_cloud[0].user_data, "#cloud-config\n");
  EXPECT_EQ(plan->no_cloud[0].network_config, "");
  EXPECT_EQ(plan->no_cloud[0].iso, "/var/run/kubevirt-ephemeral-disks/cloud-init-data/default/db/noCloud.iso");
}

TEST(VolumePlan, ClaimsNeedTheirFileOrDevice) {
  const json::Document vmi = parse(R"({"spec": {"volumes": [
      {"name": "fast", "persistentVolumeClaim": {"claimName": "fast"}},
      {"name": "dv", "dataVolume": {"name": "dv"}}]}})");
  PodLayout layout;
  layout.block_pvcs.insert("fast");
  Result<VolumePlan> plan = plan_volumes(vmi, layout);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->files.size(), 2U);
  EXPECT_EQ(plan->files[0].field, "spec.volumes[0].persistentVolumeClaim");
  EXPECT_EQ(plan->files[0].file, "/dev/fast");
  EXPECT_EQ(plan->files[1].field, "spec.volumes[1].dataVolume");
  EXPECT_EQ(plan->files[1].file, "/var/run/kubevirt-private/vmi-disks/dv/disk.img");
}

TEST(VolumePlan, NoVolumesNoPlan) {
  Result<VolumePlan> plan = plan_volumes(parse(R"({"spec": {}})"), PodLayout{});
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->overlays.empty() && plan->empty_disks.empty() && plan->files.empty() && plan->no_cloud.empty());
}

TEST(VolumePlan, CloudInitNeedsANameThatCanNameADirectory) {
  for (std::string_view metadata : {R"({})", R"({"name": ".."})", R"({"name": "vm", "namespace": "a/b"})"}) {
    const json::Document vmi =
        parse(R"({"metadata": )" + std::string(metadata) +
              R"(, "spec": {"volumes": [{"name": "seed", "cloudInitNoCloud": {"userData": "x"}}]}})");
    Result<VolumePlan> plan = plan_volumes(vmi, PodLayout{});
    ASSERT_FALSE(plan.ok()) << metadata;
    EXPECT_EQ(plan.error().message, "metadata: a name and a namespace that can name files in the pod are required");
  }
}

struct BadVolume {
  std::string_view volumes;
  std::string_view error;
};

class VolumePlanErrors : public ::testing::TestWithParam<BadVolume> {};

TEST_P(VolumePlanErrors, NameTheField) {
  const json::Document vmi =
      parse(R"({"metadata": {"name": "vm"}, "spec": {"volumes": )" + std::string(GetParam().volumes) + "}}");
  Result<VolumePlan> plan = plan_volumes(vmi, PodLayout{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().message, GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Table, VolumePlanErrors,
    ::testing::Values(
        BadVolume{R"({})", "spec.volumes: must be an array"}, BadVolume{R"([7])", "spec.volumes[0]: must be an object"},
        BadVolume{R"([{"emptyDisk": {"capacity": "1Gi"}}])", "spec.volumes[0].name: required"},
        BadVolume{R"([{"name": "../../etc", "emptyDisk": {"capacity": "1Gi"}}])",
                  "spec.volumes[0].name: cannot name a file in the pod (contains '/' or is '.' or '..')"},
        BadVolume{R"([{"name": "e", "emptyDisk": {}}])",
                  "spec.volumes[0].emptyDisk.capacity: a quantity such as \"2Gi\" is required"},
        BadVolume{R"([{"name": "e", "emptyDisk": {"capacity": "lots"}}])",
                  "spec.volumes[0].emptyDisk.capacity: quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        BadVolume{R"([{"name": "e", "emptyDisk": {"capacity": "-1Gi"}}])",
                  "spec.volumes[0].emptyDisk.capacity: must be a positive quantity"},
        BadVolume{R"([{"name": "e", "emptyDisk": {"capacity": "1Ki"}}])",
                  "spec.volumes[0].emptyDisk.capacity: must be at least 1Mi"},
        BadVolume{R"([{"name": "h", "hostDisk": {"type": "Disk"}}])", "spec.volumes[0].hostDisk.path: required"},
        BadVolume{R"([{"name": "h", "hostDisk": {"path": "relative.img", "type": "Disk"}}])",
                  "spec.volumes[0].hostDisk.path: must be an absolute path to a file of the node"},
        BadVolume{R"([{"name": "h", "hostDisk": {"path": "/data/", "type": "Disk"}}])",
                  "spec.volumes[0].hostDisk.path: must be an absolute path to a file of the node"},
        BadVolume{R"([{"name": "h", "hostDisk": {"path": "/x", "type": "Create"}}])",
                  "spec.volumes[0].hostDisk.type: must be Disk or DiskOrCreate"},
        BadVolume{R"([{"name": "h", "hostDisk": {"path": "/x", "type": "DiskOrCreate"}}])",
                  "spec.volumes[0].hostDisk.capacity: a quantity such as \"2Gi\" is required"},
        BadVolume{R"([{"name": "c", "cloudInitNoCloud": {}}])",
                  "spec.volumes[0].cloudInitNoCloud: userDataBase64, userData, networkDataBase64 or networkData is "
                  "required for a cloud-init data source"},
        BadVolume{R"([{"name": "c", "cloudInitNoCloud": {"userDataBase64": "not base64!"}}])",
                  "spec.volumes[0].cloudInitNoCloud.userDataBase64: is not valid base64"},
        BadVolume{R"([{"name": "c", "cloudInitNoCloud": {"userData": "a"}},
                     {"name": "d", "cloudInitNoCloud": {"userData": "b"}}])",
                  "spec.volumes[1].cloudInitNoCloud: only one cloud-init volume is supported"}));

}  // namespace
}  // namespace vmgate::launcher
