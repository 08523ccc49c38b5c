// Volume preparation with the real tools the pod has (qemu-img, xorrisofs); the files are
// checked byte by byte (qcow2 header, ISO 9660 descriptor) and by extracting the ISO.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <gtest/gtest.h>
#include <sys/statfs.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"
#include "vmgate/launcher/volume_prepare.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;
using vmgate::testing::TemporaryDirectory;
using vmgate::testing::write_text;

std::string read_bytes(const fs::path& file) {
  return vmgate::testing::read_file(file.string());
}

std::uint64_t big_endian(const std::string& bytes, std::size_t offset, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) {
    value = (value << 8U) | static_cast<unsigned char>(bytes.at(offset + i));
  }
  return value;
}

// qcow2 header (qemu docs/interop/qcow2.txt): backing file offset/size at 8/16, size at 24.
std::string qcow2_backing_file(const std::string& header) {
  const std::uint64_t offset = big_endian(header, 8, 8);
  const std::uint64_t size = big_endian(header, 16, 4);
  return offset == 0 ? std::string() : header.substr(offset, size);
}

TEST(RunTool, SucceedsFailsAndTimesOut) {
  EXPECT_TRUE(run_tool({"true"}, std::chrono::seconds(5)).ok());
  Status failed = run_tool({"sh", "-c", "echo first >&2; echo 'the reason' >&2; exit 3"}, std::chrono::seconds(5));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "sh failed (exit status 3): the reason");
  Status missing = run_tool({"vmgate-no-such-tool"}, std::chrono::seconds(5));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "cannot run vmgate-no-such-tool: No such file or directory");
  const auto started = std::chrono::steady_clock::now();
  Status slow = run_tool({"sleep", "30"}, std::chrono::milliseconds(200));
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().message, "sleep did not finish within 200 ms and was killed");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  // Closing stderr does not let a tool escape the timeout.
  Status quiet = run_tool({"sh", "-c", "exec 2>&-; sleep 30"}, std::chrono::milliseconds(200));
  EXPECT_FALSE(quiet.ok());
}

TEST(PrepareVolumes, ContainerDiskOverlayKeepsTheImageAndAnExistingOverlay) {
  const TemporaryDirectory directory;
  const fs::path image = directory.path() / "disk_0/disk/disk.img";
  fs::create_directories(image.parent_path());
  write_text(image, std::string(1024 * 1024, 'x'));
  VolumePlan plan;
  plan.overlays.push_back({"spec.volumes[0].containerDisk", (directory.path() / "disk_0").string(),
                           (directory.path() / "disk-data/root/disk.qcow2").string()});
  ASSERT_TRUE(prepare_volumes(plan).ok());
  const std::string overlay = read_bytes(plan.overlays[0].overlay);
  EXPECT_EQ(overlay.substr(0, 4), std::string("QFI\xfb", 4));
  EXPECT_EQ(qcow2_backing_file(overlay), image.string());
  EXPECT_EQ(big_endian(overlay, 24, 8), 1024U * 1024U);  // the image's size
  EXPECT_EQ(read_bytes(image), std::string(1024 * 1024, 'x'));

  // A second overlay over a qcow2 image: the format is probed, not assumed (and given to QEMU).
  const fs::path second = directory.path() / "disk_1/disk/disk.qcow2";
  fs::create_directories(second.parent_path());
  ASSERT_EQ(std::system(("qemu-img create -q -f qcow2 " + second.string() + " 1M").c_str()), 0);
  VolumePlan stacked;
  stacked.overlays.push_back({"spec.volumes[1].containerDisk", (directory.path() / "disk_1").string(),
                              (directory.path() / "disk-data/second/disk.qcow2").string()});
  ASSERT_TRUE(prepare_volumes(stacked).ok());
  const std::string stacked_overlay = read_bytes(stacked.overlays[0].overlay);
  EXPECT_EQ(qcow2_backing_file(stacked_overlay), second.string());
  EXPECT_NE(stacked_overlay.find("qcow2"), std::string::npos);  // the backing format, in a header extension

  // A restarted launcher keeps what the guest wrote into the overlay.
  write_text(plan.overlays[0].overlay, "guest data");
  ASSERT_TRUE(prepare_volumes(plan).ok());
  EXPECT_EQ(read_bytes(plan.overlays[0].overlay), "guest data");
}

TEST(PrepareVolumes, MissingContainerDiskImageNamesTheFieldAndTheDirectory) {
  const TemporaryDirectory directory;
  VolumePlan plan;
  const std::string volume = (directory.path() / "disk_3").string();
  plan.overlays.push_back({"spec.volumes[3].containerDisk", volume, (directory.path() / "o.qcow2").string()});
  Status done = prepare_volumes(plan);
  ASSERT_FALSE(done.ok());
  EXPECT_EQ(done.error().message, "spec.volumes[3].containerDisk: " + volume +
                                      "/disk: does not exist (a containerDisk image holds its disk as the one file "
                                      "under disk/)");
  EXPECT_FALSE(fs::exists(directory.path() / "o.qcow2"));
}

TEST(PrepareVolumes, EmptyDiskIsAQcow2OfTheCapacity) {
  const TemporaryDirectory directory;
  VolumePlan plan;
  plan.empty_disks.push_back(
      {"spec.volumes[1].emptyDisk", (directory.path() / "empty-disks/scratch.qcow2").string(), 3ULL << 30U});
  ASSERT_TRUE(prepare_volumes(plan).ok());
  const std::string header = read_bytes(plan.empty_disks[0].file);
  EXPECT_EQ(header.substr(0, 4), std::string("QFI\xfb", 4));
  EXPECT_EQ(big_endian(header, 24, 8), 3ULL << 30U);
  EXPECT_EQ(qcow2_backing_file(header), "");
  EXPECT_LT(fs::file_size(plan.empty_disks[0].file), 1024U * 1024U);  // allocated lazily
}

TEST(PrepareVolumes, RequiredFilesExistOrAreCreatedSparse) {
  const TemporaryDirectory directory;
  VolumePlan missing;
  const std::string pvc = (directory.path() / "vmi-disks/data/disk.img").string();
  missing.files.push_back({"spec.volumes[2].persistentVolumeClaim", pvc, 0});
  Status refused = prepare_volumes(missing);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "spec.volumes[2].persistentVolumeClaim: " + pvc + ": does not exist");

  VolumePlan create;
  const fs::path host = directory.path() / "host/disk.img";
  create.files.push_back({"spec.volumes[0].hostDisk", host.string(), 1000000000});
  ASSERT_TRUE(prepare_volumes(create).ok());
  EXPECT_EQ(fs::file_size(host), 1000000000U);
  write_text(host, "kept");
  ASSERT_TRUE(prepare_volumes(create).ok());
  EXPECT_EQ(read_bytes(host), "kept");
}

TEST(PrepareVolumes, NoCloudIsoHasTheCidataLabelAndTheFiles) {
  const TemporaryDirectory directory;
  VolumePlan plan;
  const fs::path iso = directory.path() / "cloud-init-data/default/vm/noCloud.iso";
  plan.no_cloud.push_back({"spec.volumes[1].cloudInitNoCloud", iso.string(), R"({"instance-id":"abc"})",
                           "#cloud-config\nhostname: vm\n", "version: 2\n", false, "", ""});
  ASSERT_TRUE(prepare_volumes(plan).ok());
  // ISO 9660: the primary volume descriptor at sector 16, its volume identifier at byte 40.
  const std::string bytes = read_bytes(iso);
  ASSERT_GT(bytes.size(), 32768U + 72U);
  EXPECT_EQ(bytes.substr(32768 + 1, 5), "CD001");
  EXPECT_EQ(bytes.substr(32768 + 40, 6), "cidata");
  EXPECT_FALSE(fs::exists(iso.string() + ".staging"));

  const fs::path extracted = directory.path() / "extracted";
  const std::string command =
      "xorriso -osirrox on -indev '" + iso.string() + "' -extract / '" + extracted.string() + "' >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(read_bytes(extracted / "meta-data"), R"({"instance-id":"abc"})");
  EXPECT_EQ(read_bytes(extracted / "user-data"), "#cloud-config\nhostname: vm\n");
  EXPECT_EQ(read_bytes(extracted / "network-config"), "version: 2\n");

  // Rebuilt on the next start, without network-config when there is no network data.
  plan.no_cloud[0].network_config.clear();
  plan.no_cloud[0].user_data = "#cloud-config\n";
  ASSERT_TRUE(prepare_volumes(plan).ok());
  fs::remove_all(extracted);
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(read_bytes(extracted / "user-data"), "#cloud-config\n");
  EXPECT_FALSE(fs::exists(extracted / "network-config"));
}

// cloudInitConfigDrive with its user data in a secret the pod mounted (secretRef): label
// config-2, openstack/latest/{meta_data.json,user_data}; a secret without the file is named.
TEST(PrepareVolumes, ConfigDriveFromASecret) {
  const TemporaryDirectory directory;
  const fs::path secret = directory.path() / "secret/cloudinit";
  fs::create_directories(secret);
  write_text(secret / "userData", "#cloud-config\nfrom: secret\n");
  VolumePlan plan;
  const fs::path iso = directory.path() / "cloud-init-data/default/vm/configdrive.iso";
  plan.no_cloud.push_back({"spec.volumes[1].cloudInitConfigDrive", iso.string(), R"({"instance_id":"vm.default"})", "",
                           "", true, secret.string(), ""});
  ASSERT_TRUE(prepare_volumes(plan).ok());
  const std::string bytes = read_bytes(iso);
  ASSERT_GT(bytes.size(), 32768U + 72U);
  EXPECT_EQ(bytes.substr(32768 + 40, 8), "config-2");
  const fs::path extracted = directory.path() / "extracted";
  const std::string command =
      "xorriso -osirrox on -indev '" + iso.string() + "' -extract / '" + extracted.string() + "' >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(read_bytes(extracted / "openstack/latest/meta_data.json"), R"({"instance_id":"vm.default"})");
  EXPECT_EQ(read_bytes(extracted / "openstack/latest/user_data"), "#cloud-config\nfrom: secret\n");

  fs::remove(secret / "userData");
  const Status missing = prepare_volumes(plan);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "spec.volumes[1].cloudInitConfigDrive.secretRef: " + secret.string() +
                                         ": has no userdata or userData file");
}

// A configMap given as a disk: an ISO of the files the pod mounted, labelled as asked.
TEST(PrepareVolumes, ConfigMapDiskIsAnIsoOfTheMountedFiles) {
  const TemporaryDirectory directory;
  const fs::path mounted = directory.path() / "config-map/app";
  fs::create_directories(mounted);
  write_text(mounted / "settings.ini", "a=1\n");
  VolumePlan plan;
  const fs::path iso = directory.path() / "config-map-disks/app.iso";
  plan.config_isos.push_back({"spec.volumes[2].configMap", mounted.string(), iso.string(), "cfgdata"});
  ASSERT_TRUE(prepare_volumes(plan).ok());
  EXPECT_EQ(read_bytes(iso).substr(32768 + 40, 7), "cfgdata");
  plan.config_isos[0].source_dir = (directory.path() / "config-map/absent").string();
  const Status missing = prepare_volumes(plan);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("the pod did not mount the volume's files here"), std::string::npos);
}

// blockSize.matchVolume on a file: its file system's block size (statfs), probed before the file
// exists (overlays and empty disks are made later) from its nearest directory; only for the disks
// that ask.
TEST(ProbeBlockSizes, FileVolumesGetTheirFileSystemsBlockSize) {
  const TemporaryDirectory directory;
  const PodLayout layout = layout_below(directory.path().string());
  const json::Document vmi = vmgate::testing::parse(R"({"spec": {"domain": {"devices": {"disks": [
      {"name": "a", "blockSize": {"matchVolume": {}}},
      {"name": "b", "blockSize": {"matchVolume": {"enabled": false}}},
      {"name": "c"}]}},
    "volumes": [{"name": "a", "emptyDisk": {"capacity": "1Gi"}}, {"name": "b", "emptyDisk": {"capacity": "1Gi"}},
                {"name": "c", "emptyDisk": {"capacity": "1Gi"}}]}})");
  Result<std::map<std::string, BlockSizes>> sizes = probe_block_sizes(vmi, layout);
  ASSERT_TRUE(sizes.ok()) << sizes.error().message;
  ASSERT_EQ(sizes->size(), 1U);
  struct statfs info {};
  ASSERT_EQ(::statfs(directory.path().c_str(), &info), 0);
  EXPECT_EQ(sizes->at("a").logical, static_cast<unsigned>(info.f_bsize));
  EXPECT_EQ(sizes->at("a").physical, static_cast<unsigned>(info.f_bsize));

  const json::Document cloud = vmgate::testing::parse(R"({"spec": {"domain": {"devices": {"disks": [
      {"name": "seed", "blockSize": {"matchVolume": {}}}]}},
    "volumes": [{"name": "seed", "cloudInitNoCloud": {"userData": "x"}}]}})");
  Result<std::map<std::string, BlockSizes>> none = probe_block_sizes(cloud, layout);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "spec.domain.devices.disks[0].blockSize.matchVolume: the volume of disk \"seed\" has no file to probe");
}

// KubeVirt's isBlockDeviceVolume: a claim whose /dev/<volume> is a block device. Needs root for
// mknod (as in CI); a regular file of the same name is not a block volume.
TEST(BlockVolumes, ClaimsWhoseDeviceIsABlockDevice) {
  const TemporaryDirectory directory;
  PodLayout layout;
  layout.block_device_dir = (directory.path() / "dev").string();
  fs::create_directories(layout.block_device_dir);
  if (::mknod((directory.path() / "dev/fast").c_str(), S_IFBLK | 0600, makedev(7, 0)) != 0) {
    GTEST_SKIP() << "mknod needs root";
  }
  ::mknod((directory.path() / "dev/dv").c_str(), S_IFBLK | 0600, makedev(7, 1));
  write_text(directory.path() / "dev/slow", "a file");
  const json::Document vmi = vmgate::testing::parse(R"({"spec": {"volumes": [
      {"name": "fast", "persistentVolumeClaim": {"claimName": "fast"}},
      {"name": "dv", "dataVolume": {"name": "dv"}},
      {"name": "slow", "persistentVolumeClaim": {"claimName": "slow"}},
      {"name": "missing", "persistentVolumeClaim": {"claimName": "missing"}},
      {"name": "root", "emptyDisk": {"capacity": "1Gi"}}]}})");
  EXPECT_EQ(block_volumes(vmi, layout), (std::set<std::string>{"dv", "fast"}));
  EXPECT_TRUE(block_volumes(vmgate::testing::parse(R"({"spec": 1})"), layout).empty());
}

}  // namespace
}  // namespace vmgate::launcher
