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
  subresource_listen,
  subresource_tls_cert,
  subresource_tls_key,
  subresource_client_ca,
  subresource_client_name,
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
  set(Option::subresource_listen,
      {.name = "subresource-listen",
       .non_empty = true,
       .value_name = "ADDR:PORT",
       .help = "serve vmgate serve's pause, unpause and console over mTLS here (default: off)"});
  set(Option::subresource_tls_cert, {.name = "subresource-tls-cert",
                                     .non_empty = true,
                                     .value_name = "FILE",
                                     .help = "the endpoint's certificate (PEM, chain)"});
  set(Option::subresource_tls_key,
      {.name = "subresource-tls-key", .non_empty = true, .value_name = "FILE", .help = "its private key (PEM)"});
  set(Option::subresource_client_ca, {.name = "subresource-client-ca",
                                      .non_empty = true,
                                      .value_name = "FILE",
                                      .help = "the CA a client's certificate must chain to (PEM)"});
  set(Option::subresource_client_name,
      {.name = "subresource-client-name",
       .non_empty = true,
       .value_name = "NAME",
       .help = "the subject CN a client's certificate must carry (default vmgate-subresources)"});
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
    common::bind_option(Option::subresource_tls_cert, &NodeOptions::subresource_tls_cert),
    common::bind_option(Option::subresource_tls_key, &NodeOptions::subresource_tls_key),
    common::bind_option(Option::subresource_client_ca, &NodeOptions::subresource_client_ca),
    common::bind_option(Option::subresource_client_name, &NodeOptions::subresource_client_name),
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
    case Option::subresource_listen: {
      Result<ListenAddress> address = parse_listen_address(value);
      if (!address) {
        return Error{"--subresource-listen: " + address.error().message};
      }
      options.subresource_listen = std::move(*address);
      break;
    }
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
  // The endpoint is mTLS or nothing: all three files with --subresource-listen, none without.
  const bool files = !options.subresource_tls_cert.empty() && !options.subresource_tls_key.empty() &&
                     !options.subresource_client_ca.empty();
  const bool any_file = !options.subresource_tls_cert.empty() || !options.subresource_tls_key.empty() ||
                        !options.subresource_client_ca.empty();
  if (options.subresource_listen && !files) {
    return Error{
        "--subresource-listen needs --subresource-tls-cert, --subresource-tls-key and --subresource-client-ca"};
  }
  if (!options.subresource_listen && any_file) {
    return Error{"--subresource-tls-cert, --subresource-tls-key and --subresource-client-ca need --subresource-listen"};
  }
  return options;
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Error{"\"" + std::string(text) + "\" is not ADDR:PORT"};
  }
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);  // [::]:8186
  } else if (host.find(':') != std::string_view::npos) {
    return Error{"\"" + std::string(text) + "\": an IPv6 address goes in brackets ([::]:8186)"};
  }
  const std::string_view port_text = text.substr(colon + 1);
  unsigned port = 0;
  const auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (host.empty() || error != std::errc{} || end != port_text.data() + port_text.size() || port > 65535) {
    return Error{"\"" + std::string(text) + "\" is not ADDR:PORT (a port from 0 to 65535)"};
  }
  return ListenAddress{std::string(host), static_cast<std::uint16_t>(port)};
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
