#include "vmgate/server/check_options.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace vmgate::cli {

namespace {

enum class Option { filename, objects, old, operation, namespace_name, output, help };

struct OptionSpec {
  Option option;
  std::string_view long_name;  // without "--"
  char short_name;             // 0: none
  bool takes_value;
};

constexpr std::array<OptionSpec, 7> options{{
    {Option::filename, "filename", 'f', true},
    {Option::objects, "objects", 0, true},
    {Option::old, "old", 0, true},
    {Option::operation, "operation", 0, true},
    {Option::namespace_name, "namespace", 'n', true},
    {Option::output, "output", 'o', true},
    {Option::help, "help", 'h', false},
}};

std::string display(const OptionSpec& spec) {
  return spec.short_name != 0 ? std::string("-") + spec.short_name : "--" + std::string(spec.long_name);
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

}  // namespace

std::string_view check_usage() {
  return R"(Usage: vmgate check [-f FILE|DIR|-]... [--objects FILE|DIR|-]... [--old FILE|-]
                    [--operation CREATE|UPDATE] [--namespace NS] [-o text|json|yaml]

Runs KubeVirt's admission webhooks (mutate, validate and, for a VirtualMachine, the
VirtualMachineInstance it would launch) on every kubevirt.io VirtualMachine and
VirtualMachineInstance in the -f inputs, offline, and prints the verdicts.

Options:
  -f, --filename FILE|DIR|-  objects to check (required, repeatable). YAML or JSON; multi-document
                             YAML, JSON arrays and Lists; a directory means its *.yaml, *.yml and
                             *.json files, recursively, in path order; - reads stdin. Objects of
                             other kinds are skipped with a note.
      --objects FILE|DIR|-   the cluster (repeatable): instancetypes, preferences, PVCs,
                             DataVolumes, DataSources, VolumeSnapshots, ControllerRevisions and
                             the KubeVirt CR. Other kinds are skipped with a note.
      --operation OPERATION  CREATE (default) or UPDATE.
      --old FILE|-           the object before the update: one VirtualMachine or
                             VirtualMachineInstance; required with UPDATE, refused with CREATE.
  -n, --namespace NS         namespace of the objects that carry none (default "default").
  -o, --output FORMAT        text (default), json or yaml.
  -h, --help                 print this help.

Exit status: 0 every object admitted, 1 at least one denied, 2 unusable input or arguments
(nothing is printed on stdout then, except that a -f file that cannot be read or parsed is
named on stderr while the other files' objects are still judged and printed, as
`kubectl apply -f DIR` applies them).
)";
}

Result<CheckOptions> parse_check_options(std::span<const std::string_view> args) {
  CheckOptions result;
  std::array<bool, options.size()> seen{};
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    const OptionSpec* spec = nullptr;
    std::optional<std::string_view> inline_value;
    if (arg.starts_with("--") && arg.size() > 2) {
      std::string_view name = arg.substr(2);
      if (const std::size_t equals = name.find('='); equals != std::string_view::npos) {
        inline_value = name.substr(equals + 1);
        name = name.substr(0, equals);
      }
      for (const OptionSpec& s : options) {
        if (s.long_name == name) {
          spec = &s;
        }
      }
      if (spec == nullptr) {
        return Error{"unknown option --" + std::string(name)};
      }
    } else if (arg.size() >= 2 && arg[0] == '-' && arg[1] != '-') {
      for (const OptionSpec& s : options) {
        if (s.short_name == arg[1]) {
          spec = &s;
        }
      }
      if (spec == nullptr) {
        return Error{"unknown option " + std::string(arg.substr(0, 2))};
      }
      if (arg.size() > 2) {
        std::string_view rest = arg.substr(2);
        if (rest.starts_with('=')) {
          rest.remove_prefix(1);
        }
        inline_value = rest;
      }
    } else {
      return Error{"unexpected argument \"" + std::string(arg) + "\": inputs are given with -f"};
    }

    if (!spec->takes_value) {
      if (inline_value) {
        return Error{"option " + display(*spec) + " takes no value"};
      }
      result.help = true;
      continue;
    }
    std::string_view value;
    if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return Error{"option " + display(*spec) + " needs a value"};
    }
    if (value.empty()) {
      return Error{"option " + display(*spec) + " needs a non-empty value"};
    }
    const auto index = static_cast<std::size_t>(spec - options.data());
    const bool repeatable = spec->option == Option::filename || spec->option == Option::objects;
    if (seen[index] && !repeatable) {
      return Error{"option " + display(*spec) + " given more than once"};
    }
    seen[index] = true;
    switch (spec->option) {
      case Option::filename:
        result.files.emplace_back(value);
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
      case Option::help:
        break;
    }
  }
  if (result.help) {
    return result;
  }
  if (result.files.empty()) {
    return Error{"no input: give the objects to check with -f FILE|DIR|-"};
  }
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
