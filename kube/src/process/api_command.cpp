#include "vmgate/kube/api_command.hpp"

namespace vmgate::kube {

Result<std::unique_ptr<ApiCommand>> open_api_command(std::string_view kubeconfig, std::string_view context,
                                                     std::size_t connections) {
  Result<ClientConfig> config = kubeconfig_or_in_cluster(
      kubeconfig, context, "no --kubeconfig, and not in a pod (no service account mounted): give --kubeconfig");
  if (!config) {
    return config.error();
  }
  auto command = std::make_unique<ApiCommand>();
  command->config = std::move(*config);
  for (std::size_t i = 0; i < connections; ++i) {
    Result<std::unique_ptr<ApiConnection>> connection = ApiConnection::create(command->config);
    if (!connection) {
      return connection.error();
    }
    command->connections.push_back(std::move(*connection));
  }
  for (const std::string& warning : command->config.warnings) {
    command->log("warning", "kubeconfig", {{"warning", warning}});
  }
  return command;
}

}  // namespace vmgate::kube
