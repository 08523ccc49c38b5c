#pragma once
// `vmgate check`: loads the cluster and the objects, runs the admission pipeline on each
// VirtualMachine and VirtualMachineInstance, and reports (docs/webhook.md, "vmgate check command line").
// Thread-safety: run_check reads files and `standard_input`; otherwise no shared state.
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/admission/pipeline.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/server/check_options.hpp"

namespace vmgate::cli {

/// The verdict on one object of the -f inputs.
struct CheckResult {
  std::string source;  // "path#N"
  admission::Resource resource = admission::Resource::virtual_machine;
  std::string kind;  // as written: "VirtualMachine" or "VirtualMachineInstance"
  std::string namespace_name;
  std::string name;
  admission::Outcome outcome;
};

struct CheckRun {
  std::vector<CheckResult> results;  // in input order
  std::vector<std::string> notes;    // "objects.yaml#3: skipping kind Service"
  /// One message per -f file that could not be read or parsed ("vms/b.yaml:2:1: duplicate key
  /// \"kind\""), in input order: the other files' objects are judged all the same, as
  /// `kubectl apply -f DIR` applies them, but the run's exit status is 2.
  std::vector<std::string> unusable;
};

/// Runs the check that `options` describe (options.help must be false).
/// A kubevirt.io VirtualMachine or VirtualMachineInstance of a version kube-apiserver does not
/// serve (any but v1 and v1alpha3) is not judged: its result is a 404 NotFound that names the
/// kind and apiVersion, as kubectl words it.
/// A -f file that cannot be read or parsed is listed in CheckRun::unusable and the other files
/// are judged; when no usable file holds a VirtualMachine or VirtualMachineInstance, the run
/// has no results, only `unusable`.
/// Errors (exit status 2): a -f path that does not exist; -f inputs, all usable, without any
/// VirtualMachine or VirtualMachineInstance; unreadable or malformed --objects or --old input
/// (the message names the file, and line and column for syntax errors); an --objects object
/// the cluster store refuses (named by source); an --old input that is not exactly one served
/// kubevirt.io VirtualMachine or VirtualMachineInstance; with --old, a -f object without an old
/// object of the same kind, namespace and name.
Result<CheckRun> run_check(const CheckOptions& options, std::istream& standard_input);

/// 0 when every result is admitted, 1 when one is denied.
int exit_status(const std::vector<CheckResult>& results);

/// 2 when a -f file was unusable, else exit_status(run.results).
int exit_status(const CheckRun& run);

/// `{"results": [...]}` with each result's members in the contract's order: source, kind,
/// namespace, name, allowed, code, reason, message, causes, warnings, patch, admitted, expanded.
json::Document report_document(const std::vector<CheckResult>& results);

/// `report` pretty-printed (2-space indent) with a trailing newline; byte-identical for equal input.
std::string render_json(const json::Value& report);

/// `report` as YAML (yaml_json.hpp's kube::json_to_yaml). Errors: only from the emitter.
Result<std::string> render_yaml(const json::Value& report);

/// One line per result, kubectl-like, then one indented line per cause and per warning:
///   virtualmachine.kubevirt.io/vm1 [default, vm.yaml#0] admitted (3 changes)
///   virtualmachineinstance.kubevirt.io/x [default, vmi.yaml#0] denied: <message>
///     - spec.domain.cpu.sockets: <cause message>
///     warning: <warning>
/// With `color`, the verdict is green or red and "warning" yellow (ANSI escapes).
std::string render_text(const std::vector<CheckResult>& results, bool color);

}  // namespace vmgate::cli
