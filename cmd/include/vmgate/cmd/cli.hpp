#pragma once
// The `vmgate` command line: subcommand dispatch, usage, exit statuses. main() only calls run().
// Exit statuses: 0 success (check: every object admitted), 1 check: an object denied,
// 2 unusable arguments or input; serve: 0 after a graceful shutdown, 2 unusable set-up.
#include <istream>
#include <ostream>
#include <span>
#include <string_view>

#include "vmgate/server/kubectl_plugin.hpp"

namespace vmgate::cli {

struct Console {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  bool color = false;  // ANSI colours in text output
};

/// Runs `vmgate <args>` (args exclude the program name), or `kubectl vmgate <args>` when
/// `frontend` says so (usage and hints name `kubectl vmgate`; `check` without --objects or
/// --kubeconfig reads kubectl's kubeconfig from KUBECONFIG or HOME). Writes results to
/// console.out and notes and errors to console.err; on exit status 2 nothing is written to
/// console.out. Never throws: an unexpected exception is reported as an internal error (status 2).
int run(std::span<const std::string_view> args, const Console& console, Frontend frontend = Frontend::vmgate);

/// main()'s entry: the front-end from argv[0] (frontend_of); colours when `out` is std::cout,
/// stdout is a terminal and NO_COLOR is not set.
int run(int argc, char** argv, std::istream& in, std::ostream& out, std::ostream& err);

/// `vmgate --help`, or `kubectl vmgate --help`.
std::string_view usage();
std::string_view usage(Frontend frontend);

}  // namespace vmgate::cli
