// Golden tests for the pure converter: test/fixtures/launcher/golden/<feature>.json → .xml.
// VMGATE_UPDATE_GOLDEN=1 rewrites the expected files (review the diff before committing).
#include "vmgate/launcher/converter.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/json_test_support.hpp"

namespace vmgate::launcher {
namespace {

const std::filesystem::path golden_dir = std::filesystem::path(VMGATE_SOURCE_DIR) / "test/fixtures/launcher/golden";

// A pod with CPUs 2, 3, 5 and 7 (dedicatedCpuPlacement pins in this order; 2 and 3 on NUMA node
// 0, 5 and 7 on node 1), and the volume "lun" mounted as a block device.
ConvertOptions golden_options() {
  ConvertOptions options;
  options.software_emulation = true;
  options.cpuset = {2, 3, 5, 7};
  options.cpu_numa_nodes = {{2, 0}, {3, 0}, {5, 1}, {7, 1}};
  options.layout.block_pvcs = {"lun"};
  return options;
}

std::vector<std::string> golden_cases() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(golden_dir)) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, ConvertsToExpectedXml) {
  const std::filesystem::path input = golden_dir / (GetParam() + ".json");
  const std::filesystem::path expected_file = golden_dir / (GetParam() + ".xml");
  const json::Document vmi = vmgate::testing::parse(vmgate::testing::read_file(input.string()));
  Result<std::string> xml = convert(vmi, golden_options());
  ASSERT_TRUE(xml.ok()) << xml.error().message;
  if (std::getenv("VMGATE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(expected_file) << *xml;
  }
  ASSERT_TRUE(std::filesystem::exists(expected_file)) << expected_file;
  EXPECT_EQ(*xml, vmgate::testing::read_file(expected_file.string()));
}

INSTANTIATE_TEST_SUITE_P(Features, GoldenTest, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

std::string convert_error(std::string_view vmi_json) {
  const json::Document vmi = vmgate::testing::parse(vmi_json);
  Result<std::string> xml = convert(vmi, golden_options());
  return xml.ok() ? "" : xml.error().message;
}

constexpr std::string_view minimal_head =
    R"({"metadata":{"name":"a"},"spec":{"domain":{"resources":{"requests":{"memory":"64Mi"}},)";

TEST(ConverterErrors, UnsupportedDeviceNamesTheField) {
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("devices":{"gpus":[]}}}})"),
            "spec.domain.devices.gpus: not supported by vmgate-launcher");
}

TEST(ConverterErrors, UnsupportedNestedFieldNamesThePath) {
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("cpu":{"realtime":{"priority":1}}}}})"),
            "spec.domain.cpu.realtime.priority: not supported by vmgate-launcher");
  EXPECT_EQ(convert_error(std::string(minimal_head) +
                          R"("devices":{"disks":[{"name":"d","disk":{"bus":"virtio"},"shareable":true}]}}}})"),
            "spec.domain.devices.disks[0].shareable: not supported by vmgate-launcher");
}

TEST(ConverterErrors, TlbflushDetailsHaveNoLibvirt9Element) {
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("features":{"hyperv":{"tlbflush":{"direct":{}}}}}}})"),
            "spec.domain.features.hyperv.tlbflush.direct: not supported by vmgate-launcher");
}

TEST(ConverterErrors, BiosSerialNeedsTheSerialConsole) {
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("firmware":{"bootloader":{"bios":{"useSerial":true}}},)"
                                                      R"("devices":{"autoattachSerialConsole":false}}}})"),
            "spec.domain.firmware.bootloader.bios.useSerial: needs the serial console (autoattachSerialConsole)");
}

TEST(ConverterErrors, MissingMemory) {
  EXPECT_EQ(convert_error(R"({"metadata":{"name":"a"},"spec":{"domain":{}}})"),
            "spec.domain.memory.guest: required (or spec.domain.resources.requests.memory)");
}

TEST(ConverterErrors, DiskWithoutVolume) {
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("devices":{"disks":[{"name":"d"}]}}}})"),
            "spec.domain.devices.disks[0].name: no volume named \"d\" in spec.volumes");
}

TEST(ConverterErrors, UnsupportedVolumeSource) {
  EXPECT_EQ(convert_error(std::string(minimal_head) +
                          R"("devices":{"disks":[{"name":"d"}]}},"volumes":[{"name":"d","ephemeral":{}}]}})"),
            "spec.volumes[0].ephemeral: not supported by vmgate-launcher");
}

TEST(ConverterErrors, NamesThatWouldLeaveThePodDirectories) {
  EXPECT_EQ(convert_error(
                std::string(minimal_head) +
                R"("devices":{"disks":[{"name":".."}]}},"volumes":[{"name":"..","emptyDisk":{"capacity":"1Gi"}}]}})"),
            "spec.volumes[0].name: cannot name a file in the pod (contains '/' or is '.' or '..')");
  EXPECT_EQ(convert_error(R"({"metadata":{"name":"a/b"},"spec":{"domain":{"memory":{"guest":"64Mi"}}}})"),
            "metadata.name: cannot name a file in the pod (contains '/' or is '.' or '..')");
  EXPECT_EQ(
      convert_error(R"({"metadata":{"name":"a","namespace":".."},"spec":{"domain":{"memory":{"guest":"64Mi"}}}})"),
      "metadata.namespace: cannot name a file in the pod (contains '/' or is '.' or '..')");
}

std::string kernel_boot_vmi(std::string_view container) {
  return std::string(minimal_head) + R"("firmware":{"kernelBoot":{"container":{"image":"k",)" + std::string(container) +
         "}}}}}}";
}

TEST(ConverterErrors, KernelBootPathsThatLeaveTheKernelBootDirectory) {
  EXPECT_EQ(convert_error(kernel_boot_vmi(R"("kernelPath":"/../../../etc/shadow")")),
            "spec.domain.firmware.kernelBoot.container.kernelPath: leaves the kernel-boot directory "
            "(\"..\" above its root)");
  EXPECT_EQ(convert_error(kernel_boot_vmi(R"("kernelPath":"/boot/vmlinuz","initrdPath":"boot/../../initrd")")),
            "spec.domain.firmware.kernelBoot.container.initrdPath: leaves the kernel-boot directory "
            "(\"..\" above its root)");
  EXPECT_EQ(convert_error(kernel_boot_vmi(R"("kernelPath":"/boot/..")")),
            "spec.domain.firmware.kernelBoot.container.kernelPath: names the kernel-boot directory itself, not a "
            "file");
}

TEST(Converter, KernelBootPathsAreResolvedLexicallyBelowTheDirectory) {
  const json::Document vmi =
      vmgate::testing::parse(kernel_boot_vmi(R"("kernelPath":"/a/./../boot//vmlinuz","initrdPath":"initrd.img")"));
  Result<std::string> xml = convert(vmi, golden_options());
  ASSERT_TRUE(xml.ok()) << xml.error().message;
  EXPECT_NE(xml->find("<kernel>/var/run/kubevirt/container-disks/kernel-boot/boot/vmlinuz</kernel>"), std::string::npos)
      << *xml;
  EXPECT_NE(xml->find("<initrd>/var/run/kubevirt/container-disks/kernel-boot/initrd.img</initrd>"), std::string::npos)
      << *xml;
}

TEST(ConverterErrors, MemoryHotplugNamesTheField) {
  const std::string head = R"({"metadata":{"name":"a"},"spec":{"domain":{"memory":)";
  EXPECT_EQ(convert_error(head + R"({"guest":"2Gi","maxGuest":"1Gi"}}}})"),
            "spec.domain.memory.maxGuest: must not be less than spec.domain.memory.guest");
  EXPECT_EQ(convert_error(head + R"({"guest":"1025Mi","maxGuest":"4Gi"}}}})"),
            "spec.domain.memory.guest: must be a multiple of 2Mi (the virtio-mem block) for memory hotplug");
  EXPECT_EQ(convert_error(head + R"({"guest":"2Gi","maxGuest":"3Gi","hugepages":{"pageSize":"1Gi"}}}},)"
                                 R"("status":{"memory":{"guestAtBoot":"1536Mi"}}})"),
            "status.memory.guestAtBoot: must be a multiple of 1Gi (the virtio-mem block) for memory hotplug");
  EXPECT_EQ(convert_error(head + R"({"guest":"2Gi","maxGuest":"4Gi"}}},"status":{"memory":{"guestAtBoot":"3Gi"}}})"),
            "status.memory.guestAtBoot: above spec.domain.memory.guest: hotplugged memory cannot go below the boot "
            "memory");
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("memory":{"maxGuest":"4Gi"}}}})"),
            "spec.domain.memory.guest: required with spec.domain.memory.maxGuest (memory hotplug)");
  EXPECT_EQ(convert_error(head + R"({"guest":"2Gi","maxGuest":"lots"}}}})").rfind("spec.domain.memory.maxGuest: ", 0),
            0U);
}

TEST(ConverterErrors, CpuHotplugNamesTheField) {
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("cpu":{"sockets":4,"maxSockets":2}}}})"),
            "spec.domain.cpu.maxSockets: must not be less than sockets");
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("cpu":{"sockets":1,"cores":64,"maxSockets":100}}}})"),
            "spec.domain.cpu: more than 4096 vCPUs");
}

// What libvirt or the pod would refuse later is refused here, by field.
TEST(ConverterErrors, RefusalsNameTheFieldAndTheReason) {
  EXPECT_EQ(
      convert_error(std::string(minimal_head) +
                    R"("cpu":{"sockets":2,"cores":2,"dedicatedCpuPlacement":true,"isolateEmulatorThread":true}}}})"),
      "spec.domain.cpu.dedicatedCpuPlacement: needs 5 CPUs in the pod's cpuset, which has 4");
  EXPECT_EQ(
      convert_error(
          std::string(minimal_head) +
          R"("devices":{"disks":[{"name":"d","lun":{}}]}},"volumes":[{"name":"d","emptyDisk":{"capacity":"1Gi"}}]}})"),
      "spec.volumes[0]: a lun disk needs a block volume (a persistentVolumeClaim or dataVolume of volumeMode Block)");
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("devices":{"interfaces":[{"name":"x","bridge":{}}]}}}})"),
            "spec.domain.devices.interfaces[0].name: no network named \"x\" in spec.networks");
  EXPECT_EQ(convert_error(std::string(minimal_head) +
                          R"("devices":{"interfaces":[{"name":"x","bridge":{},)"
                          R"("macAddress":"02:00:00:00:00"}]}},"networks":[{"name":"x","pod":{}}]}})"),
            "spec.domain.devices.interfaces[0].macAddress: must be a MAC address of six bytes");
  EXPECT_EQ(
      convert_error(std::string(minimal_head) + R"("devices":{"disks":[{"name":"d","blockSize":{"matchVolume":{}}}]}},)"
                                                R"("volumes":[{"name":"d","emptyDisk":{"capacity":"1Gi"}}]}})"),
      "spec.domain.devices.disks[0].blockSize.matchVolume: the volume's block size was not probed");
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("features":{"hyperv":{"spinlocks":{"spinlocks":1024}}}}}})"),
            "spec.domain.features.hyperv.spinlocks.spinlocks: must be at least 4095 (libvirt: \"HyperV spinlock retry "
            "count must be at least 4095\")");
  EXPECT_EQ(
      convert_error(std::string(minimal_head) + R"("clock":{"timezone":"not a zone"}}}})"),
      "spec.domain.clock.timezone: must be a time zone name such as Europe/Berlin (libvirt's schema refuses \"not "
      "a zone\")");
  EXPECT_EQ(
      convert_error(std::string(minimal_head) +
                    R"("cpu":{"model":"Haswell","features":[{"name":"pcid"},{"name":"pcid","policy":"disable"}]}}}})"),
      "spec.domain.cpu.features[1].name: \"pcid\" is listed twice (libvirt: \"CPU feature specified more than "
      "once\")");
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("ioThreadsPolicy":"supplementalPool"}}})"),
            "spec.domain.ioThreadsPolicy: must be shared or auto (libvirt 9.0 has no disk thread pools)");
  EXPECT_EQ(convert_error(
                R"({"metadata":{"name":"a"},"spec":{"architecture":"arm64","domain":{"memory":{"guest":"64Mi"}}}})"),
            "spec.architecture: needs a arm64 host: vmgate-launcher runs amd64 guests");
}

TEST(ConverterErrors, WrongTypeNamesTheField) {
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("cpu":{"cores":"2"}}}})"),
            "spec.domain.cpu.cores: must be an integer, not a string");
}

TEST(ConverterErrors, BadFeaturePolicy) {
  EXPECT_EQ(convert_error(std::string(minimal_head) + R"("cpu":{"features":[{"name":"x","policy":"maybe"}]}}}})"),
            "spec.domain.cpu.features[0].policy: must be one of force, require, optional, disable, forbid");
}

TEST(Converter, KvmUnlessSoftwareEmulation) {
  const json::Document vmi = vmgate::testing::parse(std::string(minimal_head) + "\"cpu\":{}}}}");
  ConvertOptions options;
  Result<std::string> xml = convert(vmi, options);
  ASSERT_TRUE(xml.ok()) << xml.error().message;
  EXPECT_EQ(xml->rfind("<domain type='kvm'>", 0), 0U);
}

TEST(Converter, EscapesKernelArguments) {
  const json::Document vmi = vmgate::testing::parse(std::string(minimal_head) +
                                                    R"("firmware":{"kernelBoot":{"kernelArgs":"a=<b> & c='d'"}}}}})");
  Result<std::string> xml = convert(vmi, golden_options());
  ASSERT_TRUE(xml.ok()) << xml.error().message;
  EXPECT_NE(xml->find("<cmdline>a=&lt;b&gt; &amp; c=&apos;d&apos;</cmdline>"), std::string::npos) << *xml;
}

}  // namespace
}  // namespace vmgate::launcher
