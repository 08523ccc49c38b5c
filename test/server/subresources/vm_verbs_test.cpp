// `vmgate start|stop|restart|pause|unpause`: virtctl's flags, bodies and wording.
#include "vmgate/server/vm_verbs.hpp"

#include <gtest/gtest.h>

#include <array>

namespace vmgate::subresources {
namespace {

template <std::size_t N>
Result<VmVerb> parse(std::string_view verb, const std::array<std::string_view, N>& args) {
  return parse_vm_verb(verb, std::span<const std::string_view>(args));
}

TEST(VmVerbs, StartStopRestartBodiesAndPaths) {
  const Result<VmVerb> start = parse("start", std::array<std::string_view, 4>{"vm-1", "-n", "vms", "--paused"});
  ASSERT_TRUE(start.ok()) << start.error().message;
  EXPECT_EQ(start->body, R"({"paused":true})");
  EXPECT_EQ(vm_verb_path(*start, start->namespace_),
            "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachines/vm-1/start");
  EXPECT_EQ(start->done, "VM vm-1 was scheduled to start");
  EXPECT_EQ(start->error_prefix, "Error starting VirtualMachine ");
  const Result<VmVerb> stop =
      parse("stop", std::array<std::string_view, 4>{"vm-1", "--force", "--grace-period=0", "--dry-run"});
  ASSERT_TRUE(stop.ok()) << stop.error().message;
  EXPECT_EQ(stop->body, R"({"dryRun":["All"],"gracePeriod":0})");
  EXPECT_EQ(stop->error_prefix, "error force stopping VirtualMachine: ");
  const Result<VmVerb> restart = parse("restart", std::array<std::string_view, 3>{"--force", "--grace-period", "0"});
  EXPECT_EQ(restart.error().message, "expected one VM name");
  const Result<VmVerb> forced =
      parse("restart", std::array<std::string_view, 4>{"x", "--force", "--grace-period", "0"});
  EXPECT_EQ(forced->body, R"({"gracePeriodSeconds":0})");
}

TEST(VmVerbs, PauseNamesTheKind) {
  const Result<VmVerb> pause = parse("pause", std::array<std::string_view, 2>{"vmi", "a"});
  ASSERT_TRUE(pause.ok());
  EXPECT_EQ(vm_verb_path(*pause, "ns"),
            "/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachineinstances/a/pause");
  EXPECT_EQ(pause->done, "VMI a was scheduled to pause");
  EXPECT_EQ(pause->error_prefix, "Error pausing VirtualMachineInstance a: ");
  EXPECT_EQ(parse("unpause", std::array<std::string_view, 2>{"vm", "a"})->target_kind, "vm");
  EXPECT_EQ(parse("pause", std::array<std::string_view, 2>{"pod", "a"}).error().message,
            "unsupported resource type \"pod\": vm or vmi");
  EXPECT_EQ(parse("pause", std::array<std::string_view, 1>{"a"}).error().message, "expected vm|vmi NAME");
}

TEST(VmVerbs, ConsoleOfAVmi) {
  const Result<VmVerb> console = parse("console", std::array<std::string_view, 4>{"a", "-n", "vms", "--timeout=1"});
  ASSERT_TRUE(console.ok()) << console.error().message;
  EXPECT_EQ(vm_verb_path(*console, "vms"),
            "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/a/console");
  EXPECT_EQ(console->timeout_minutes, 1);
  EXPECT_EQ(console->done, "Successfully connected to a console. Press Ctrl+] to exit console.");
  EXPECT_EQ(parse("console", std::array<std::string_view, 2>{"a", "--timeout=soon"}).error().message,
            "--timeout must be a number of minutes, not \"soon\"");
  EXPECT_EQ(parse("console", std::array<std::string_view, 2>{"a", "--dry-run"}).error().message,
            "unknown flag: --dry-run");
}

TEST(VmVerbs, RefusesWhatVirtctlRefuses) {
  EXPECT_EQ(parse("stop", std::array<std::string_view, 2>{"vm", "--force"}).error().message,
            "Must both use --force=true and set --grace-period.");
  EXPECT_EQ(parse("stop", std::array<std::string_view, 3>{"vm", "--grace-period", "soon"}).error().message,
            "--grace-period must be a number of seconds, not \"soon\"");
  EXPECT_EQ(parse("start", std::array<std::string_view, 2>{"vm", "--force"}).error().message, "unknown flag: --force");
  EXPECT_EQ(parse("start", std::array<std::string_view, 2>{"vm", "-n"}).error().message, "-n needs a value");
  EXPECT_TRUE(parse("start", std::array<std::string_view, 1>{"--help"})->help);
  EXPECT_TRUE(is_vm_verb("unpause"));
  EXPECT_FALSE(is_vm_verb("migrate"));
}

}  // namespace
}  // namespace vmgate::subresources
