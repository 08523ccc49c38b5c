// `vmgate subresources`' command line.
#include <array>
#include <charconv>

#include "vmgate/common/options.hpp"
#include "vmgate/server/subresources_options.hpp"

namespace vmgate::subresources {
namespace {

enum class Option : std::size_t {
  listen,
  metrics_listen,
  tls_cert,
  tls_key,
  requestheader_client_ca,
  kubeconfig,
  context,
  node_link_cert,
  node_link_key,
  node_link_ca,
  node_link_server_name,
  node_namespace,
  node_selector,
  node_port,
  max_connections,
  help,
};
constexpr std::size_t option_count = common::option_index(Option::help) + 1;

constexpr auto specs = common::option_table<Option, option_count>([](auto set) {
  set(Option::listen, {.name = "listen",
                       .non_empty = true,
                       .value_name = "ADDR:PORT",
                       .help = "the HTTPS port kube-apiserver's aggregator calls (default 0.0.0.0:8443)."});
  set(Option::metrics_listen, {.name = "metrics-listen",
                               .non_empty = true,
                               .value_name = "ADDR:PORT",
                               .help = "plain HTTP: GET /healthz, /readyz (default 0.0.0.0:8080)."});
  set(Option::tls_cert,
      {.name = "tls-cert", .non_empty = true, .value_name = "FILE", .help = "the serving certificate chain (PEM)."});
  set(Option::tls_key, {.name = "tls-key", .non_empty = true, .value_name = "FILE", .help = "its private key (PEM)."});
  set(Option::requestheader_client_ca,
      {.name = "requestheader-client-ca",
       .non_empty = true,
       .value_name = "FILE",
       .help = "the CA of the aggregator's client certificate (default: the API server's\n"
               "ConfigMap kube-system/extension-apiserver-authentication)."});
  set(Option::kubeconfig, {.name = "kubeconfig",
                           .non_empty = true,
                           .value_name = "FILE",
                           .help = "the Kubernetes API of this kubeconfig (default: the pod's service account)."});
  set(Option::context, {.name = "context", .non_empty = true, .value_name = "NAME", .help = "the kubeconfig context."});
  set(Option::node_link_cert, {.name = "node-link-cert",
                               .non_empty = true,
                               .value_name = "FILE",
                               .help = "the client certificate presented to the node agents."});
  set(Option::node_link_key, {.name = "node-link-key", .non_empty = true, .value_name = "FILE", .help = "its key."});
  set(Option::node_link_ca, {.name = "node-link-ca",
                             .non_empty = true,
                             .value_name = "FILE",
                             .help = "the CA that signed the node agents' server certificates."});
  set(Option::node_link_server_name, {.name = "node-link-server-name",
                                      .non_empty = true,
                                      .value_name = "NAME",
                                      .help = "the name their certificates carry (default vmgate-node)."});
  set(Option::node_namespace, {.name = "node-namespace",
                               .non_empty = true,
                               .value_name = "NS",
                               .help = "where the node agent pods run (default: $POD_NAMESPACE)."});
  set(Option::node_selector, {.name = "node-selector",
                              .non_empty = true,
                              .value_name = "SELECTOR",
                              .help = "their label selector (default app.kubernetes.io/component=node)."});
  set(Option::node_port,
      {.name = "node-port", .non_empty = true, .value_name = "PORT", .help = "their port (default 8186)."});
  set(Option::max_connections, {.name = "max-connections",
                                .non_empty = true,
                                .value_name = "N",
                                .help = "connections served at once (default 256)."});
  set(Option::help, {.name = "help", .alias = 'h', .flag = true, .help = "print this help."});
});
static_assert(common::every_option_declared(specs), "every Option is declared");

constexpr std::array fields{
    common::bind_option(Option::tls_cert, &SubresourcesOptions::tls_cert),
    common::bind_option(Option::tls_key, &SubresourcesOptions::tls_key),
    common::bind_option(Option::requestheader_client_ca, &SubresourcesOptions::requestheader_client_ca),
    common::bind_option(Option::kubeconfig, &SubresourcesOptions::kubeconfig),
    common::bind_option(Option::context, &SubresourcesOptions::context),
    common::bind_option(Option::node_link_cert, &SubresourcesOptions::node_link_cert),
    common::bind_option(Option::node_link_key, &SubresourcesOptions::node_link_key),
    common::bind_option(Option::node_link_ca, &SubresourcesOptions::node_link_ca),
    common::bind_option(Option::node_link_server_name, &SubresourcesOptions::node_link_server_name),
    common::bind_option(Option::node_namespace, &SubresourcesOptions::node_namespace),
    common::bind_option(Option::node_selector, &SubresourcesOptions::node_selector),
    common::bind_option(Option::help, &SubresourcesOptions::help),
};

constexpr common::CommandSyntax<SubresourcesOptions> syntax{"subresources", specs, fields};

Result<unsigned long> number(std::string_view name, std::string_view text, unsigned long low, unsigned long high) {
  unsigned long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
    return Error{"--" + std::string(name) + " must be a number from " + std::to_string(low) + " to " +
                 std::to_string(high) + ", not \"" + std::string(text) + "\""};
  }
  return value;
}

Status apply_option(SubresourcesOptions& options, Option option, std::string_view value) {
  switch (option) {
    case Option::listen:
    case Option::metrics_listen: {
      Result<serve::ListenAddress> address = serve::parse_listen_address(value);
      if (!address) {
        return Error{std::string(option == Option::listen ? "--listen: " : "--metrics-listen: ") +
                     address.error().message};
      }
      (option == Option::listen ? options.listen : options.metrics_listen) = *address;
      break;
    }
    case Option::node_port: {
      Result<unsigned long> port = number("node-port", value, 1, 65535);
      if (!port) {
        return port.error();
      }
      options.node_port = static_cast<std::uint16_t>(*port);
      break;
    }
    case Option::max_connections: {
      Result<unsigned long> count = number("max-connections", value, 1, 100000);
      if (!count) {
        return count.error();
      }
      options.max_connections = *count;
      break;
    }
    default:  // stored above
      break;
  }
  return Ok{};
}

}  // namespace

Result<SubresourcesOptions> parse_subresources_options(std::span<const std::string_view> args) {
  SubresourcesOptions options;
  Result<common::ParsedArgs> parsed = common::parse_command_line(args, syntax, options, apply_option);
  if (!parsed) {
    return parsed.error();
  }
  if (options.help) {
    return options;
  }
  if (options.tls_cert.empty() || options.tls_key.empty()) {
    return Error{"--tls-cert and --tls-key are required: kube-apiserver's aggregator verifies the serving certificate"};
  }
  const int node_link_files = static_cast<int>(!options.node_link_cert.empty()) +
                              static_cast<int>(!options.node_link_key.empty()) +
                              static_cast<int>(!options.node_link_ca.empty());
  if (node_link_files != 3) {
    return Error{
        "--node-link-cert, --node-link-key and --node-link-ca are required: the node agents serve only "
        "clients with a certificate"};
  }
  if (!options.context.empty() && options.kubeconfig.empty()) {
    return Error{"--context needs --kubeconfig"};
  }
  return options;
}

std::string subresources_usage() {
  return "Usage: vmgate subresources --tls-cert FILE --tls-key FILE --node-link-cert FILE --node-link-key FILE\n"
         "                           --node-link-ca FILE [options]\n\n"
         "KubeVirt's aggregated API subresources.kubevirt.io for virtctl: start, stop, restart\n"
         "(VirtualMachines), pause, unpause, console (VirtualMachineInstances), each authorized\n"
         "with a SubjectAccessReview for the user the aggregator names (docs/subresources.md).\n"
         "\nOptions:\n" +
         common::format_options(specs);
}

}  // namespace vmgate::subresources
