#include "vmgate/server/check_options.hpp"

#include <algorithm>
#include <array>

#include "vmgate/common/options.hpp"

namespace vmgate::cli {

namespace {

// In the order of the help.
enum class Option : std::size_t {
  filename,
  objects,
  kubeconfig,
  context,
  operation,
  old,
  namespace_name,
  output,
  kubevirt_version,
  help
};

constexpr std::size_t index(Option option) {
  return common::option_index(option);
}

constexpr std::size_t option_count = index(Option::help) + 1;

// Keyed by Option so that the table cannot drift from the enum. Every value must be non-empty:
// an empty one is a slip (an unset shell variable, say), not a request.
constexpr auto specs = common::option_table<Option, option_count>([](auto set) {
  set(Option::filename, {.name = "filename",
                         .alias = 'f',
                         .repeatable = true,
                         .non_empty = true,
                         .value_name = "FILE|DIR|-",
                         .help = "objects to check (required, repeatable). YAML or JSON; multi-document\n"
                                 "YAML, JSON arrays and Lists; a directory means its *.yaml, *.yml and\n"
                                 "*.json files, recursively, in path order; - reads stdin. Objects of\n"
                                 "other kinds are skipped with a note."});
  set(Option::objects, {.name = "objects",
                        .repeatable = true,
                        .non_empty = true,
                        .value_name = "FILE|DIR|-",
                        .help = "the cluster (repeatable): instancetypes, preferences, PVCs,\n"
                                "DataVolumes, DataSources, VolumeSnapshots, ControllerRevisions and\n"
                                "the KubeVirt CR. Other kinds are skipped with a note."});
  set(Option::kubeconfig, {.name = "kubeconfig",
                           .non_empty = true,
                           .value_name = "FILE",
                           .help = "read the cluster from the Kubernetes API this kubeconfig names\n"
                                   "(its objects of the kinds above, listed once; get/list RBAC), instead\n"
                                   "of --objects: validate manifests against the cluster they go to."});
  set(Option::context, {.name = "context",
                        .non_empty = true,
                        .value_name = "NAME",
                        .help = "the kubeconfig context (default: current-context)."});
  set(Option::operation,
      {.name = "operation", .non_empty = true, .value_name = "OPERATION", .help = "CREATE (default) or UPDATE."});
  set(Option::old, {.name = "old",
                    .non_empty = true,
                    .value_name = "FILE|-",
                    .help = "the object before the update: one VirtualMachine or\n"
                            "VirtualMachineInstance; required with UPDATE, refused with CREATE."});
  set(Option::namespace_name, {.name = "namespace",
                               .alias = 'n',
                               .non_empty = true,
                               .value_name = "NS",
                               .help = "namespace of the objects that carry none (default \"default\")."});
  set(Option::output, {.name = "output",
                       .alias = 'o',
                       .non_empty = true,
                       .value_name = "FORMAT",
                       .help = "text (default), json or yaml."});
  set(Option::kubevirt_version,
      {.name = "kubevirt-version", .non_empty = true, .value_name = "VERSION", .help = admission::release_option_help});
  // Repeating -h is harmless, and scripts that add it to a command line should not fail.
  set(Option::help, {.name = "help", .alias = 'h', .flag = true, .repeatable = true, .help = "print this help."});
});
static_assert(common::every_option_declared(specs), "every Option is declared");

// check names an option by its short name when it has one ("option -f needs a value"): the
// usage line and the examples spell -f, -n and -o that way.
std::string display(const common::OptionSpec& spec) {
  return spec.alias != '\0' ? std::string("-") + spec.alias : "--" + std::string(spec.name);
}

Error option_error(const common::OptionError& error) {
  if (error.kind == common::OptionErrorKind::unknown_option) {
    return Error{error.message()};
  }
  return Error{"option " + display(*error.spec) + " " + std::string(error.problem())};
}

// RFC 1123 label, as Kubernetes validates namespace names.
bool is_dns_label(std::string_view name) {
  if (name.empty() || name.size() > 63) {
    return false;
  }
  auto alphanumeric = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alphanumeric(name.front()) || !alphanumeric(name.back())) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [&](char c) { return alphanumeric(c) || c == '-'; });
}

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; });
  return out;
}

// Where `kubectl vmgate check` takes the cluster from when no source is given.
constexpr std::string_view plugin_cluster_note = R"(
As a kubectl plugin, without --objects or --kubeconfig the cluster objects come from the
cluster kubectl uses: the kubeconfig $KUBECONFIG names (a colon-separated list, merged as
kubectl merges it) or else ~/.kube/config, and its current context or --context; objects that
carry no namespace take the context's namespace unless -n is given.
)";

}  // namespace

std::string check_usage(Frontend frontend) {
  const std::string command(command_name(frontend));
  // The continuation lines line up under the first option, whatever the command's length.
  const std::string indent(command.size() + std::string_view("Usage:  check ").size(), ' ');
  const std::string_view cluster = frontend == Frontend::kubectl_plugin ? plugin_cluster_note : "";
  return "Usage: " + command + R"( check [-f FILE|DIR|-]... [--objects FILE|DIR|-... | --kubeconfig FILE] [--old FILE|-]
)" + indent +
         R"([--operation CREATE|UPDATE] [--namespace NS] [-o text|json|yaml]
)" + indent +
         R"([--kubevirt-version VERSION]

Runs KubeVirt's admission webhooks (mutate, validate and, for a VirtualMachine, the
VirtualMachineInstance it would launch) on every kubevirt.io VirtualMachine and
VirtualMachineInstance in the -f inputs, offline, and prints the verdicts, as the KubeVirt
release --kubevirt-version names or the cluster's KubeVirt CR reports.
)" + std::string(cluster) +
         R"(
Options:
)" + common::format_options(specs) +
         R"(
Exit status: 0 every object admitted, 1 at least one denied, 2 unusable input or arguments
(nothing is printed on stdout then, except that a -f file that cannot be read or parsed is
named on stderr while the other files' objects are still judged and printed, as
`kubectl apply -f DIR` applies them).
)";
}

Result<CheckOptions> parse_check_options(std::span<const std::string_view> args, Frontend frontend) {
  Result<common::ParsedArgs, common::OptionError> parsed = common::parse_options(args, specs);
  if (!parsed) {
    return option_error(parsed.error());
  }
  if (!parsed->operands.empty()) {
    return Error{"unexpected argument \"" + std::string(parsed->operands.front()) + "\": inputs are given with -f"};
  }
  CheckOptions result;
  bool namespace_given = false;
  for (const auto& [spec_index, value] : parsed->options) {
    switch (static_cast<Option>(spec_index)) {
      case Option::filename:
        result.files.emplace_back(value);
        break;
      case Option::kubeconfig:
        result.kubeconfig = std::string(value);
        break;
      case Option::context:
        result.context = std::string(value);
        break;
      case Option::objects:
        result.objects.emplace_back(value);
        break;
      case Option::old:
        result.old_file = std::string(value);
        break;
      case Option::operation: {
        const std::string operation = upper(value);
        if (operation == "CREATE") {
          result.operation = admission::Operation::create;
        } else if (operation == "UPDATE") {
          result.operation = admission::Operation::update;
        } else {
          return Error{"--operation must be CREATE or UPDATE, not \"" + std::string(value) + "\""};
        }
        break;
      }
      case Option::namespace_name:
        if (!is_dns_label(value)) {
          return Error{"--namespace \"" + std::string(value) +
                       "\" is not a valid namespace name (lower-case letters, digits and '-', at most 63)"};
        }
        result.namespace_name = std::string(value);
        namespace_given = true;
        break;
      case Option::output:
        if (value == "text") {
          result.output = OutputFormat::text;
        } else if (value == "json") {
          result.output = OutputFormat::json;
        } else if (value == "yaml") {
          result.output = OutputFormat::yaml;
        } else {
          return Error{"-o must be text, json or yaml, not \"" + std::string(value) + "\""};
        }
        break;
      case Option::kubevirt_version:
        if (Status set = admission::set_release_option(result.release, value); !set) {
          return set.error();
        }
        break;
      case Option::help:
        result.help = true;
        break;
    }
  }
  if (result.help) {
    return result;
  }
  if (result.files.empty()) {
    return Error{"no input: give the objects to check with -f FILE|DIR|-"};
  }
  if (!result.kubeconfig.empty() && !result.objects.empty()) {
    return Error{"--kubeconfig and --objects are two sources of the cluster: give one"};
  }
  const bool plugin = frontend == Frontend::kubectl_plugin;
  if (!result.context.empty() && result.kubeconfig.empty()) {
    // kubectl's --context picks a context of its default kubeconfig; --objects has none.
    if (!plugin) {
      return Error{"--context needs --kubeconfig"};
    }
    if (!result.objects.empty()) {
      return Error{"--context names a kubeconfig context, but --objects reads the cluster from files: give one"};
    }
  }
  result.namespace_from_context = plugin && !namespace_given && result.objects.empty();
  std::size_t stdin_uses = static_cast<std::size_t>(std::count(result.files.begin(), result.files.end(), "-")) +
                           static_cast<std::size_t>(std::count(result.objects.begin(), result.objects.end(), "-")) +
                           (result.old_file == "-" ? 1U : 0U);
  if (stdin_uses > 1) {
    return Error{"stdin (-) can be read only once, but it is named " + std::to_string(stdin_uses) + " times"};
  }
  if (result.operation == admission::Operation::update && result.old_file.empty()) {
    return Error{"--operation UPDATE needs the object before the update: --old FILE"};
  }
  if (result.operation == admission::Operation::create && !result.old_file.empty()) {
    return Error{"--old is only meaningful with --operation UPDATE"};
  }
  return result;
}

}  // namespace vmgate::cli
