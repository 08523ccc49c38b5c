#pragma once
// The frame every vmgate command runs in (`vmgate serve`, `check`, `certs`, `controller`,
// `vmgate-launcher`, `vmgate-node`): a command line it cannot run exits 2 with the error and a
// pointer to --help, and --help prints the usage and exits 0, so that a command keeps only its
// options and its run. Here rather than in common/ because it writes to the process's streams.
// Thread-safety: no shared state.
#include <optional>
#include <ostream>
#include <string_view>
#include <utility>

#include "vmgate/common/result.hpp"

namespace vmgate::kube {

/// The exit code of a command line that cannot run (a bad option, no cluster to talk to), as
/// kubectl's and Go's flag package's.
inline constexpr int exit_usage = 2;

/// How a command names itself in its errors.
struct CommandName {
  std::string_view error_prefix;  // what an error line starts with: "error: ", "vmgate-launcher: "
  /// The command in "See 'vmgate certs --help'."; empty: no such line (vmgate-node's errors).
  std::string_view help_command;
};

/// What the start of a command decided: go on with `options`, or exit with `exit_code`.
template <class Options>
struct CommandStart {
  std::optional<Options> options;
  int exit_code = 0;
};

/// Writes `error` on `err` as `name` words it; returns exit_usage.
int usage_error(const CommandName& name, const Error& error, std::ostream& err);

/// The start of every command: the parsed options (anything with a `help` flag), or their error
/// (usage_error()); with --help, `usage()` on `out` and exit code 0.
template <class Options, class Usage>
CommandStart<Options> start_command(Result<Options> parsed, const CommandName& name, Usage usage, std::ostream& out,
                                    std::ostream& err) {
  if (!parsed) {
    return {std::nullopt, usage_error(name, parsed.error(), err)};
  }
  if (parsed->help) {
    out << usage();
    return {std::nullopt, 0};
  }
  return {std::move(*parsed), 0};
}

}  // namespace vmgate::kube
