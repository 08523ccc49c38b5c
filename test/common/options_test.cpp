#include "vmgate/common/options.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace vmgate::common {
namespace {

// A command with every kind of declaration: a repeatable value with a short name, a value
// without one, a non-empty value, a flag with a short name.
enum Index : std::size_t { file, mode, name, verbose };

constexpr std::array<OptionSpec, 4> specs{{
    {.name = "file", .alias = 'f', .repeatable = true, .value_name = "FILE", .help = "a file (repeatable)."},
    {.name = "mode", .value_name = "MODE", .help = "fast or slow;\nslow by default."},
    {.name = "name", .alias = 'n', .non_empty = true, .value_name = "NAME", .help = "a name."},
    {.name = "verbose", .alias = 'v', .flag = true, .help = "say more."},
}};

Result<ParsedArgs, OptionError> parse(std::vector<std::string_view> args) {
  return parse_options(args, specs);
}

std::vector<std::string> values_of(const ParsedArgs& parsed, std::size_t index) {
  std::vector<std::string> values;
  for (const ParsedOption& option : parsed.options) {
    if (option.index == index) {
      values.emplace_back(option.value);
    }
  }
  return values;
}

TEST(Options, EverySpellingOfAValue) {
  Result<ParsedArgs, OptionError> parsed =
      parse({"--file", "a", "--file=b", "-f", "c", "-fd", "-f=e", "--file=", "--mode=x=y", "-f", "-"});
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(values_of(*parsed, file), (std::vector<std::string>{"a", "b", "c", "d", "e", "", "-"}));
  EXPECT_EQ(values_of(*parsed, mode), std::vector<std::string>{"x=y"});  // only the first '=' separates
  EXPECT_TRUE(parsed->operands.empty());
}

TEST(Options, InCommandLineOrder) {
  Result<ParsedArgs, OptionError> parsed = parse({"-v", "--mode", "fast", "-f", "a"});
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->options.size(), 3U);
  EXPECT_EQ(parsed->options[0].index, verbose);
  EXPECT_EQ(parsed->options[0].value, "");
  EXPECT_EQ(parsed->options[1].index, mode);
  EXPECT_EQ(parsed->options[2].index, file);
  EXPECT_TRUE(parsed->has(mode));
  EXPECT_FALSE(parsed->has(name));
}

TEST(Options, AValueMayLookLikeAnOption) {
  Result<ParsedArgs, OptionError> parsed = parse({"--mode", "--verbose", "-n", "-1"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(values_of(*parsed, mode), std::vector<std::string>{"--verbose"});
  EXPECT_EQ(values_of(*parsed, name), std::vector<std::string>{"-1"});
  EXPECT_FALSE(parsed->has(verbose));
}

TEST(Options, OperandsAndTheEndOfOptions) {
  Result<ParsedArgs, OptionError> parsed = parse({"x", "-", "-v", "--", "--file", "-v", "--"});
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->operands, (std::vector<std::string_view>{"x", "-", "--file", "-v", "--"}));
  ASSERT_EQ(parsed->options.size(), 1U);
  EXPECT_EQ(parsed->options[0].index, verbose);
  EXPECT_TRUE(parse({"--"})->operands.empty());
}

TEST(Options, RepeatedFlagsAndValues) {
  EXPECT_EQ(values_of(*parse({"-f", "a", "-f", "a"}), file).size(), 2U);
  Result<ParsedArgs, OptionError> twice = parse({"-v", "--verbose"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().kind, OptionErrorKind::repeated);
  EXPECT_EQ(twice.error().message(), "option --verbose given more than once");
}

struct Rejected {
  std::vector<std::string_view> args;
  OptionErrorKind kind;
  std::string option;    // as written
  std::string argument;  // the whole argument
  std::string message;
};

void PrintTo(const Rejected& rejected, std::ostream* out) {
  for (std::string_view arg : rejected.args) {
    *out << arg << ' ';
  }
}

class OptionsReject : public ::testing::TestWithParam<Rejected> {};

TEST_P(OptionsReject, NamingTheOption) {
  Result<ParsedArgs, OptionError> parsed = parse(GetParam().args);
  ASSERT_FALSE(parsed.ok());
  const OptionError& error = parsed.error();
  EXPECT_EQ(error.kind, GetParam().kind);
  EXPECT_EQ(error.option, GetParam().option);
  EXPECT_EQ(error.argument, GetParam().argument);
  EXPECT_EQ(error.message(), GetParam().message);
  if (error.kind == OptionErrorKind::unknown_option) {
    EXPECT_EQ(error.spec, nullptr);
    EXPECT_TRUE(error.problem().empty());
  } else {
    ASSERT_NE(error.spec, nullptr);
    EXPECT_TRUE(error.option == "--" + std::string(error.spec->name) ||
                error.option == std::string("-") + error.spec->alias);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Arguments, OptionsReject,
    ::testing::Values(
        Rejected{{"--files", "a"}, OptionErrorKind::unknown_option, "--files", "--files", "unknown option --files"},
        Rejected{{"--files=a"}, OptionErrorKind::unknown_option, "--files", "--files=a", "unknown option --files"},
        Rejected{{"-x"}, OptionErrorKind::unknown_option, "-x", "-x", "unknown option -x"},
        Rejected{{"-xyz"}, OptionErrorKind::unknown_option, "-x", "-xyz", "unknown option -x"},
        Rejected{{"--=a"}, OptionErrorKind::unknown_option, "--", "--=a", "unknown option --"},
        Rejected{
            {"-f", "a", "--mode"}, OptionErrorKind::missing_value, "--mode", "--mode", "option --mode needs a value"},
        Rejected{{"-f"}, OptionErrorKind::missing_value, "-f", "-f", "option -f needs a value"},
        Rejected{{"--verbose=yes"},
                 OptionErrorKind::unexpected_value,
                 "--verbose",
                 "--verbose=yes",
                 "option --verbose takes no value"},
        Rejected{{"--verbose="},
                 OptionErrorKind::unexpected_value,
                 "--verbose",
                 "--verbose=",
                 "option --verbose takes no value"},
        Rejected{{"-vv"}, OptionErrorKind::unexpected_value, "-v", "-vv", "option -v takes no value"},
        Rejected{
            {"--name="}, OptionErrorKind::empty_value, "--name", "--name=", "option --name needs a non-empty value"},
        Rejected{{"-n", ""}, OptionErrorKind::empty_value, "-n", "-n", "option -n needs a non-empty value"},
        Rejected{{"-n="}, OptionErrorKind::empty_value, "-n", "-n=", "option -n needs a non-empty value"},
        Rejected{{"--mode", "a", "--mode=b"},
                 OptionErrorKind::repeated,
                 "--mode",
                 "--mode=b",
                 "option --mode given more than once"},
        Rejected{{"-n", "a", "--name", "b"},
                 OptionErrorKind::repeated,
                 "--name",
                 "--name",
                 "option --name given more than once"},
        // The first error wins, whatever follows.
        Rejected{
            {"--bogus", "--mode"}, OptionErrorKind::unknown_option, "--bogus", "--bogus", "unknown option --bogus"}));

TEST(Options, NoOptionsDeclared) {
  EXPECT_EQ(parse_options(std::vector<std::string_view>{"a"}, {})->operands, std::vector<std::string_view>{"a"});
  EXPECT_EQ(parse_options(std::vector<std::string_view>{"-a"}, {}).error().message(), "unknown option -a");
}

TEST(Options, HelpTableWithShortNames) {
  EXPECT_EQ(format_options(specs),
            "  -f, --file FILE  a file (repeatable).\n"
            "      --mode MODE  fast or slow;\n"
            "                   slow by default.\n"
            "  -n, --name NAME  a name.\n"
            "  -v, --verbose    say more.\n");
}

TEST(Options, HelpTableWithoutShortNames) {
  constexpr std::array<OptionSpec, 3> long_only{{
      {.name = "listen", .value_name = "ADDR:PORT", .help = "where."},
      {.name = "undocumented"},
      {.name = "help", .flag = true, .help = "print this help."},
  }};
  EXPECT_EQ(format_options(long_only),
            "  --listen ADDR:PORT  where.\n"
            "  --undocumented\n"
            "  --help              print this help.\n");
}

// The wording of the commands that take only options (serve, certs).
TEST(Options, OptionsOnlyWording) {
  auto message_of = [](std::vector<std::string_view> args) {
    Result<ParsedArgs, OptionError> parsed = parse(std::move(args));
    return parsed.ok() ? std::string("(parsed)") : parsed.error().options_only_message("serve");
  };
  EXPECT_EQ(message_of({"--mode"}), "--mode needs a value");
  EXPECT_EQ(message_of({"--name="}), "--name must not be empty");
  EXPECT_EQ(message_of({"-n", ""}), "-n must not be empty");
  EXPECT_EQ(message_of({"--verbose=yes"}), "--verbose takes no value");
  EXPECT_EQ(message_of({"--mode", "a", "--mode", "b"}), "--mode given more than once");
  EXPECT_EQ(message_of({"--files"}), "unknown option --files");
  EXPECT_EQ(message_of({"-x"}), "unexpected argument \"-x\" (serve takes only options)");
  EXPECT_EQ(unexpected_argument("vm.yaml", "certs"), "unexpected argument \"vm.yaml\" (certs takes only options)");
}

// The two wordings of parse_options_only(): a parse error and an operand.
TEST(Options, ParseOptionsOnly) {
  auto message_of = [](std::vector<std::string_view> args, OptionWording wording) {
    Result<ParsedArgs> parsed = parse_options_only(args, specs, "serve", wording);
    return parsed.ok() ? std::string("(parsed)") : parsed.error().message;
  };
  EXPECT_EQ(message_of({"--mode"}, OptionWording::options_only), "--mode needs a value");
  EXPECT_EQ(message_of({"--mode"}, OptionWording::plain), "option --mode needs a value");
  EXPECT_EQ(message_of({"-f", "a", "x"}, OptionWording::options_only),
            "unexpected argument \"x\" (serve takes only options)");
  EXPECT_EQ(message_of({"x"}, OptionWording::plain), "unexpected argument x");
  EXPECT_EQ(message_of({"-f", "a", "-v"}, OptionWording::options_only), "(parsed)");
}

// A command's options: the plain ones stored through bind_option(), the rest applied by the
// command, in command-line order, stopping at the first error.
struct ToolOptions {
  std::vector<std::string> files;
  std::string name;
  bool verbose = false;
  int mode = 0;
};

Status apply_tool_option(ToolOptions& options, Index option, std::string_view value) {
  if (option != mode) {
    return Error{"not stored: " + std::to_string(option)};
  }
  if (value != "fast" && value != "slow") {
    return Error{"--mode: \"" + std::string(value) + "\" is not fast or slow"};
  }
  options.mode = value == "fast" ? 1 : 2;
  return Ok{};
}

constexpr std::array tool_fields{bind_option(file, &ToolOptions::files), bind_option(name, &ToolOptions::name),
                                 bind_option(verbose, &ToolOptions::verbose)};
constexpr CommandSyntax<ToolOptions> tool{"tool", specs, tool_fields};

TEST(Options, ParseCommandLineStoresAndApplies) {
  ToolOptions options;
  const std::vector<std::string_view> args{"-f", "a", "--mode=fast", "-v", "--file", "b", "-n", "x"};
  Result<ParsedArgs> parsed = parse_command_line(args, tool, options, apply_tool_option);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(options.files, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(options.name, "x");
  EXPECT_TRUE(options.verbose);
  EXPECT_EQ(options.mode, 1);
  EXPECT_TRUE(parsed->has(mode));
}

TEST(Options, ParseCommandLineStopsAtTheFirstError) {
  ToolOptions options;
  std::vector<std::string_view> args{"-v", "--mode=medium"};
  Result<ParsedArgs> parsed = parse_command_line(args, tool, options, apply_tool_option);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "--mode: \"medium\" is not fast or slow");
  args = {"-n", "x", "extra"};
  parsed = parse_command_line(args, tool, options, apply_tool_option);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "unexpected argument \"extra\" (tool takes only options)");
}

}  // namespace
}  // namespace vmgate::common
