#pragma once
// Where the Kubernetes API is and how to authenticate to it: a kubeconfig file (as kubectl reads
// it) or the pod's service account (in-cluster). Only what a webhook needs is supported: client
// certificates, bearer tokens (inline or a token file), a CA from a file or inline data, the
// server name override and insecure-skip-tls-verify. Credential plugins (`exec`,
// `auth-provider`) and basic auth are refused with an error naming the field, never ignored.
// Thread-safety: no shared state; reads the file system and the environment given.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"

namespace vmgate::kube {

struct ClientConfig {
  std::string server;  // the URL as configured ("https://127.0.0.1:6443"), for messages
  std::string host;    // host name or IP address (IPv6 without brackets)
  std::uint16_t port = 443;
  std::string base_path;  // the URL's path prefix without a trailing slash ("" or "/k8s")
  std::string ca_pem;     // empty: the system's trust store
  std::string client_certificate_pem;
  std::string client_key_pem;
  std::string bearer_token;     // a fixed token
  std::string token_file;       // a token file, re-read when it changes (projected tokens rotate)
  std::string tls_server_name;  // overrides host for SNI and certificate verification
  bool insecure_skip_tls_verify = false;
  std::string origin;                 // "kubeconfig /root/.kube/config, context kind-a" or "in-cluster service account"
  std::string default_namespace;      // the context's (or the pod's) namespace; may be empty
  std::vector<std::string> warnings;  // to log once: insecure-skip-tls-verify in use
};

/// Reads `path` — one file, or a colon-separated list merged as kubectl merges KUBECONFIG (the
/// first file that defines a name or current-context wins) — and picks `context`, or the
/// current-context when `context` is empty. Relative file references resolve against the
/// directory of the file that names them.
/// Errors name the file and the field: unreadable or malformed YAML, no such context, a context
/// naming a missing cluster or user, a server URL that is not https://host[:port][/path],
/// invalid base64 in *-data, an unreadable referenced file, credential plugins, basic auth.
Result<ClientConfig> load_kubeconfig(std::string_view path, std::string_view context);

/// Where a pod finds its service account (overridable for tests).
struct InClusterFiles {
  std::string token = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespace_file = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
};

using Getenv = std::function<const char*(const char*)>;

/// True when KUBERNETES_SERVICE_HOST and _PORT are set and the token file exists: running in a pod.
bool in_cluster(const Getenv& getenv, const InClusterFiles& files = {});

/// The in-cluster configuration: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the
/// service account's CA, its token file (re-read as it rotates) and namespace.
/// Errors: the variables unset or malformed, the CA or token unreadable.
Result<ClientConfig> in_cluster_config(const Getenv& getenv, const InClusterFiles& files = {});

/// The API a command talks to: the kubeconfig at `path` (its `context`, else its current one)
/// when a path is given, else the pod's service account; neither is the error `missing` (the
/// command's own words).
Result<ClientConfig> kubeconfig_or_in_cluster(
    std::string_view path, std::string_view context, std::string_view missing,
    const Getenv& getenv = [](const char* name) { return std::getenv(name); }, const InClusterFiles& files = {});

/// Splits "https://host[:port][/path]" into config.host/port/base_path.
/// Errors: another scheme, no host, a port outside 1..65535, a query or fragment.
Status parse_server_url(std::string_view url, ClientConfig& config);

}  // namespace vmgate::kube
