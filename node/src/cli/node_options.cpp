#include "vmgate/node/node_options.hpp"

#include <array>
#include <charconv>

#include "vmgate/common/options.hpp"

namespace vmgate::node {

namespace {

enum class Option : std::size_t {
  device_plugin_dir,
  devices,
  dev_root,
  max_devices,
  node_name,
  kubeconfig,
  kubevirt_namespace,
  use_emulation,
  libvirt_root,
  label_interval,
  kubelet_root,
  cgroup_root,
  proc_root,
  no_pod_network,
  help
};

constexpr std::size_t option_count = common::option_index(Option::help) + 1;

constexpr auto specs = common::option_table<Option, option_count>([](auto set) {
  set(Option::device_plugin_dir,
      {.name = "device-plugin-dir",
       .non_empty = true,
       .value_name = "DIR",
       .help = "the kubelet's device-plugin directory (default /var/lib/kubelet/device-plugins)"});
  set(Option::devices, {.name = "devices",
                        .non_empty = true,
                        .value_name = "LIST",
                        .help = "devices to offer, comma-separated (default kvm,tun,vhost-net,vhost-vsock)"});
  set(Option::dev_root, {.name = "dev-root",
                         .value_name = "DIR",
                         .help = "where the node's /dev is seen: DIR/dev/kvm (default: /dev/kvm itself)"});
  set(Option::max_devices, {.name = "max-devices",
                            .non_empty = true,
                            .value_name = "N",
                            .help = "units advertised per device (default 1000, as virt-handler)"});
  set(Option::node_name, {.name = "node-name",
                          .non_empty = true,
                          .value_name = "NAME",
                          .help = "this node (default $NODE_NAME): label it, report its launcher pods' VMI\n"
                                  "status, build their pod networks; none: device plugins only"});
  set(Option::kubeconfig, {.name = "kubeconfig",
                           .non_empty = true,
                           .value_name = "FILE",
                           .help = "the Kubernetes API (default: the pod's service account)"});
  set(Option::kubevirt_namespace, {.name = "kubevirt-namespace",
                                   .non_empty = true,
                                   .value_name = "NS",
                                   .help = "the namespace of the KubeVirt CR that counts (default kubevirt)"});
  set(Option::use_emulation,
      {.name = "use-emulation", .flag = true, .help = "label for software emulation (libvirt virttype qemu)"});
  set(Option::libvirt_root, {.name = "libvirt-root",
                             .non_empty = true,
                             .value_name = "DIR",
                             .help = "the embedded libvirt's root (default /var/run/vmgate-node/libvirt)"});
  set(Option::label_interval, {.name = "label-interval",
                               .non_empty = true,
                               .value_name = "SECONDS",
                               .help = "re-label this often, plus up to 120 % jitter (default 180)"});
  set(Option::kubelet_root, {.name = "kubelet-root",
                             .non_empty = true,
                             .value_name = "DIR",
                             .help = "the kubelet's root directory (default /var/lib/kubelet)"});
  set(Option::cgroup_root, {.name = "cgroup-root",
                            .non_empty = true,
                            .value_name = "DIR",
                            .help = "where pods' processes are found (default /sys/fs/cgroup)"});
  set(Option::proc_root, {.name = "proc-root",
                          .non_empty = true,
                          .value_name = "DIR",
                          .help = "the node's /proc (default /proc; the agent runs with hostPID)"});
  set(Option::no_pod_network,
      {.name = "no-pod-network", .flag = true, .help = "report VMI status only; build no pod networks"});
  set(Option::help, {.name = "help", .alias = 'h', .flag = true, .help = "this text"});
});
static_assert(common::every_option_declared(specs), "every Option is declared");

// The options stored as given; parse_node_options() checks the others.
constexpr std::array fields{
    common::bind_option(Option::device_plugin_dir, &NodeOptions::device_plugin_dir),
    common::bind_option(Option::dev_root, &NodeOptions::dev_root),
    common::bind_option(Option::node_name, &NodeOptions::node_name),
    common::bind_option(Option::kubeconfig, &NodeOptions::kubeconfig),
    common::bind_option(Option::kubevirt_namespace, &NodeOptions::kubevirt_namespace),
    common::bind_option(Option::use_emulation, &NodeOptions::use_emulation),
    common::bind_option(Option::libvirt_root, &NodeOptions::libvirt_root),
    common::bind_option(Option::kubelet_root, &NodeOptions::kubelet_root),
    common::bind_option(Option::cgroup_root, &NodeOptions::cgroup_root),
    common::bind_option(Option::proc_root, &NodeOptions::proc_root),
    common::bind_option(Option::help, &NodeOptions::help),
};

constexpr common::CommandSyntax<NodeOptions> syntax{"vmgate-node", specs, fields};

Status apply_option(NodeOptions& options, Option option, std::string_view value) {
  switch (option) {
    case Option::devices: {
      Result<std::vector<DeviceKind>> devices = parse_device_list(value);
      if (!devices) {
        return Error{"--devices: " + devices.error().message};
      }
      options.devices = std::move(*devices);
      break;
    }
    case Option::max_devices: {
      int count = 0;
      const std::string_view text = value;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
      if (error != std::errc{} || end != text.data() + text.size() || count < 1 || count > 1000000) {
        return Error{"--max-devices: \"" + std::string(text) + "\" is not a number from 1 to 1000000"};
      }
      options.max_devices = count;
      break;
    }
    case Option::label_interval: {
      int seconds = 0;
      const std::string_view text = value;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
      if (error != std::errc{} || end != text.data() + text.size() || seconds < 1 || seconds > 86400) {
        return Error{"--label-interval: \"" + std::string(text) + "\" is not a number of seconds from 1 to 86400"};
      }
      options.label_interval_seconds = seconds;
      break;
    }
    case Option::no_pod_network:
      options.pod_network = false;
      break;
    default:  // stored above
      break;
  }
  return Ok{};
}

}  // namespace

Result<NodeOptions> parse_node_options(std::span<const std::string_view> args) {
  NodeOptions options;
  options.devices.assign(known_devices().begin(), known_devices().end());
  Result<common::ParsedArgs> parsed = common::parse_command_line(args, syntax, options, apply_option);
  if (!parsed) {
    return parsed.error();
  }
  return options;
}

std::string node_usage() {
  return "usage: vmgate-node [options]\n"
         "The node agent: kubelet device plugins for devices.kubevirt.io/{kvm,tun,vhost-net,vhost-vsock};\n"
         "with a node name, KubeVirt's node labels and heartbeat on that Node, the VMI status of its\n"
         "launcher pods and their pod networks.\n"
         "SIGTERM or SIGINT stops it and removes its sockets.\n\n" +
         common::format_options(specs);
}

}  // namespace vmgate::node
