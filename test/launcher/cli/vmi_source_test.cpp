// Where the launcher's VMI comes from: --vmi applies KubeVirt's VMI defaults through the
// admission core unless the VMI has been admitted, and loading is idempotent.
#include "vmgate/launcher/vmi_source.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"
#include "vmgate/launcher/converter.hpp"
#include "vmgate/launcher/launcher_main.hpp"

namespace vmgate::launcher {
namespace {

const std::string fixtures = std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/launcher";

Result<json::Document> load(const std::string& file) {
  LauncherOptions options;
  options.vmi_file = file;
  std::istringstream no_input;
  return load_vmi(options, no_input);
}

std::string print_xml(const std::string& file) {
  std::vector<std::string_view> args = {"--vmi", file, "--print-xml", "--emulation", "software"};
  std::istringstream in;
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_launcher(args, in, out, err), 0) << err.str();
  return out.str();
}

// KubeVirt's amd64 defaults (pkg/defaults/amd64.go): a disk without a bus is sata; the sockets
// come from the CPU limit (and maxSockets for CPU hotplug); the machine type is q35.
TEST(VmiSource, UnadmittedVmiGetsKubeVirtsDefaults) {
  Result<json::Document> vmi = load(fixtures + "/vmi/unadmitted.yaml");
  ASSERT_TRUE(vmi.ok()) << vmi.error().message;
  EXPECT_TRUE(admitted(*vmi));
  const json::Value* bus = json::find_path(*vmi, {"spec", "domain", "devices", "disks"});
  ASSERT_TRUE(bus != nullptr && bus->IsArray() && bus->Size() == 1);
  EXPECT_EQ(json::find_string(*json::find(bus->GetArray()[0], "disk"), "bus"), "sata");
  const json::Value* sockets = json::find_path(*vmi, {"spec", "domain", "cpu", "sockets"});
  ASSERT_NE(sockets, nullptr);
  EXPECT_EQ(json::to_string(*sockets), "2");

  const std::string xml = print_xml(fixtures + "/vmi/unadmitted.yaml");
  EXPECT_NE(xml.find("<target dev='sda' bus='sata'/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<vcpu placement='static' current='2'>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<type arch='x86_64' machine='q35'>hvm</type>"), std::string::npos) << xml;
}

// What --vmi made of a VMI, given to --vmi again, is taken as it is: the same VMI, the same XML.
TEST(VmiSource, LoadingAnAdmittedVmiIsIdempotent) {
  Result<json::Document> first = load(fixtures + "/vmi/unadmitted.yaml");
  ASSERT_TRUE(first.ok()) << first.error().message;
  const vmgate::testing::TemporaryDirectory directory;
  const std::string again = (directory.path() / "admitted.json").string();
  vmgate::testing::write_text(again, json::to_string(*first));
  Result<json::Document> second = load(again);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(json::to_string(*second), json::to_string(*first));
  EXPECT_EQ(print_xml(again), print_xml(fixtures + "/vmi/unadmitted.yaml"));
}

// An admitted VMI keeps what the cluster recorded: a hotplug's status.memory.guestAtBoot, which
// the CREATE mutation would overwrite with the guest memory.
TEST(VmiSource, AdmittedVmiKeepsItsStatus) {
  const vmgate::testing::TemporaryDirectory directory;
  const std::string file = (directory.path() / "vmi.json").string();
  vmgate::testing::write_text(file, R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
"metadata":{"name":"a","namespace":"default","finalizers":["kubevirt.io/foregroundDeleteVirtualMachine"]},
"spec":{"domain":{"memory":{"guest":"2Gi","maxGuest":"4Gi"},"devices":{}}},
"status":{"memory":{"guestAtBoot":"1Gi"}}})");
  Result<json::Document> vmi = load(file);
  ASSERT_TRUE(vmi.ok()) << vmi.error().message;
  EXPECT_EQ(json::find_string(*json::find_path(*vmi, {"status", "memory"}), "guestAtBoot"), "1Gi");
  EXPECT_NE(print_xml(file).find("<cell id='0' cpus='0-0' memory='1073741824' unit='b'/>"), std::string::npos);
}

TEST(VmiSource, DeniedVmiNamesWhy) {
  const vmgate::testing::TemporaryDirectory directory;
  const std::string file = (directory.path() / "vmi.yaml").string();
  vmgate::testing::write_text(
      file,
      "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: a}\n"
      "spec:\n  domain:\n    devices: {}\n    machine: {type: pc}\n    memory: {guest: 64Mi}\n");
  Result<json::Document> vmi = load(file);
  ASSERT_FALSE(vmi.ok());
  EXPECT_EQ(vmi.error().message.rfind("admission denied the VirtualMachineInstance: spec.domain.machine.type", 0), 0U)
      << vmi.error().message;
}

TEST(VmiSource, HelpSaysThatVmiGetsTheDefaults) {
  std::vector<std::string_view> args = {"--help"};
  std::istringstream in;
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_launcher(args, in, out, err), 0);
  EXPECT_NE(out.str().find("first gets KubeVirt's VMI defaults from the admission core"), std::string::npos)
      << out.str();
}

TEST(VmiSource, ObjectsGoWithVmAndVmiOnly) {
  std::vector<std::string_view> args = {"--tail-console", "/log", "--objects", "x"};
  std::istringstream in;
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run_launcher(args, in, out, err), 2);
  EXPECT_NE(err.str().find("--objects is only used with --vm and --vmi"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace vmgate::launcher
