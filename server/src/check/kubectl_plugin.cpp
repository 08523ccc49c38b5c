#include "vmgate/server/kubectl_plugin.hpp"

#include <vector>

namespace vmgate::cli {

namespace {

// The hint every "no kubeconfig" error ends with: the three ways to name the cluster.
constexpr std::string_view remedy = "set KUBECONFIG, or give --kubeconfig FILE, or --objects FILE|DIR for files";

std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> paths;
  while (true) {
    const std::size_t colon = list.find(':');
    const std::string_view path = list.substr(0, colon);
    // kubectl ignores empty entries ("a::b", a trailing colon).
    if (!path.empty()) {
      paths.emplace_back(path);
    }
    if (colon == std::string_view::npos) {
      return paths;
    }
    list.remove_prefix(colon + 1);
  }
}

}  // namespace

Frontend frontend_of(std::string_view argv0) {
  const std::size_t slash = argv0.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? argv0 : argv0.substr(slash + 1);
  return name == plugin_executable ? Frontend::kubectl_plugin : Frontend::vmgate;
}

std::string_view command_name(Frontend frontend) {
  return frontend == Frontend::kubectl_plugin ? "kubectl vmgate" : "vmgate";
}

Result<std::string> default_kubeconfig(const char* kubeconfig_env, const char* home, const FileExists& exists) {
  if (kubeconfig_env != nullptr && *kubeconfig_env != '\0') {
    const std::vector<std::string> listed = split_list(kubeconfig_env);
    std::string existing;
    for (const std::string& path : listed) {
      if (exists(path)) {
        existing += existing.empty() ? "" : ":";
        existing += path;
      }
    }
    if (existing.empty()) {
      return Error{"no kubeconfig: KUBECONFIG=" + std::string(kubeconfig_env) +
                   (listed.size() == 1 ? " does not exist" : " names no file that exists") + "; " +
                   std::string(remedy)};
    }
    return existing;
  }
  if (home == nullptr || *home == '\0') {
    return Error{
        "no kubeconfig: neither KUBECONFIG nor HOME is set, so kubectl's default ~/.kube/config "
        "cannot be found; " +
        std::string(remedy)};
  }
  std::string path(home);
  if (path.back() != '/') {
    path += '/';
  }
  path += ".kube/config";
  if (!exists(path)) {
    return Error{"no kubeconfig: " + path + " (kubectl's default) does not exist; " + std::string(remedy)};
  }
  return path;
}

}  // namespace vmgate::cli
