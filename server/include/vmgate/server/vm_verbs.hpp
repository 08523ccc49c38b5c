#pragma once
// `vmgate start|stop|restart|pause|unpause` (and `kubectl vmgate ...`): virtctl's lifecycle
// verbs for users without virtctl, as requests to the same subresources.kubevirt.io API (served
// by `vmgate subresources` or KubeVirt's virt-api) with virtctl's flags, output and error
// wording (docs/subresources.md). The request is built purely here; run_vm_verb() sends it.
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"

namespace vmgate::subresources {

/// Whether `command` is one of the verbs.
bool is_vm_verb(std::string_view command);

struct VmVerb {
  std::string kubeconfig;
  std::string context;
  std::string namespace_;   // empty: the kubeconfig context's, else "default"
  std::string target_kind;  // "vm" or "vmi" (pause/unpause; start/stop/restart: "vm")
  std::string name;
  std::string method = "PUT";  // "GET" first for `pause vm` (virtctl reads the VM)
  std::string subresource;     // "start", "stop", "restart", "pause", "unpause", "console"
  int timeout_minutes = 5;     // console: how long a VMI that is not running yet is waited for
  std::string body;            // the options as JSON
  std::string done;            // "VM vm was scheduled to start"
  std::string error_prefix;    // "Error starting VirtualMachine "
  bool help = false;
};

/// Parses the arguments after the verb: NAME (pause/unpause: vm|vmi NAME), -n/--namespace,
/// --kubeconfig, --context, --dry-run; start --paused; stop/restart --force with --grace-period
/// (both or neither, as virtctl: "Must both use --force=true and set --grace-period.").
Result<VmVerb> parse_vm_verb(std::string_view verb, std::span<const std::string_view> args);

/// The path below the API server: /apis/subresources.kubevirt.io/v1/namespaces/NS/RESOURCE/NAME/VERB.
std::string vm_verb_path(const VmVerb& verb, std::string_view namespace_);

std::string vm_verb_usage(std::string_view command_name, std::string_view verb);

/// Sends the request with the kubeconfig given, or `default_kubeconfig` (kubectl's for the
/// plugin); prints `done` or the error (the API server's Status message). 0, or 1 on an error.
int run_vm_verb(std::string_view verb, std::span<const std::string_view> args, std::string_view command_name,
                const std::optional<std::string>& default_kubeconfig, std::ostream& out, std::ostream& err);

}  // namespace vmgate::subresources
