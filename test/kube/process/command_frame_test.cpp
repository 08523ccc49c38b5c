#include "vmgate/kube/command_frame.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace vmgate::kube {
namespace {

struct ToolOptions {
  bool help = false;
  std::string name;
};

std::string tool_usage() {
  return "Usage: tool\n";
}

TEST(CommandFrame, GoesOnWithTheOptions) {
  std::ostringstream out;
  std::ostringstream err;
  CommandStart<ToolOptions> start =
      start_command(Result<ToolOptions>(ToolOptions{false, "x"}), {"error: ", "vmgate tool"}, tool_usage, out, err);
  ASSERT_TRUE(start.options.has_value());
  EXPECT_EQ(start.options->name, "x");
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "");
}

TEST(CommandFrame, HelpPrintsTheUsageAndExitsZero) {
  std::ostringstream out;
  std::ostringstream err;
  CommandStart<ToolOptions> start =
      start_command(Result<ToolOptions>(ToolOptions{true, ""}), {"error: ", "vmgate tool"}, tool_usage, out, err);
  EXPECT_FALSE(start.options.has_value());
  EXPECT_EQ(start.exit_code, 0);
  EXPECT_EQ(out.str(), "Usage: tool\n");
  EXPECT_EQ(err.str(), "");
}

TEST(CommandFrame, AnErrorPointsToHelpAndExitsTwo) {
  std::ostringstream out;
  std::ostringstream err;
  CommandStart<ToolOptions> start =
      start_command(Result<ToolOptions>(Error{"unknown option --x"}), {"error: ", "vmgate tool"}, tool_usage, out, err);
  EXPECT_FALSE(start.options.has_value());
  EXPECT_EQ(start.exit_code, exit_usage);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "error: unknown option --x\nSee 'vmgate tool --help'.\n");
}

// vmgate-node's wording: its name first, no pointer to --help.
TEST(CommandFrame, AnErrorWithoutHelpCommand) {
  std::ostringstream err;
  EXPECT_EQ(usage_error({"vmgate-node: ", ""}, Error{"--devices: unknown device"}, err), exit_usage);
  EXPECT_EQ(err.str(), "vmgate-node: --devices: unknown device\n");
}

}  // namespace
}  // namespace vmgate::kube
