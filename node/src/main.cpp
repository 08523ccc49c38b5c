// `vmgate-node`: wires the command line, the signals and the log to the node agent.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/command_frame.hpp"
#include "vmgate/node/agent.hpp"
#include "vmgate/node/node_labeller.hpp"
#include "vmgate/node/launcher_pods.hpp"
#include "vmgate/node/node_options.hpp"
#include "vmgate/node/subresource_server.hpp"
#include "vmgate/node/unique_fd.hpp"

namespace {

// The node labeller runs beside the device plugins when there is a Node to label: --node-name,
// else $NODE_NAME (the DaemonSet's downward API). Its failures never stop the plugins.
std::unique_ptr<vmgate::node::NodeLabeller> start_labeller(const vmgate::node::NodeOptions& options,
                                                           vmgate::node::EventLog& log) {
  std::string node_name = options.node_name;
  if (const char* from_env = std::getenv("NODE_NAME"); node_name.empty() && from_env != nullptr) {
    node_name = from_env;
  }
  if (node_name.empty()) {
    log.write("info", "no node name (--node-name, NODE_NAME): node labeller off");
    return nullptr;
  }
  vmgate::node::LabellerSettings settings{
      .node_name = node_name,
      .kubeconfig = options.kubeconfig,
      .kubevirt_namespace = options.kubevirt_namespace,
      .use_emulation = options.use_emulation,
      .libvirt_root = options.libvirt_root,
      .dev_root = options.dev_root,
      .kubelet_root = std::filesystem::path(options.device_plugin_dir).parent_path().string(),
      .label_interval = std::chrono::seconds(options.label_interval_seconds),
      .heartbeat_interval = std::chrono::seconds(60)};
  vmgate::Result<std::unique_ptr<vmgate::node::NodeLabeller>> labeller =
      vmgate::node::NodeLabeller::create(std::move(settings), log);
  if (!labeller) {
    log.write("error", "node labeller off", {{"error", labeller.error().message}});
    return nullptr;
  }
  (*labeller)->start();
  return std::move(*labeller);
}

// The subresource endpoint, started at once when its files are usable, else tried again every 10 s
// (the chart's Secret volume is optional: its files appear once the Secret exists), each new
// error logged once. The device plugins and the status reports never wait for it.
class SubresourceEndpoint {
 public:
  SubresourceEndpoint(vmgate::node::SubresourceConfig config, vmgate::node::LauncherPodsSource pods,
                      vmgate::node::EventLog& log)
      : config_(std::move(config)), pods_(std::move(pods)), log_(log), thread_([this] { keep_starting(); }) {}
  SubresourceEndpoint(const SubresourceEndpoint&) = delete;
  SubresourceEndpoint& operator=(const SubresourceEndpoint&) = delete;
  ~SubresourceEndpoint() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
    server_.reset();
  }

 private:
  void keep_starting() {
    std::string last_error;
    for (;;) {
      vmgate::Result<std::unique_ptr<vmgate::node::SubresourceServer>> started =
          vmgate::node::SubresourceServer::start(config_, pods_, log_);
      std::unique_lock lock(mutex_);
      if (started) {
        server_ = std::move(*started);
        log_.write("info", "subresource endpoint listening",
                   {{"port", std::to_string(server_->port())}, {"client", config_.client_name}});
        return;
      }
      if (started.error().message != last_error) {
        last_error = started.error().message;
        log_.write("error", "subresource endpoint not started, trying again every 10 s", {{"error", last_error}});
      }
      if (wake_.wait_for(lock, std::chrono::seconds(10), [this] { return stopping_; })) {
        return;
      }
    }
  }

  vmgate::node::SubresourceConfig config_;
  vmgate::node::LauncherPodsSource pods_;
  vmgate::node::EventLog& log_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::unique_ptr<vmgate::node::SubresourceServer> server_;
  std::thread thread_;  // last: starts once the rest is built
};

int run(const std::vector<std::string_view>& args) {
  // vmgate-node's errors name it, with no pointer to --help.
  vmgate::kube::CommandStart<vmgate::node::NodeOptions> start = vmgate::kube::start_command(
      vmgate::node::parse_node_options(args), {"vmgate-node: ", ""}, vmgate::node::node_usage, std::cout, std::cerr);
  if (!start.options) {
    return start.exit_code;
  }
  std::optional<vmgate::node::NodeOptions>& options = start.options;
  // Blocked before gRPC starts its threads, so that only the signalfd sees SIGTERM and SIGINT.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  if (pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr) != 0) {
    std::cerr << "vmgate-node: cannot block SIGTERM\n";
    return 1;
  }
  const vmgate::node::UniqueFd stop_fd(signalfd(-1, &stop_signals, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!stop_fd.valid()) {
    std::cerr << "vmgate-node: signalfd failed\n";
    return 1;
  }
  vmgate::node::EventLog log(std::cerr);
  const std::string_view permissions = vmgate::node::device_permissions(vmgate::node::detect_cgroup_mode());
  // With a node name, the launcher pods' VMI status and pod networks (docs/node.md).
  if (options->node_name.empty()) {
    if (const char* node = std::getenv("NODE_NAME"); node != nullptr) {
      options->node_name = node;
    }
  }
  std::unique_ptr<vmgate::node::LauncherPods> pods;
  if (!options->node_name.empty()) {
    vmgate::Result<vmgate::kube::ClientConfig> client = vmgate::kube::kubeconfig_or_in_cluster(
        options->kubeconfig, "", "--node-name needs --kubeconfig FILE, or a pod's service account");
    vmgate::Result<std::unique_ptr<vmgate::node::LauncherPods>> created =
        client ? vmgate::node::LauncherPods::create(*client,
                                                    {.node_name = options->node_name,
                                                     .kubelet_root = options->kubelet_root,
                                                     .cgroup_root = options->cgroup_root,
                                                     .proc_root = options->proc_root,
                                                     .pod_network = options->pod_network,
                                                     .nft_path = ""},
                                                    log)
               : vmgate::Result<std::unique_ptr<vmgate::node::LauncherPods>>(client.error());
    if (!created) {
      log.write("error", "vmgate-node failed", {{"error", created.error().message}});
      return 1;
    }
    pods = std::move(*created);
    pods->start();
    log.write("info", "following the launcher pods of this node", {{"node", options->node_name}});
  }
  // vmgate serve's pause, unpause and console (docs/node.md, "The subresource endpoint").
  std::unique_ptr<SubresourceEndpoint> subresources;
  if (options->subresource_listen) {
    vmgate::node::SubresourceConfig config{.listen = *options->subresource_listen,
                                           .tls_cert = options->subresource_tls_cert,
                                           .tls_key = options->subresource_tls_key,
                                           .client_ca = options->subresource_client_ca,
                                           .client_name = options->subresource_client_name,
                                           .kubelet_root = options->kubelet_root};
    // Without a node name there are no launcher pods to find: every request is a 404.
    vmgate::node::LauncherPodsSource source = [raw = pods.get()] {
      return raw != nullptr ? raw->current() : std::vector<vmgate::node::LauncherPod>();
    };
    subresources = std::make_unique<SubresourceEndpoint>(std::move(config), std::move(source), log);
  }
  std::unique_ptr<vmgate::node::NodeLabeller> labeller = start_labeller(*options, log);
  const vmgate::Status status = vmgate::node::run_agent(*options, permissions, stop_fd.get(), log);
  subresources.reset();
  if (labeller) {
    labeller->stop();
  }
  if (pods) {
    pods->stop();
  }
  if (!status) {
    log.write("error", "vmgate-node failed", {{"error", status.error().message}});
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string_view>(argv + 1, argv + argc));
  } catch (const std::exception& error) {
    std::cerr << "vmgate-node: internal error: " << error.what() << '\n';
    return 1;
  } catch (...) {
    std::cerr << "vmgate-node: internal error\n";
    return 1;
  }
}
