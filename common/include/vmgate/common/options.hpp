#pragma once
// The command-line option syntax of every vmgate binary (`vmgate check`, `vmgate serve`,
// `vmgate-launcher`): each command declares its options in a table and gets back the
// occurrences in command-line order; what a value means stays with the command. Pure;
// thread-safe.
#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"

namespace vmgate::common {

/// One option a command accepts.
struct OptionSpec {
  std::string_view name{};  // the long name without "--": "filename"
  char alias = '\0';        // the short name without "-": 'f'; '\0' when there is none
  bool flag = false;        // takes no value (--help); otherwise a value is required
  /// May be given more than once; every occurrence is returned, in order. When false, a second
  /// occurrence is an error.
  bool repeatable = false;
  bool non_empty = false;         // an empty value (`--name=`, `--name ""`) is an error
  std::string_view value_name{};  // the value in the help: "FILE"
  /// The help in format_options(); "\n" starts a continuation line under the first.
  std::string_view help{};
};

/// One option as given: which declaration (its index in the table) and its value ("" for a flag).
struct ParsedOption {
  std::size_t index = 0;
  std::string_view value;
};

struct ParsedArgs {
  std::vector<ParsedOption> options;       // in command-line order
  std::vector<std::string_view> operands;  // the arguments that are not options, in order

  /// Whether the option declared at `index` was given.
  [[nodiscard]] bool has(std::size_t index) const;
};

enum class OptionErrorKind {
  unknown_option,    // not declared
  missing_value,     // a value option is the last argument
  unexpected_value,  // a flag given a value: --help=yes, -hx
  empty_value,       // a non_empty option given ""
  repeated,          // a non-repeatable option given again
};

struct OptionError {
  OptionErrorKind kind = OptionErrorKind::unknown_option;
  /// The option as the user wrote it, without its value: "--listen", "-f", "--lisen".
  std::string option;
  std::string argument;              // the whole argument it came from: "--help=yes", "-fvm.yaml"
  const OptionSpec* spec = nullptr;  // its declaration; nullptr for unknown_option

  /// "needs a value", "takes no value", "needs a non-empty value", "given more than once";
  /// empty for unknown_option. For commands that name the option their own way.
  [[nodiscard]] std::string_view problem() const;
  /// "unknown option --lisen", "option --listen needs a value", ...
  [[nodiscard]] std::string message() const;

  /// How a command that takes only options (`vmgate serve`, `vmgate certs`) words this error:
  /// "--listen needs a value", "--kubeconfig must not be empty", an unknown option as message(),
  /// and an argument that is not an option as unexpected_argument() says.
  [[nodiscard]] std::string options_only_message(std::string_view command) const;
};

/// `unexpected argument "x" (serve takes only options)`: an operand given to a command that
/// takes only options.
std::string unexpected_argument(std::string_view argument, std::string_view command);

/// Parses `args` (the arguments after the command) against `specs`. Accepted spellings:
/// `--name value`, `--name=value`, `-a value`, `-avalue`, `-a=value` (a value may begin with
/// "-": it is taken as is), `--flag`, `-a` for a flag. "-" alone is an operand; "--" ends the
/// options and every argument after it is an operand. Stops at the first error, which names
/// the option: an unknown option (long or short), a value option without a value, a flag
/// with one, an empty value for a non_empty option, a non-repeatable option given twice.
/// The returned views point into `args`.
Result<ParsedArgs, OptionError> parse_options(std::span<const std::string_view> args,
                                              std::span<const OptionSpec> specs);

/// The option table of a --help text, one entry per declaration in order:
///   "  -f, --filename FILE  help\n" and continuation lines aligned under the help.
/// The short-name column appears only when some option has one; the help column is two
/// spaces after the longest "--name VALUE".
std::string format_options(std::span<const OptionSpec> specs);

/// The position of an option in its table: each binary names its options with an enum whose
/// values are 0..N-1.
template <class Option>
constexpr std::size_t option_index(Option option) noexcept {
  return static_cast<std::size_t>(option);
}

/// An option table indexed by the enum `Option`, so that it cannot drift from the enum: `declare`
/// is called with a setter `set(Option, OptionSpec)`. every_option_declared() tells, in a
/// static_assert beside the table, that no value of the enum was forgotten.
template <class Option, std::size_t Count, class Declare>
constexpr std::array<OptionSpec, Count> option_table(Declare declare) {
  std::array<OptionSpec, Count> table{};
  declare([&table](Option option, const OptionSpec& spec) { table[option_index(option)] = spec; });
  return table;
}

template <std::size_t Count>
constexpr bool every_option_declared(const std::array<OptionSpec, Count>& table) {
  return std::none_of(table.begin(), table.end(), [](const OptionSpec& spec) { return spec.name.empty(); });
}

}  // namespace vmgate::common
