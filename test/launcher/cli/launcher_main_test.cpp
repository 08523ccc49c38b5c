// The command line, in process: options, inputs (--vmi, --vm with --objects) and --print-xml.
#include "vmgate/launcher/launcher_main.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "vmgate/launcher/options.hpp"

namespace vmgate::launcher {
namespace {

const std::string fixtures = std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/launcher";

struct LauncherRun {
  int code;
  std::string out;
  std::string err;
};

LauncherRun run_cli(std::vector<std::string_view> args) {
  std::istringstream in;
  std::ostringstream out;
  std::ostringstream err;
  const int code = run_launcher(args, in, out, err);
  return {code, out.str(), err.str()};
}

// The launcher holds no API credentials and reads no VMI from the API (vmgate-node reports its
// status from the status file): the options that did so are gone, not ignored.
TEST(LauncherCli, ReadsNoVmiFromTheApi) {
  const LauncherRun result = run_cli({"--help"});
  EXPECT_EQ(result.code, 0);
  EXPECT_EQ(result.out.find("--vmi-name"), std::string::npos);
  EXPECT_EQ(result.out.find("--kubeconfig"), std::string::npos);
  for (const char* option : {"--vmi-name", "--kubeconfig", "--context"}) {
    const LauncherRun refused = run_cli({option, "default/x", "--print-xml"});
    EXPECT_EQ(refused.code, 2) << option;
    EXPECT_NE(refused.err.find(option), std::string::npos) << refused.err;
  }
}

TEST(LauncherCli, TailConsoleTakesNoGuest) {
  const std::string vmi = fixtures + "/examples/headless.yaml";
  const LauncherRun with_vmi = run_cli({"--tail-console", "/log", "--vmi", vmi});
  EXPECT_EQ(with_vmi.code, 2);
  EXPECT_NE(with_vmi.err.find("--tail-console runs no guest: it takes no --vmi or --vm"), std::string::npos)
      << with_vmi.err;
  const LauncherRun alone = run_cli({"--until-status", "/status", "--vmi", vmi});
  EXPECT_EQ(alone.code, 2);
  EXPECT_NE(alone.err.find("--until-status is only used with --tail-console"), std::string::npos) << alone.err;
  EXPECT_NE(run_cli({"--help"}).out.find("--tail-console LOG"), std::string::npos);
}

TEST(LauncherCli, ExactlyOneInput) {
  EXPECT_EQ(run_cli({"--print-xml"}).code, 2);
  const std::string vmi = fixtures + "/examples/headless.yaml";
  const std::string vm = fixtures + "/vm/vm-instancetype.yaml";
  EXPECT_EQ(run_cli({"--vmi", vmi, "--vm", vm}).code, 2);
}

TEST(LauncherCli, UnknownOptionAndBadValues) {
  EXPECT_NE(run_cli({"--frobnicate", "x"}).err.find("unknown option --frobnicate"), std::string::npos);
  EXPECT_NE(run_cli({"--emulation", "fast"}).err.find("--emulation must be auto, software or kvm"), std::string::npos);
  EXPECT_NE(run_cli({"--grace-period", "-1"}).err.find("--grace-period must be"), std::string::npos);
  EXPECT_NE(
      run_cli({"--kubevirt-version", "v1.6"})
          .err.find("--kubevirt-version: KubeVirt version \"v1.6\" is not supported (supported: v1.7, v1.8, main)"),
      std::string::npos);
}

TEST(LauncherCli, OptionSyntaxErrorsNameTheOption) {
  EXPECT_NE(run_cli({"--vmi"}).err.find("option --vmi needs a value"), std::string::npos);
  EXPECT_NE(run_cli({"--print-xml=yes"}).err.find("option --print-xml takes no value"), std::string::npos);
  EXPECT_NE(run_cli({"vmi.yaml"}).err.find("unexpected argument vmi.yaml"), std::string::npos);
}

TEST(LauncherCli, ValuesAfterAnEqualsSign) {
  const std::string vmi = fixtures + "/examples/cirros-containerdisk.yaml";
  const LauncherRun result = run_cli({"--vmi=" + vmi, "--print-xml", "--emulation=software"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("<domain type='qemu'>", 0), 0U);
}

TEST(LauncherCli, PrintXmlFromVmi) {
  const std::string vmi = fixtures + "/examples/cirros-containerdisk.yaml";
  const LauncherRun result =
      run_cli({"--vmi", vmi, "--print-xml", "--emulation", "software", "--console-log", "/tmp/c&l.log"});
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out.rfind("<domain type='qemu'>", 0), 0U);
  EXPECT_NE(result.out.find("<name>default_vmi-cirros</name>"), std::string::npos);
  EXPECT_NE(result.out.find("<log file='/tmp/c&amp;l.log' append='on'/>"), std::string::npos);
  EXPECT_NE(result.out.find("<source mode='bind' path='/var/run/kubevirt-private/virt-serial0'/>"), std::string::npos);
}

TEST(LauncherCli, PrintXmlFromVmExpandedByAdmission) {
  const std::string vm = fixtures + "/vm/vm-instancetype.yaml";
  const std::string objects = fixtures + "/vm/objects";
  const LauncherRun result = run_cli({"--vm", vm, "--objects", objects, "--print-xml", "--emulation", "kvm"});
  ASSERT_EQ(result.code, 0) << result.err;
  // The instancetype's 2 vCPUs (of maxSockets' 8: CPU hotplug) and 256Mi, and the name-derived
  // firmware uuid admission computed.
  EXPECT_NE(result.out.find("<vcpu placement='static' current='2'>8</vcpu>"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("<memory unit='b'>268435456</memory>"), std::string::npos);
  EXPECT_NE(result.out.find("<entry name='uuid'>e423f046-4f4a-5abd-9e8b-0c11716e3d42</entry>"), std::string::npos);
}

TEST(LauncherCli, VmWithoutItsInstancetypeCannotBeExpanded) {
  const LauncherRun result = run_cli({"--vm", fixtures + "/vm/vm-instancetype.yaml", "--print-xml"});
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("cannot expand the VirtualMachine: "), std::string::npos) << result.err;
}

TEST(LauncherCli, UnsupportedFieldIsAnError) {
  const LauncherRun result = run_cli({"--vmi", fixtures + "/vm/vm-instancetype.yaml", "--print-xml"});
  EXPECT_EQ(result.code, 2);
  EXPECT_NE(result.err.find("expected kind VirtualMachineInstance"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace vmgate::launcher
