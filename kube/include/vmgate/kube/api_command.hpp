#pragma once
// What the commands that work on the Kubernetes API for as long as they run (`vmgate certs`,
// `vmgate controller`) start with: the API, connections to it and the JSON log on stderr, opened
// in the same order with the same errors for both. Thread-safety: as ApiConnection and LogSink.
#include <unistd.h>

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/log_line.hpp"

namespace vmgate::kube {

struct ApiCommand {
  ClientConfig config;
  std::vector<std::unique_ptr<ApiConnection>> connections;  // as many as asked for, each for one thread
  LogSink sink{STDERR_FILENO};
  EventLog log{sink};
};

/// The API of `kubeconfig` (its `context`, else its current one), else the pod's service account;
/// `connections` connections to it; the log, which has logged the configuration's warnings.
/// Errors (the command says them and exits exit_usage): no kubeconfig outside a pod, the
/// configuration's (kubeconfig_or_in_cluster()), a connection's (ApiConnection::create()).
Result<std::unique_ptr<ApiCommand>> open_api_command(std::string_view kubeconfig, std::string_view context,
                                                     std::size_t connections);

}  // namespace vmgate::kube
