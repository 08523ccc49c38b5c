// The vmgate-launcher binary end to end on libvirt's test driver: volume preparation, SIGTERM,
// the status file, and the one-line reasons with their exit codes.
#include <signal.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "launcher/launcher_process.hpp"
#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using vmgate::testing::LauncherProcess;
using vmgate::testing::read_file;
using vmgate::testing::TemporaryDirectory;
using vmgate::testing::write_text;

constexpr std::string_view vmi_yaml = R"(apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: cli, namespace: default}
spec:
  terminationGracePeriodSeconds: 10
  domain:
    memory: {guest: 64Mi}
    devices:
      autoattachGraphicsDevice: false
      disks:
      - {name: root, disk: {bus: virtio}}
      - {name: scratch, disk: {bus: virtio}}
  volumes:
  - {name: root, containerDisk: {image: local/cirros}}
  - {name: scratch, emptyDisk: {capacity: 64Mi}}
)";

class LauncherBinary : public ::testing::Test {
 protected:
  void SetUp() override { write_text(directory_.path() / "vmi.yaml", vmi_yaml); }

  [[nodiscard]] fs::path path(const std::string& name) const { return directory_.path() / name; }

  LauncherProcess start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"--vmi",         path("vmi.yaml").string(),
                                  "--connect",     "test:///default",
                                  "--emulation",   "software",
                                  "--pod-root",    path("pod").string(),
                                  "--status-file", path("status.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return LauncherProcess(VMGATE_LAUNCHER_BINARY, args, path("stderr"));
  }

  void make_container_disk_image() const {
    const fs::path image = path("pod/var/run/kubevirt-image-volume/disk_0/disk/disk.img");
    fs::create_directories(image.parent_path());
    write_text(image, std::string(1 << 20, 'x'));
  }

  [[nodiscard]] std::string file(const std::string& name) const {
    std::error_code error;
    return fs::exists(path(name), error) ? read_file(path(name).string()) : std::string();
  }

  TemporaryDirectory directory_;
};

TEST_F(LauncherBinary, PreparesVolumesRunsAndStopsOnSigterm) {
  make_container_disk_image();
  LauncherProcess launcher = start();
  ASSERT_TRUE(launcher.started());
  for (int i = 0; i < 300 && file("status.json").find(R"("phase":"Running")") == std::string::npos; ++i) {
    ASSERT_TRUE(launcher.running()) << file("stderr");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(file("status.json").find(R"("phase":"Running")"), std::string::npos) << file("stderr");
  EXPECT_TRUE(fs::exists(path("pod/var/run/kubevirt-ephemeral-disks/disk-data/root/disk.qcow2")));
  EXPECT_TRUE(fs::exists(path("pod/var/run/libvirt/empty-disks/scratch.qcow2")));
  launcher.signal(SIGTERM);
  EXPECT_EQ(launcher.wait(seconds(30)), 0) << file("stderr");
  EXPECT_NE(file("stderr").find("vmgate-launcher: guest shut down after the stop request\n"), std::string::npos)
      << file("stderr");
  EXPECT_NE(file("status.json").find(R"("phase":"Succeeded")"), std::string::npos) << file("status.json");
}

TEST_F(LauncherBinary, MissingContainerDiskImageExitsOneNamingTheField) {
  LauncherProcess launcher = start();
  EXPECT_EQ(launcher.wait(seconds(30)), 1);
  EXPECT_EQ(file("stderr"), "vmgate-launcher: spec.volumes[0].containerDisk: " +
                                path("pod/var/run/kubevirt-image-volume/disk_0/disk").string() +
                                ": does not exist (a containerDisk image holds its disk as the one file under "
                                "disk/)\n");
  // Whoever follows the status file learns the guest will not run.
  EXPECT_NE(file("status.json").find(R"("phase":"Failed","reason":"spec.volumes[0].containerDisk: )"),
            std::string::npos)
      << file("status.json");
}

// The pod link: the VMI as the controller puts it in the pod's annotation (JSON, admitted: the
// webhook's finalizer, a uid), read from the downwardAPI file with no API, stopped by the
// kubelet's SIGTERM with an ACPI shutdown and a final status.
TEST_F(LauncherBinary, AnAdmittedVmiFromThePodAnnotationRunsAndStopsOnSigterm) {
  make_container_disk_image();
  write_text(
      path("vmi.json"),
      R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",)"
      R"("metadata":{"name":"cli","namespace":"default","uid":"6a1b2c3d-0000-4000-8000-000000000001",)"
      R"("finalizers":["kubevirt.io/virtualMachineControllerFinalize","kubevirt.io/foregroundDeleteVirtualMachine"]},)"
      R"("spec":{"terminationGracePeriodSeconds":10,"domain":{"machine":{"type":"q35"},"memory":{"guest":"64Mi"},)"
      R"("firmware":{"uuid":"6a1b2c3d-0000-4000-8000-000000000002"},)"
      R"("devices":{"autoattachGraphicsDevice":false,"disks":[{"name":"root","disk":{"bus":"virtio"}}]}},)"
      R"("volumes":[{"name":"root","containerDisk":{"image":"local/cirros"}}]}})");
  LauncherProcess launcher =
      LauncherProcess(VMGATE_LAUNCHER_BINARY,
                      {"--vmi", path("vmi.json").string(), "--connect", "test:///default", "--emulation", "software",
                       "--pod-root", path("pod").string(), "--status-file", path("status.json").string(),
                       "--console-log", path("pod/var/run/kubevirt-private/virt-serial0-log").string()},
                      path("stderr"));
  ASSERT_TRUE(launcher.started());
  for (int i = 0; i < 300 && file("status.json").find(R"("phase":"Running")") == std::string::npos; ++i) {
    ASSERT_TRUE(launcher.running()) << file("stderr");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(file("status.json").find(R"("phase":"Running")"), std::string::npos) << file("stderr");
  launcher.signal(SIGTERM);
  EXPECT_EQ(launcher.wait(seconds(30)), 0) << file("stderr");
  EXPECT_NE(file("status.json").find(R"("phase":"Succeeded","reason":"guest shut down after the stop request")"),
            std::string::npos)
      << file("status.json");
}

TEST_F(LauncherBinary, UnreachableLibvirtExitsOneWithOneLine) {
  make_container_disk_image();
  LauncherProcess launcher = start({"--connect", "qemu+unix:///system?socket=" + path("no-such-socket").string()});
  EXPECT_EQ(launcher.wait(seconds(30)), 1);
  const std::string err = file("stderr");
  EXPECT_EQ(err.rfind("vmgate-launcher: ", 0), 0U) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace vmgate::launcher
