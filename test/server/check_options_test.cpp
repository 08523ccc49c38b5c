#include "vmgate/server/check_options.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace vmgate::cli {
namespace {

Result<CheckOptions> parse(std::vector<std::string_view> args) {
  return parse_check_options(args);
}

TEST(CheckOptions, Defaults) {
  Result<CheckOptions> options = parse({"-f", "vm.yaml"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->files, std::vector<std::string>{"vm.yaml"});
  EXPECT_TRUE(options->objects.empty());
  EXPECT_TRUE(options->old_file.empty());
  EXPECT_EQ(options->operation, admission::Operation::create);
  EXPECT_EQ(options->namespace_name, "default");
  EXPECT_EQ(options->output, OutputFormat::text);
  EXPECT_FALSE(options->help);
}

TEST(CheckOptions, KubeVirtVersion) {
  Result<CheckOptions> defaults = parse({"-f", "vm.yaml"});
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_FALSE(defaults->release.has_value());
  for (std::string_view version : {"v1.8", "1.8", "v1.8.2"}) {
    Result<CheckOptions> options = parse({"-f", "vm.yaml", "--kubevirt-version", version});
    ASSERT_TRUE(options.ok()) << options.error().message;
    EXPECT_EQ(options->release, admission::Release::v1_8) << version;
  }
  Result<CheckOptions> unknown = parse({"-f", "vm.yaml", "--kubevirt-version", "latest"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message,
            "--kubevirt-version: KubeVirt version \"latest\" is not a version (MAJOR.MINOR[.PATCH] or main) "
            "(supported: v1.7, v1.8, main)");
}

TEST(CheckOptions, EverySpelling) {
  Result<CheckOptions> options = parse({"-f", "a.yaml", "--filename", "b.yaml", "--filename=c.yaml", "-fd.yaml",
                                        "-f=e.yaml", "--objects", "cluster/", "--objects=more.yaml", "--operation",
                                        "update", "--old", "old.yaml", "-n", "team-a", "-ojson"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->files, (std::vector<std::string>{"a.yaml", "b.yaml", "c.yaml", "d.yaml", "e.yaml"}));
  EXPECT_EQ(options->objects, (std::vector<std::string>{"cluster/", "more.yaml"}));
  EXPECT_EQ(options->operation, admission::Operation::update);
  EXPECT_EQ(options->old_file, "old.yaml");
  EXPECT_EQ(options->namespace_name, "team-a");
  EXPECT_EQ(options->output, OutputFormat::json);
}

TEST(CheckOptions, OutputFormats) {
  EXPECT_EQ(parse({"-f", "x", "-o", "yaml"})->output, OutputFormat::yaml);
  EXPECT_EQ(parse({"-f", "x", "--output=text"})->output, OutputFormat::text);
  EXPECT_EQ(parse({"-f", "x", "--output", "json"})->output, OutputFormat::json);
}

TEST(CheckOptions, StdinOnce) {
  Result<CheckOptions> options = parse({"-f", "-"});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->files, std::vector<std::string>{"-"});
}

TEST(CheckOptions, HelpNeedsNothingElse) {
  Result<CheckOptions> options = parse({"--help"});
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->help);
  EXPECT_TRUE(parse({"-h"})->help);
  EXPECT_NE(check_usage().find("Usage: vmgate check"), std::string_view::npos);
}

TEST(CheckOptions, DoubleDashEndsTheOptions) {
  Result<CheckOptions> options = parse({"-f", "vm.yaml", "--"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->files, std::vector<std::string>{"vm.yaml"});
  Result<CheckOptions> operand = parse({"-f", "vm.yaml", "--", "-o"});
  ASSERT_FALSE(operand.ok());
  EXPECT_EQ(operand.error().message, "unexpected argument \"-o\": inputs are given with -f");
}

struct Rejected {
  std::vector<std::string_view> args;
  std::string message;
};

void PrintTo(const Rejected& r, std::ostream* out) {
  for (std::string_view arg : r.args) {
    *out << arg << ' ';
  }
}

class CheckOptionsRejects : public ::testing::TestWithParam<Rejected> {};

TEST_P(CheckOptionsRejects, WithAMessage) {
  Result<CheckOptions> options = parse_check_options(GetParam().args);
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.error().message, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Arguments, CheckOptionsRejects,
    ::testing::Values(
        Rejected{{}, "no input: give the objects to check with -f FILE|DIR|-"},
        Rejected{{"--objects", "cluster/"}, "no input: give the objects to check with -f FILE|DIR|-"},
        Rejected{{"-f", "vm.yaml", "--kubeconfig", "k", "--objects", "o"},
                 "--kubeconfig and --objects are two sources of the cluster: give one"},
        Rejected{{"-f", "vm.yaml", "--context=c"}, "--context needs --kubeconfig"},
        Rejected{{"-f", "vm.yaml", "--kubeconfig="}, "option --kubeconfig needs a non-empty value"},
        Rejected{{"-x"}, "unknown option -x"}, Rejected{{"-f"}, "option -f needs a value"},
        Rejected{{"-f", "vm.yaml", "-o"}, "option -o needs a value"},
        Rejected{{"--filename="}, "option -f needs a non-empty value"},
        Rejected{{"-f", "vm.yaml", "-o", "xml"}, "-o must be text, json or yaml, not \"xml\""},
        Rejected{{"-f", "vm.yaml", "-o", "json", "-o", "yaml"}, "option -o given more than once"},
        Rejected{{"-f", "vm.yaml", "--operation", "DELETE"}, "--operation must be CREATE or UPDATE, not \"DELETE\""},
        Rejected{{"-f", "vm.yaml", "--operation", "UPDATE"},
                 "--operation UPDATE needs the object before the update: --old FILE"},
        Rejected{{"-f", "vm.yaml", "--old", "old.yaml"}, "--old is only meaningful with --operation UPDATE"},
        Rejected{
            {"-f", "vm.yaml", "--namespace", "Team_A"},
            "--namespace \"Team_A\" is not a valid namespace name (lower-case letters, digits and '-', at most 63)"},
        Rejected{{"-f", "vm.yaml", "-n", "a", "-n", "b"}, "option -n given more than once"},
        Rejected{{"-f", "-", "--objects", "-"}, "stdin (-) can be read only once, but it is named 2 times"},
        Rejected{{"-f", "-", "-f", "-"}, "stdin (-) can be read only once, but it is named 2 times"},
        Rejected{{"vm.yaml"}, "unexpected argument \"vm.yaml\": inputs are given with -f"},
        Rejected{{"-f", "vm.yaml", "-"}, "unexpected argument \"-\": inputs are given with -f"},
        Rejected{{"--help=yes"}, "option -h takes no value"}));

}  // namespace
}  // namespace vmgate::cli
