#pragma once
// The command line of `vmgate subresources` (docs/subresources.md). Pure; thread-safe.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"
#include "vmgate/server/serve_options.hpp"

namespace vmgate::subresources {

struct SubresourcesOptions {
  serve::ListenAddress listen{"0.0.0.0", 8443};
  serve::ListenAddress metrics_listen{"0.0.0.0", 8080};
  std::string tls_cert;  // the pair presented to kube-apiserver's aggregator
  std::string tls_key;
  /// The CA of the aggregator's front-proxy client certificate; empty: the API server's
  /// ConfigMap kube-system/extension-apiserver-authentication (with its header names).
  std::string requestheader_client_ca;
  std::string kubeconfig;
  std::string context;
  std::string node_link_cert;  // the client pair presented to the node agents
  std::string node_link_key;
  std::string node_link_ca;  // verifies the node agents' server certificates
  std::string node_link_server_name = "vmgate-node";
  std::string node_namespace;  // empty: $POD_NAMESPACE
  std::string node_selector = "app.kubernetes.io/component=node";
  std::uint16_t node_port = 8186;
  std::size_t max_connections = 256;
  bool help = false;
};

/// Errors: an unknown or repeated option, a missing value, a malformed address, port or number,
/// --tls-cert without --tls-key (or the reverse), a node-link file missing from the three,
/// --context without --kubeconfig.
Result<SubresourcesOptions> parse_subresources_options(std::span<const std::string_view> args);

std::string subresources_usage();

}  // namespace vmgate::subresources
