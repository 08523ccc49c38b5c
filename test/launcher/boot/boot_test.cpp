// Real boots under TCG through qemu:///embed (docs/launcher.md, "Boot tests"): Debian's kernel from
// /boot and a busybox initramfs built here, booted by the real vmgate-launcher binary from a
// VMI's firmware.kernelBoot. The guest's /init (test/fixtures/launcher/boot/init) prints markers
// on the serial console, which the launcher logs to a file. Prerequisites missing: skipped, but
// failed when CI=true (tools/launcher-boot-prereqs provides them). Never asserts on boot speed.
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "launcher/launcher_process.hpp"
#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;
using vmgate::testing::LauncherProcess;
using vmgate::testing::read_file;
using vmgate::testing::write_text;

constexpr seconds boot_timeout{180};
const fs::path fixtures = fs::path(VMGATE_SOURCE_DIR) / "test/fixtures/launcher/boot";
constexpr std::string_view guest_uuid = "11111111-2222-4333-8444-555555555555";
constexpr std::string_view guest_serial = "vmgate-serial-42";

bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

std::string read_or_empty(const fs::path& file) {
  std::error_code error;
  return fs::exists(file, error) ? read_file(file.string()) : std::string();
}

// The newest /boot/vmlinuz-<version> whose modules the guest needs are in /lib/modules/<version>.
struct GuestKernel {
  fs::path image;
  fs::path modules;
};

std::optional<GuestKernel> find_guest_kernel() {
  std::vector<std::string> versions;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/boot", error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("vmlinuz-")) {
      versions.push_back(name.substr(8));
    }
  }
  std::sort(versions.rbegin(), versions.rend());
  for (const std::string& version : versions) {
    const fs::path modules = fs::path("/lib/modules") / version / "kernel";
    if (fs::exists(modules / "drivers/block/virtio_blk.ko") && fs::exists(modules / "fs/isofs/isofs.ko")) {
      return GuestKernel{fs::path("/boot") / ("vmlinuz-" + version), modules};
    }
  }
  return std::nullopt;
}

std::string missing_prerequisite() {
  if (!find_guest_kernel()) {
    return "no /boot/vmlinuz-* with its modules in /lib/modules (tools/launcher-boot-prereqs extracts them)";
  }
  if (!fs::exists("/bin/busybox")) {
    return "busybox-static is not installed";
  }
  if (std::system("command -v cpio >/dev/null") != 0) {
    return "cpio is not installed";
  }
  if (!fs::exists("/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so")) {
    return "libvirt-daemon-driver-qemu is not installed";
  }
  if (std::system("getent passwd libvirt-qemu >/dev/null") != 0) {
    return "user libvirt-qemu is missing (the QEMU driver needs it)";
  }
  if (!fs::exists("/usr/share/OVMF/OVMF_CODE_4M.fd")) {
    return "ovmf is not installed";
  }
  return "";
}

class BootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string missing = missing_prerequisite(); !missing.empty()) {
      if (in_ci()) {
        FAIL() << "boot prerequisite missing in CI: " << missing;
      }
      GTEST_SKIP() << missing;
    }
    kernel_ = *find_guest_kernel();
    build_initramfs();
  }

  void TearDown() override {
    // Whatever happened, no QEMU of this test may survive it.
    for (const pid_t pid : qemu_pids()) {
      ::kill(pid, SIGKILL);
    }
  }

  [[nodiscard]] const fs::path& work() const { return work_.path(); }
  [[nodiscard]] fs::path serial_log() const { return work() / "serial.log"; }
  [[nodiscard]] fs::path root() const { return work() / "embed"; }

  // busybox, /init and the modules, as cpio newc + gzip.
  void build_initramfs() {
    const fs::path tree = work() / "initramfs";
    for (const char* directory : {"bin", "proc", "sys", "dev", "lib/modules", "mnt"}) {
      fs::create_directories(tree / directory);
    }
    fs::copy_file("/bin/busybox", tree / "bin/busybox");
    fs::copy_file(fixtures / "init", tree / "init");
    for (const auto& entry : fs::recursive_directory_iterator(kernel_.modules)) {
      if (entry.path().extension() == ".ko") {
        fs::copy_file(entry.path(), tree / "lib/modules" / entry.path().filename(),
                      fs::copy_options::overwrite_existing);
      }
    }
    const std::string command = "cd '" + tree.string() + "' && find . | cpio -o -H newc 2>/dev/null | gzip -1 > '" +
                                (work() / "initramfs.cpio.gz").string() + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
  }

  // A VMI booting the kernel with vmgate.mode=<mode>; `firmware_extra`, `devices`, `volumes` and
  // `domain_extra` are YAML lines added under firmware, devices, spec and domain.
  fs::path write_vmi(const std::string& mode, const std::string& firmware_extra = "", const std::string& devices = "",
                     const std::string& volumes = "", const std::string& domain_extra = "") const {
    const fs::path file = work() / "vmi.yaml";
    write_text(file,
               "apiVersion: kubevirt.io/v1\n"
               "kind: VirtualMachineInstance\n"
               "metadata:\n"
               "  name: boot-" +
                   mode +
                   "\n"
                   "  namespace: default\n" +
                   metadata_ +
                   "spec:\n"
                   "  terminationGracePeriodSeconds: 5\n"
                   "  domain:\n"
                   "    machine: {type: q35}\n"
                   "    cpu: " +
                   cpu_ +
                   "\n"
                   "    memory: " +
                   memory_ + "\n" + domain_extra +
                   "    firmware:\n"
                   "      uuid: " +
                   std::string(guest_uuid) +
                   "\n"
                   "      serial: " +
                   std::string(guest_serial) + "\n" + firmware_extra +
                   "      kernelBoot:\n"
                   "        kernelArgs: " +
                   kernel_args(mode) +
                   "\n"
                   "        container:\n"
                   "          image: local/kernel:latest\n"
                   "          kernelPath: " +
                   kernel_.image.string() +
                   "\n"
                   "          initrdPath: " +
                   (work() / "initramfs.cpio.gz").string() +
                   "\n"
                   "    devices:\n"
                   "      autoattachGraphicsDevice: false\n"
                   // No pod here to create the tap of KubeVirt's default pod interface.
                   "      autoattachPodInterface: false\n" +
                   devices + volumes + status_);
    return file;
  }

  static std::string kernel_args(const std::string& mode) {
    // memhp_default_state: memory that virtio-mem plugs comes online at once (no udev here).
    return "console=ttyS0 quiet panic=-1 memhp_default_state=online vmgate.mode=" + mode;
  }

  // `cpu`, `memory` of the VMI write_vmi() writes; `status` YAML appended at the top level.
  std::string cpu_ = "{model: host-model}";
  std::string memory_ = "{guest: 256Mi}";
  std::string status_;
  std::string metadata_;  // YAML lines under metadata

  std::unique_ptr<LauncherProcess> start(const fs::path& vmi, const std::string& stderr_name = "launcher.err") {
    return start_with({"--vmi", vmi.string()}, stderr_name);
  }

  // The launcher with `input` (--vmi FILE, or --vm FILE --objects DIR) and the test's pod.
  std::unique_ptr<LauncherProcess> start_with(std::vector<std::string> input,
                                              const std::string& stderr_name = "launcher.err") {
    const std::vector<std::string> pod = {"--root",
                                          root().string(),
                                          "--emulation",
                                          "software",
                                          "--kernel-boot-dir",
                                          "/",
                                          "--pod-root",
                                          (work() / "pod").string(),
                                          "--console-log",
                                          serial_log().string(),
                                          "--status-file",
                                          (work() / "status.json").string()};
    input.insert(input.end(), pod.begin(), pod.end());
    auto process = std::make_unique<LauncherProcess>(VMGATE_LAUNCHER_BINARY, input, work() / stderr_name);
    EXPECT_TRUE(process->started());
    return process;
  }

  // nproc and MemTotal (KiB) from the guest's VMGATE-RESOURCES line; nullopt without one.
  struct GuestResources {
    long nproc = 0;
    long memtotal_kib = 0;
  };
  [[nodiscard]] std::optional<GuestResources> guest_resources() const {
    const std::string serial = read_or_empty(serial_log());
    const std::string marker = "VMGATE-RESOURCES nproc=";
    const std::size_t at = serial.find(marker);
    if (at == std::string::npos) {
      return std::nullopt;
    }
    GuestResources resources;
    if (std::sscanf(serial.c_str() + at, "VMGATE-RESOURCES nproc=%ld memtotal_kib=%ld", &resources.nproc,
                    &resources.memtotal_kib) != 2) {
      return std::nullopt;
    }
    std::cout << "guest: nproc=" << resources.nproc << " MemTotal=" << resources.memtotal_kib << " KiB\n";
    return resources;
  }

  // Waits until the serial log contains `marker` (or the launcher is gone).
  bool wait_for_marker(std::string_view marker, LauncherProcess& process, seconds timeout = boot_timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (read_or_empty(serial_log()).find(marker) != std::string::npos) {
        return true;
      }
      if (!process.running()) {
        return read_or_empty(serial_log()).find(marker) != std::string::npos;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  // QEMU processes of the embedded root that are still alive.
  std::vector<pid_t> qemu_pids() const {
    std::vector<pid_t> pids;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(root() / "run/qemu", error)) {
      if (entry.path().extension() == ".pid") {
        const pid_t pid = std::atoi(read_or_empty(entry.path()).c_str());
        if (pid > 0 && ::kill(pid, 0) == 0) {
          pids.push_back(pid);
        }
      }
    }
    return pids;
  }

  [[nodiscard]] std::string diagnostics(const std::string& stderr_name = "launcher.err") const {
    return "\n--- launcher stderr:\n" + read_or_empty(work() / stderr_name) + "--- serial log:\n" +
           read_or_empty(serial_log());
  }

  GuestKernel kernel_;
  vmgate::testing::TemporaryDirectory work_;
};

// (1) boot → marker → the guest powers off → exit 0; (2) the guest reads the SMBIOS uuid and
// serial the VMI set.
TEST_F(BootTest, PowersOffAndSeesSmbios) {
  auto launcher = start(write_vmi("poweroff"));
  ASSERT_TRUE(wait_for_marker("VMGATE-BOOT-OK", *launcher)) << diagnostics();
  EXPECT_EQ(launcher->wait(seconds(120)), 0) << diagnostics();
  EXPECT_NE(read_or_empty(serial_log())
                .find("VMGATE-DMI uuid=" + std::string(guest_uuid) + " serial=" + std::string(guest_serial)),
            std::string::npos)
      << diagnostics();
  EXPECT_NE(read_or_empty(work() / "status.json").find(R"("phase":"Succeeded")"), std::string::npos);
  EXPECT_TRUE(qemu_pids().empty());
}

// (3) SIGTERM → ACPI shutdown (re-sent until the guest listens) → the guest powers off → exit 0.
TEST_F(BootTest, SigtermShutsDownThroughAcpi) {
  auto launcher = start(write_vmi("acpi"));
  ASSERT_TRUE(wait_for_marker("VMGATE-ACPI-READY", *launcher)) << diagnostics();
  launcher->signal(SIGTERM);
  EXPECT_EQ(launcher->wait(seconds(120)), 0) << diagnostics();
  EXPECT_NE(read_or_empty(serial_log()).find("VMGATE-ACPI-PRESSED"), std::string::npos) << diagnostics();
  EXPECT_NE(read_or_empty(work() / "launcher.err").find("guest shut down after the stop request"), std::string::npos)
      << diagnostics();
  EXPECT_TRUE(qemu_pids().empty());
}

// (4) a guest that ignores ACPI → destroyed when the grace period ends, exit non-zero, no QEMU.
TEST_F(BootTest, GuestIgnoringAcpiIsDestroyedAtGraceEnd) {
  auto launcher = start(write_vmi("hang"));
  ASSERT_TRUE(wait_for_marker("VMGATE-HANG", *launcher)) << diagnostics();
  const auto signalled = std::chrono::steady_clock::now();
  launcher->signal(SIGTERM);
  const std::optional<int> status = launcher->wait(seconds(120));
  ASSERT_TRUE(status.has_value()) << diagnostics();
  EXPECT_NE(*status, 0);
  EXPECT_GE(std::chrono::steady_clock::now() - signalled, seconds(4));  // not before the grace period
  EXPECT_NE(read_or_empty(work() / "launcher.err").find("grace period of 5 s expired: domain destroyed"),
            std::string::npos)
      << diagnostics();
  EXPECT_TRUE(qemu_pids().empty());
}

// (5) EFI boot (OVMF without Secure Boot), the SMBIOS values still visible.
TEST_F(BootTest, BootsThroughEfi) {
  auto launcher = start(write_vmi("poweroff", "      bootloader: {efi: {secureBoot: false}}\n"));
  ASSERT_TRUE(wait_for_marker("VMGATE-BOOT-OK", *launcher)) << diagnostics();
  EXPECT_EQ(launcher->wait(seconds(120)), 0) << diagnostics();
  EXPECT_NE(read_or_empty(serial_log()).find("VMGATE-DMI uuid=" + std::string(guest_uuid)), std::string::npos);
  EXPECT_TRUE(fs::exists(root() / "lib/qemu/nvram/default_boot-poweroff_VARS.fd"));
  EXPECT_NE(read_or_empty(serial_log()).find("VMGATE-EFI secure boot disabled"), std::string::npos) << diagnostics();
}

// Secure Boot (OVMF's secboot build with Microsoft's keys enrolled, SMM on) boots Debian's signed
// kernel (docs/launcher.md, "Boot tests").
TEST_F(BootTest, BootsWithSecureBoot) {
  auto launcher = start(
      write_vmi("poweroff", "      bootloader: {efi: {secureBoot: true}}\n", "", "", "    features: {smm: {}}\n"));
  ASSERT_TRUE(wait_for_marker("VMGATE-BOOT-OK", *launcher)) << diagnostics();
  EXPECT_EQ(launcher->wait(seconds(120)), 0) << diagnostics();
  EXPECT_NE(read_or_empty(serial_log()).find("VMGATE-EFI secure boot enabled"), std::string::npos) << diagnostics();
}

// (6) the NoCloud ISO the launcher builds: the guest mounts it and reads meta-data and user-data.
TEST_F(BootTest, GuestReadsTheCloudInitIso) {
  auto launcher = start(write_vmi("cloudinit", "", "      disks:\n      - name: seed\n        cdrom: {bus: sata}\n",
                                  "  volumes:\n  - name: seed\n    cloudInitNoCloud:\n"
                                  "      userData: \"#cloud-config\\nvmgate-marker: from-user-data\\n\"\n"));
  ASSERT_TRUE(wait_for_marker("VMGATE-ISO", *launcher)) << diagnostics();
  EXPECT_EQ(launcher->wait(seconds(120)), 0) << diagnostics();
  const std::string serial = read_or_empty(serial_log());
  EXPECT_NE(serial.find("files=meta-data user-data "), std::string::npos) << diagnostics();
  EXPECT_NE(
      serial.find(R"(meta={"instance-id":")" + std::string(guest_uuid) + R"(","local-hostname":"boot-cloudinit"})"),
      std::string::npos)
      << diagnostics();
  EXPECT_NE(serial.find("user=#cloud-config vmgate-marker: from-user-data"), std::string::npos) << diagnostics();
}

// (7) a containerDisk: the guest reads the image through the qcow2 overlay and writes into it;
// the image itself stays unchanged.
TEST_F(BootTest, ContainerDiskOverlayLeavesTheImageUnchanged) {
  const fs::path image = work() / "pod/var/run/kubevirt-image-volume/disk_0/disk/disk.img";
  fs::create_directories(image.parent_path());
  std::string content = "VMGATE-CONTAINERDISK-BASE\n";
  content.resize(16 * 1024 * 1024, '\0');
  write_text(image, content);
  auto launcher =
      start(write_vmi("containerdisk", "", "      disks:\n      - name: root\n        disk: {bus: virtio}\n",
                      "  volumes:\n  - name: root\n    containerDisk: {image: local/cirros:latest}\n"));
  ASSERT_TRUE(wait_for_marker("VMGATE-VDA wrote", *launcher)) << diagnostics();
  EXPECT_EQ(launcher->wait(seconds(120)), 0) << diagnostics();
  const std::string serial = read_or_empty(serial_log());
  EXPECT_NE(serial.find("VMGATE-VDA head=VMGATE-CONTAINERDISK-BASE"), std::string::npos) << diagnostics();
  EXPECT_NE(serial.find("VMGATE-VDA wrote=VMGATE-WRITTEN-BY-GUEST"), std::string::npos) << diagnostics();
  EXPECT_EQ(read_file(image.string()), content) << "the guest's write reached the containerDisk image";
  const std::string overlay =
      read_file((work() / "pod/var/run/kubevirt-ephemeral-disks/disk-data/root/disk.qcow2").string());
  EXPECT_NE(overlay.find("VMGATE-WRITTEN-BY-GUEST"), std::string::npos) << "the write is not in the overlay";
}

// A launcher killed with SIGKILL leaves QEMU running (docs/launcher.md, "No autodestroy in embed
// mode"); the next launcher in the same root removes that domain, boots its own, and still never
// leaves a QEMU behind.
TEST_F(BootTest, RestartedLauncherCleansUpTheDomainOfACrashedOne) {
  const fs::path vmi = write_vmi("hang");
  auto crashed = start(vmi, "first.err");
  ASSERT_TRUE(wait_for_marker("VMGATE-HANG", *crashed)) << diagnostics("first.err");
  crashed->kill_hard();
  const std::vector<pid_t> orphans = qemu_pids();
  ASSERT_EQ(orphans.size(), 1U) << "the killed launcher's QEMU should still run";
  fs::remove(serial_log());

  auto launcher = start(vmi);
  ASSERT_TRUE(wait_for_marker("VMGATE-HANG", *launcher)) << diagnostics();
  EXPECT_NE(::kill(orphans[0], 0), 0) << "the previous QEMU survived the restart";
  launcher->signal(SIGTERM);
  EXPECT_TRUE(launcher->wait(seconds(120)).has_value()) << diagnostics();
  EXPECT_TRUE(qemu_pids().empty());
}

// The CPUs a thread may run on (/proc/PID/task/TID/status Cpus_allowed_list), by thread name.
std::map<std::string, std::string> thread_cpus(pid_t pid) {
  std::map<std::string, std::string> cpus;
  std::error_code error;
  for (const auto& task : fs::directory_iterator(fs::path("/proc") / std::to_string(pid) / "task", error)) {
    std::string name = read_or_empty(task.path() / "comm");
    if (!name.empty() && name.back() == '\n') {
      name.pop_back();
    }
    const std::string status = read_or_empty(task.path() / "status");
    const std::size_t at = status.find("Cpus_allowed_list:");
    if (at != std::string::npos) {
      const std::size_t start = status.find_first_not_of(" \t", at + 18);
      cpus[task.path().filename() == std::to_string(pid) ? "main" : name] =
          status.substr(start, status.find('\n', start) - start);
    }
  }
  return cpus;
}

// dedicatedCpuPlacement with an isolated emulator thread (docs/launcher.md, "Dedicated CPUs"): the
// launcher pins from its own CPU affinity, vCPU 0 to the first CPU and QEMU's emulator thread to
// the next. Needs two CPUs in the test's affinity.
TEST_F(BootTest, DedicatedCpusArePinnedFromTheAffinity) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<int> allowed;
  for (std::size_t cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      allowed.push_back(static_cast<int>(cpu));
    }
  }
  if (allowed.size() < 2) {
    GTEST_SKIP() << "needs two CPUs";
  }
  cpu_ =
      "{model: host-model, sockets: 1, cores: 1, threads: 1, dedicatedCpuPlacement: true, "
      "isolateEmulatorThread: true}";
  auto launcher = start(write_vmi("hang"));
  ASSERT_TRUE(wait_for_marker("VMGATE-HANG", *launcher)) << diagnostics();
  // The domain's QEMU (the root's driver.pid is the launcher itself).
  const pid_t qemu = std::atoi(read_or_empty(root() / "run/qemu/default_boot-hang.pid").c_str());
  ASSERT_GT(qemu, 0) << diagnostics();
  const std::map<std::string, std::string> cpus = thread_cpus(qemu);
  std::string vcpu;
  for (const auto& [name, list] : cpus) {
    if (name.rfind("CPU 0/", 0) == 0) {
      vcpu = list;
    }
  }
  EXPECT_EQ(vcpu, std::to_string(allowed[0])) << diagnostics();
  ASSERT_EQ(cpus.count("main"), 1U);
  EXPECT_EQ(cpus.at("main"), std::to_string(allowed[1])) << diagnostics();
  launcher->signal(SIGTERM);
  EXPECT_TRUE(launcher->wait(seconds(120)).has_value()) << diagnostics();
  EXPECT_TRUE(qemu_pids().empty());
}

// startStrategy Paused: the domain is created paused (the test driver cannot, so this boots),
// the guest never runs, and a stop request ends it when the grace period runs out.
TEST_F(BootTest, StartStrategyPausedKeepsTheGuestPaused) {
  auto launcher = start(write_vmi("poweroff", "", "", "  startStrategy: Paused\n"));
  const auto deadline = std::chrono::steady_clock::now() + boot_timeout;
  while (read_or_empty(work() / "status.json").find("started paused") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline && launcher->running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_NE(read_or_empty(work() / "status.json").find("started paused"), std::string::npos) << diagnostics();
  std::this_thread::sleep_for(seconds(5));
  EXPECT_EQ(read_or_empty(serial_log()).find("VMGATE-DMI"), std::string::npos) << "a paused guest ran" << diagnostics();
  launcher->signal(SIGTERM);
  const std::optional<int> status = launcher->wait(seconds(120));
  ASSERT_TRUE(status.has_value()) << diagnostics();
  EXPECT_NE(read_or_empty(work() / "launcher.err").find("grace period of 5 s expired"), std::string::npos)
      << diagnostics();
  EXPECT_TRUE(qemu_pids().empty());
}

// A connected unix socket to `path` (-1 on failure).
int connect_unix(const fs::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {  // NOLINT: C API
    ::close(fd);
    return -1;
  }
  return fd;
}

// One request on the launcher's control socket; its answer line.
std::string control(const fs::path& socket, const std::string& line) {
  const int fd = connect_unix(socket);
  if (fd < 0) {
    return "<cannot connect>";
  }
  (void)::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
  std::string answer;
  char buffer[256];
  pollfd watched{fd, POLLIN, 0};
  while (::poll(&watched, 1, 10000) > 0) {
    const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) {
      break;
    }
    answer.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return answer;
}

// The serial console is QEMU's unix socket (virt-serial0, with the log file beside it) and the
// control socket unpauses a domain started paused (virtctl unpause through the node agent): the
// guest then boots, its console reaches both the socket's client and the log, and it powers off.
TEST_F(BootTest, ControlSocketUnpausesAndTheSerialSocketCarriesTheConsole) {
  auto launcher = start(write_vmi("poweroff", "", "", "  startStrategy: Paused\n"));
  const fs::path private_dir = work() / "pod/var/run/kubevirt-private";
  const auto deadline = std::chrono::steady_clock::now() + boot_timeout;
  while ((read_or_empty(work() / "status.json").find("started paused") == std::string::npos ||
          !fs::exists(private_dir / "vmgate-control.sock")) &&
         std::chrono::steady_clock::now() < deadline && launcher->running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(fs::exists(private_dir / "vmgate-control.sock")) << diagnostics();
  EXPECT_NE(read_or_empty(work() / "status.json").find(R"("paused":true)"), std::string::npos);
  const int serial = connect_unix(private_dir / "virt-serial0");
  ASSERT_GE(serial, 0) << "no serial socket" << diagnostics();
  EXPECT_EQ(control(private_dir / "vmgate-control.sock", "pause\n"), "error domain is already paused\n");
  EXPECT_EQ(control(private_dir / "vmgate-control.sock", "unpause\n"), "ok\n") << diagnostics();
  EXPECT_NE(read_or_empty(work() / "status.json").find(R"("paused":false)"), std::string::npos);
  std::string console;
  char buffer[4096];
  pollfd watched{serial, POLLIN, 0};
  while (console.find("VMGATE-BOOT-OK") == std::string::npos && std::chrono::steady_clock::now() < deadline &&
         ::poll(&watched, 1, 1000) >= 0) {
    if ((watched.revents & POLLIN) != 0) {
      const ssize_t got = ::recv(serial, buffer, sizeof buffer, 0);
      if (got <= 0) {
        break;
      }
      console.append(buffer, static_cast<std::size_t>(got));
    }
  }
  ::close(serial);
  EXPECT_NE(console.find("VMGATE-BOOT-OK"), std::string::npos) << "socket saw:\n" << console << diagnostics();
  EXPECT_EQ(launcher->wait(seconds(120)), 0) << diagnostics();
  EXPECT_NE(read_or_empty(serial_log()).find("VMGATE-BOOT-OK"), std::string::npos) << diagnostics();
  EXPECT_FALSE(fs::exists(private_dir / "vmgate-control.sock"));
  EXPECT_TRUE(qemu_pids().empty());
}

// Memory and CPU hotplug (docs/launcher.md, "Memory and CPU hotplug") on the README's example VM,
// expanded by the admission core from its instancetype and preference: 4Gi guest memory with
// maxGuest 16Gi (a virtio-mem device, nothing plugged) and 2 vCPUs as cores with maxSockets 4
// (8 vCPUs, 2 enabled), EFI Secure Boot. The guest must see its 4Gi and 2 vCPUs. The example's
// Fedora containerDisk is replaced by the test kernel (kernelBoot) and a small image, and its pod
// network by none: the test has no pod that would create the tap.
TEST_F(BootTest, ExampleVmWithHotplugSeesGuestMemoryAndVcpus) {
  std::string vm =
      read_file((fs::path(VMGATE_SOURCE_DIR) / "manifests/examples/vms/10-instancetype-preference.yaml").string());
  const std::string devices = "        devices:\n";
  const std::size_t at = vm.find(devices);
  ASSERT_NE(at, std::string::npos) << "the example VM changed: update this test";
  vm.replace(at, devices.size(),
             "        firmware:\n"
             "          kernelBoot:\n"
             "            kernelArgs: " +
                 kernel_args("resources") +
                 "\n"
                 "            container:\n"
                 "              image: local/kernel:latest\n"
                 "              kernelPath: " +
                 kernel_.image.string() +
                 "\n"
                 "              initrdPath: " +
                 (work() / "initramfs.cpio.gz").string() + "\n" + devices +
                 "          autoattachPodInterface: false\n"
                 "          autoattachGraphicsDevice: false\n");
  write_text(work() / "vm.yaml", vm);
  const fs::path image = work() / "pod/var/run/kubevirt-image-volume/disk_0/disk/disk.img";
  fs::create_directories(image.parent_path());
  write_text(image, std::string(1 << 20, '\0'));

  auto launcher = start_with({"--vm", (work() / "vm.yaml").string(), "--objects",
                              (fs::path(VMGATE_SOURCE_DIR) / "manifests/examples/cluster").string()});
  ASSERT_TRUE(wait_for_marker("VMGATE-RESOURCES", *launcher)) << diagnostics();
  EXPECT_EQ(launcher->wait(seconds(120)), 0) << diagnostics();
  EXPECT_NE(read_or_empty(serial_log()).find("VMGATE-EFI secure boot enabled"), std::string::npos) << diagnostics();
  const std::optional<GuestResources> resources = guest_resources();
  ASSERT_TRUE(resources.has_value()) << diagnostics();
  EXPECT_EQ(resources->nproc, 2) << diagnostics();
  // MemTotal is the memory less what the kernel reserves for itself: within 12% below 4Gi.
  constexpr long guest_kib = 4L << 20;
  EXPECT_LE(resources->memtotal_kib, guest_kib) << diagnostics();
  EXPECT_GE(resources->memtotal_kib, guest_kib * 88 / 100) << diagnostics();
}

// A VMI whose memory was hotplugged (status.memory.guestAtBoot 1Gi, guest 2Gi, maxGuest 4Gi), as a
// restarted launcher gets it: 1Gi in the NUMA cell and 1Gi requested from the virtio-mem device,
// which the guest's driver plugs. 2 of maxSockets 3 sockets: nproc 2.
TEST_F(BootTest, HotpluggedMemoryIsPluggedThroughVirtioMem) {
  cpu_ = "{model: host-model, sockets: 2, cores: 1, threads: 1, maxSockets: 3}";
  memory_ = "{guest: 2Gi, maxGuest: 4Gi}";
  status_ = "status:\n  memory: {guestAtBoot: 1Gi, guestCurrent: 1Gi, guestRequested: 2Gi}\n";
  // Admitted (the VMI mutator's finalizer): the launcher takes its status as it is.
  metadata_ = "  finalizers: [kubevirt.io/foregroundDeleteVirtualMachine]\n";
  auto launcher = start(write_vmi("resources"));
  ASSERT_TRUE(wait_for_marker("VMGATE-RESOURCES", *launcher)) << diagnostics();
  EXPECT_EQ(launcher->wait(seconds(120)), 0) << diagnostics();
  const std::optional<GuestResources> resources = guest_resources();
  ASSERT_TRUE(resources.has_value()) << diagnostics();
  EXPECT_EQ(resources->nproc, 2) << diagnostics();
  constexpr long guest_kib = 2L << 20;
  EXPECT_LE(resources->memtotal_kib, guest_kib) << diagnostics();
  EXPECT_GE(resources->memtotal_kib, guest_kib * 88 / 100)
      << "virtio-mem did not plug the requested 1Gi" << diagnostics();
}

}  // namespace
}  // namespace vmgate::launcher
