#pragma once
// `vmgate` run as the kubectl plugin `kubectl-vmgate` (the same binary under a second name, a
// symlink next to it): how it was invoked, how it names itself, and which kubeconfig `check`
// reads by default — kubectl's. Pure: the environment and the file system come in as values and
// a predicate. Thread-safe.
#include <functional>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"

namespace vmgate::cli {

/// The two names the binary answers to.
enum class Frontend {
  vmgate,          // `vmgate ...`: `check` without --objects or --kubeconfig uses no cluster objects
  kubectl_plugin,  // `kubectl vmgate ...`: `check` defaults to kubectl's kubeconfig and context
};

/// The executable name kubectl looks for on the PATH for `kubectl vmgate`.
inline constexpr std::string_view plugin_executable = "kubectl-vmgate";

/// kubectl execs a plugin by its path ("/usr/local/bin/kubectl-vmgate"), and a shell by the name
/// typed: the last path component of argv[0] decides. Anything else (a missing argv[0]
/// included) is plain `vmgate`.
Frontend frontend_of(std::string_view argv0);

/// The command as users type it, for usage lines and hints: "vmgate" or "kubectl vmgate".
std::string_view command_name(Frontend frontend);

/// Whether a file exists (injected so that the resolution stays pure).
using FileExists = std::function<bool(const std::string& path)>;

/// The kubeconfig kubectl would read: $KUBECONFIG when it is set and not empty (a
/// colon-separated list; kubectl skips the files of the list that do not exist, so they are
/// dropped here too), else HOME/.kube/config. The result is one path or a colon-separated list
/// for kube::load_kubeconfig, which merges lists as kubectl does.
/// Errors, naming the files looked for: HOME/.kube/config missing, no file of KUBECONFIG
/// existing, neither KUBECONFIG nor HOME set.
Result<std::string> default_kubeconfig(const char* kubeconfig_env, const char* home, const FileExists& exists);

}  // namespace vmgate::cli
