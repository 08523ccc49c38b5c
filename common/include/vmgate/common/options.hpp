#pragma once
// The command-line option syntax of every vmgate binary (`vmgate serve`, `check`, `certs`,
// `controller`, `vmgate-launcher`, `vmgate-node`): each command declares its options in a table
// and gets back the occurrences in command-line order, the plain ones stored in its options
// struct (store_option()); what any other value means stays with the command. Pure; thread-safe.
#include <algorithm>
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
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

/// How a command words a parse error (each keeps the words its users and tests already know).
enum class OptionWording {
  /// "--listen needs a value", "--kubeconfig must not be empty", `unexpected argument "x" (serve
  /// takes only options)`: OptionError::options_only_message() and unexpected_argument().
  options_only,
  /// "option --vmi needs a value", "unexpected argument x": OptionError::message() (vmgate-launcher).
  plain,
};

/// The parse of every command that takes options and no operand (serve, certs, controller,
/// vmgate-launcher, vmgate-node): parse_options(), then the first operand refused, each error
/// worded as `wording` says, naming `command` ("serve", "vmgate-node") where the wording does.
Result<ParsedArgs> parse_options_only(std::span<const std::string_view> args, std::span<const OptionSpec> specs,
                                      std::string_view command, OptionWording wording = OptionWording::options_only);

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

/// An option a command stores as given, in a field of its options struct `Options`: a value in a
/// string, a repeatable value appended to a list, or a flag that sets a bool. Exactly one of the
/// three members is set; make one with bind_option(). Most options of every command are such, so
/// the command's own switch keeps only the options whose value it checks or converts.
template <class Options>
struct OptionField {
  std::size_t index = 0;
  std::string Options::*text = nullptr;
  std::vector<std::string> Options::*list = nullptr;
  bool Options::*flag = nullptr;
};

template <class Options, class Option>
constexpr OptionField<Options> bind_option(Option option, std::string Options::*text) {
  return {option_index(option), text, nullptr, nullptr};
}

template <class Options, class Option>
constexpr OptionField<Options> bind_option(Option option, std::vector<std::string> Options::*list) {
  return {option_index(option), nullptr, list, nullptr};
}

template <class Options, class Option>
constexpr OptionField<Options> bind_option(Option option, bool Options::*flag) {
  return {option_index(option), nullptr, nullptr, flag};
}

/// Stores `option` in `options` when `fields` binds it, and says whether it did; false leaves the
/// option to the command. (`fields` does not deduce Options, so that a std::array of them converts.)
template <class Options>
bool store_option(Options& options, std::span<const OptionField<std::type_identity_t<Options>>> fields,
                  const ParsedOption& option) {
  const auto field = std::find_if(fields.begin(), fields.end(),
                                  [&option](const OptionField<Options>& bound) { return bound.index == option.index; });
  if (field == fields.end()) {
    return false;
  }
  if (field->text != nullptr) {
    options.*(field->text) = std::string(option.value);
  } else if (field->list != nullptr) {
    (options.*(field->list)).emplace_back(option.value);
  } else {
    options.*(field->flag) = true;
  }
  return true;
}

/// A command's option syntax, what parse_command_line() needs of it: its name as errors give it,
/// its table, the options stored as given, and its error wording.
template <class Options>
struct CommandSyntax {
  std::string_view command;  // "serve", "vmgate-node"
  std::span<const OptionSpec> specs;
  std::span<const OptionField<Options>> fields;
  OptionWording wording = OptionWording::options_only;
};

/// The option loop every command shares: parse_options_only(), then each option in command-line
/// order either stored in `options` (store_option()) or handed to the command's `apply`, which
/// checks and converts it. Stops at the first error, the parse's or apply's. Returns the parsed
/// arguments for what a command asks of them afterwards (ParsedArgs::has()); their views point
/// into `args`.
template <class Options, class Option>
Result<ParsedArgs> parse_command_line(std::span<const std::string_view> args,
                                      const CommandSyntax<std::type_identity_t<Options>>& syntax, Options& options,
                                      Result<Ok> (*apply)(Options&, Option, std::string_view)) {
  Result<ParsedArgs> parsed = parse_options_only(args, syntax.specs, syntax.command, syntax.wording);
  if (!parsed) {
    return parsed;
  }
  for (const ParsedOption& option : parsed->options) {
    if (store_option(options, syntax.fields, option)) {
      continue;
    }
    if (Result<Ok> applied = apply(options, static_cast<Option>(option.index), option.value); !applied) {
      return applied.error();
    }
  }
  return parsed;
}

template <std::size_t Count>
constexpr bool every_option_declared(const std::array<OptionSpec, Count>& table) {
  return std::none_of(table.begin(), table.end(), [](const OptionSpec& spec) { return spec.name.empty(); });
}

}  // namespace vmgate::common
