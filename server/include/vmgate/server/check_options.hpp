#pragma once
// The command line of `vmgate check` (docs/webhook.md, "vmgate check command line"). Pure; thread-safe.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/admission/pipeline.hpp"
#include "vmgate/admission/release.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/server/kubectl_plugin.hpp"

namespace vmgate::cli {

enum class OutputFormat { text, json, yaml };

struct CheckOptions {
  std::vector<std::string> files;    // -f: objects to check
  std::vector<std::string> objects;  // --objects: the cluster
  std::string kubeconfig;            // --kubeconfig: the cluster from the Kubernetes API
  std::string context;               // --context
  std::string old_file;              // --old; empty when not given
  admission::Operation operation = admission::Operation::create;
  std::string namespace_name = "default";
  // As a kubectl plugin without -n: objects that carry no namespace take the kubeconfig
  // context's namespace when it names one, as `kubectl apply` places them.
  bool namespace_from_context = false;
  OutputFormat output = OutputFormat::text;
  std::optional<admission::Release> release;  // --kubevirt-version; nullopt: as the cluster says
  bool help = false;                          // -h/--help: print check_usage() and do nothing else
};

/// Parses the arguments that follow `check`. Options take their value as the next argument,
/// after `=` (`--output=json`) or, for the short ones, attached (`-ojson`); `--` ends the
/// options (check takes no operands: inputs are given with -f).
/// Errors, in words for the user: an unknown option, --kubeconfig with --objects, --context
/// without --kubeconfig, an option without its value, a repeated -o/--operation/--namespace/--old, an
/// unknown output format or operation, a namespace that is not a DNS label, an argument that
/// is not an option, no -f, "-" (stdin) named more than once, --old with CREATE, UPDATE
/// without --old.
/// As a kubectl plugin (`frontend`), --context is accepted without --kubeconfig: it picks a
/// context of kubectl's default kubeconfig, which the caller fills in (default_kubeconfig) when
/// neither --kubeconfig nor --objects is given.
Result<CheckOptions> parse_check_options(std::span<const std::string_view> args, Frontend frontend = Frontend::vmgate);

/// `vmgate check --help`, or `kubectl vmgate check --help`.
std::string check_usage(Frontend frontend = Frontend::vmgate);

}  // namespace vmgate::cli
