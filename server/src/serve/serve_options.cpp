#include "vmgate/server/serve_options.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <optional>

#include "vmgate/common/options.hpp"
#include "vmgate/kube/go_duration.hpp"

namespace vmgate::serve {

namespace {

// In the order of the help.
enum class Option : std::size_t {
  listen,
  metrics_listen,
  tls_cert,
  tls_key,
  dev_cert_dir,
  client_ca,
  tls_profile,
  objects,
  kubevirt_namespace,
  kubevirt_version,
  threads,
  max_connections,
  max_body_memory,
  handshake_timeout,
  header_timeout,
  body_timeout,
  idle_timeout,
  shutdown_delay,
  grace_period,
  watch_interval,
  access_log,
  kubeconfig,
  context,
  cache_sync_timeout,
  watch_idle,
  help,
};

constexpr std::size_t index(Option option) {
  return common::option_index(option);
}

constexpr std::size_t option_count = index(Option::help) + 1;

// Keyed by Option so that the table cannot drift from the enum.
constexpr auto specs = common::option_table<Option, option_count>([](auto set) {
  set(Option::listen, {.name = "listen",
                       .value_name = "ADDR:PORT",
                       .help = "the HTTPS listener (default 0.0.0.0:8443; env PORT sets the port)."});
  set(Option::metrics_listen, {.name = "metrics-listen",
                               .value_name = "ADDR:PORT",
                               .help = "health and metrics, plain HTTP (default 0.0.0.0:8080)."});
  set(Option::tls_cert, {.name = "tls-cert",
                         .value_name = "FILE",
                         .help = "PEM certificate chain (env TLS_CERT); re-read when it changes."});
  set(Option::tls_key, {.name = "tls-key",
                        .value_name = "FILE",
                        .help = "PEM private key (env TLS_KEY); re-read when it changes.\n"
                                "Without both, a development CA and certificate for localhost are\n"
                                "generated into --dev-cert-dir and the log says so."});
  set(Option::dev_cert_dir, {.name = "dev-cert-dir",
                             .value_name = "DIR",
                             .help = "where the development certificate goes (default $TMPDIR/vmgate-dev-cert)."});
  set(Option::client_ca, {.name = "client-ca",
                          .value_name = "FILE",
                          .help = "require client certificates signed by this CA (re-read on change)."});
  set(Option::tls_profile, {.name = "tls-profile",
                            .value_name = "NAME",
                            .help = "intermediate (default: TLS 1.2 and 1.3) or modern (TLS 1.3 only)."});
  set(Option::objects, {.name = "objects",
                        .repeatable = true,
                        .value_name = "FILE|DIR",
                        .help = "the cluster: instancetypes, preferences, PVCs, DataVolumes,\n"
                                "DataSources, the KubeVirt CR (repeatable); re-read when it changes."});
  set(Option::kubevirt_namespace, {.name = "kubevirt-namespace",
                                   .non_empty = true,
                                   .value_name = "NS",
                                   .help = "KubeVirt's namespace: its service accounts count as KubeVirt,\n"
                                           "and its KubeVirt CR is the cluster configuration; a KubeVirt CR\n"
                                           "elsewhere is never read (default kubevirt)."});
  set(Option::kubevirt_version,
      {.name = "kubevirt-version", .non_empty = true, .value_name = "VERSION", .help = admission::release_option_help});
  set(Option::threads,
      {.name = "threads", .value_name = "N", .help = "I/O threads (default 0: one per CPU this process may use)."});
  set(Option::max_connections, {.name = "max-connections",
                                .value_name = "N",
                                .help = "open connections at most (default 10000); more are closed at once."});
  set(Option::max_body_memory, {.name = "max-body-memory",
                                .value_name = "SIZE",
                                .help = "request bodies held at once, all connections together (default\n"
                                        "512Mi); a request beyond it gets 503 with Retry-After."});
  set(Option::handshake_timeout,
      {.name = "handshake-timeout", .value_name = "D", .help = "TLS handshake (default 10s)."});
  set(Option::header_timeout, {.name = "header-timeout",
                               .value_name = "D",
                               .help = "from a request's first byte to its last header (default 10s)."});
  set(Option::body_timeout, {.name = "body-timeout",
                             .value_name = "D",
                             .help = "the request body, or ?timeout= when shorter (default 30s)."});
  set(Option::idle_timeout, {.name = "idle-timeout",
                             .value_name = "D",
                             .help = "keep-alive connection idle (default 120s, above the apiserver's 90s)."});
  set(Option::shutdown_delay, {.name = "shutdown-delay",
                               .value_name = "D",
                               .help = "after SIGTERM: not ready but still serving (default 5s)."});
  set(Option::grace_period,
      {.name = "grace-period", .value_name = "D", .help = "then, for in-flight requests to finish (default 25s)."});
  set(Option::watch_interval, {.name = "watch-interval",
                               .value_name = "D",
                               .help = "how often certificate and object files are checked (default 1s)."});
  set(Option::access_log, {.name = "access-log",
                           .value_name = "true|false",
                           .help = "one JSON line per admission on stderr (default true)."});
  set(Option::kubeconfig, {.name = "kubeconfig",
                           .non_empty = true,
                           .value_name = "FILE",
                           .help = "read the cluster from the Kubernetes API this kubeconfig names (a\n"
                                   "watch cache), instead of --objects. In a pod (service account\n"
                                   "mounted, KUBERNETES_SERVICE_HOST set) the API is used without it."});
  set(Option::context, {.name = "context",
                        .non_empty = true,
                        .value_name = "NAME",
                        .help = "the kubeconfig context (default: its current-context)."});
  set(Option::cache_sync_timeout, {.name = "cache-sync-timeout",
                                   .value_name = "D",
                                   .help = "how long to wait at start for the cache's first sync before serving\n"
                                           "(not ready meanwhile, and after it until synced; default 60s)."});
  set(Option::watch_idle, {.name = "watch-idle",
                           .value_name = "D",
                           .help = "restart a watch that brought no event or bookmark for this long\n"
                                   "(default 150s; the API server sends a bookmark about every minute)."});
  set(Option::help, {.name = "help", .flag = true, .help = "print this help."});
});
static_assert(common::every_option_declared(specs), "every Option is declared");

// The options stored as given; parse_serve_options() checks the others.
constexpr std::array fields{
    common::bind_option(Option::tls_cert, &ServeOptions::tls_cert),
    common::bind_option(Option::tls_key, &ServeOptions::tls_key),
    common::bind_option(Option::client_ca, &ServeOptions::client_ca),
    common::bind_option(Option::dev_cert_dir, &ServeOptions::dev_cert_dir),
    common::bind_option(Option::objects, &ServeOptions::objects),
    common::bind_option(Option::kubeconfig, &ServeOptions::kubeconfig),
    common::bind_option(Option::context, &ServeOptions::context),
    common::bind_option(Option::kubevirt_namespace, &ServeOptions::kubevirt_namespace),
    common::bind_option(Option::help, &ServeOptions::help),
};

template <class Number>
std::optional<Number> parse_number(std::string_view text) {
  Number value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return value;
}

// "1048576", "512Ki", "512Mi", "1Gi".
std::optional<std::size_t> parse_byte_size(std::string_view text) {
  unsigned shift = 0;
  for (const auto& [suffix, bits] : {std::pair{"Ki", 10U}, std::pair{"Mi", 20U}, std::pair{"Gi", 30U}}) {
    if (text.ends_with(suffix)) {
      text.remove_suffix(2);
      shift = bits;
      break;
    }
  }
  const std::optional<std::size_t> count = parse_number<std::size_t>(text);
  if (!count || *count > (std::numeric_limits<std::size_t>::max() >> shift)) {
    return std::nullopt;
  }
  return *count << shift;
}

std::chrono::milliseconds& duration_field(ServeOptions& options, Option option) {
  switch (option) {
    case Option::watch_interval:
      return options.watch_interval;
    case Option::shutdown_delay:
      return options.shutdown_delay;
    case Option::grace_period:
      return options.grace_period;
    case Option::handshake_timeout:
      return options.handshake_timeout;
    case Option::header_timeout:
      return options.header_timeout;
    case Option::body_timeout:
      return options.body_timeout;
    case Option::cache_sync_timeout:
      return options.cache_sync_timeout;
    case Option::watch_idle:
      return options.watch_idle;
    default:
      return options.idle_timeout;
  }
}

bool is_ip_literal(const std::string& host) {
  std::array<unsigned char, 16> buffer{};
  return ::inet_pton(AF_INET, host.c_str(), buffer.data()) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buffer.data()) == 1;
}

constexpr common::CommandSyntax<ServeOptions> syntax{"serve", specs, fields};

Status apply_option(ServeOptions& options, Option option, std::string_view value) {
  const std::string_view name = specs[common::option_index(option)].name;
  const std::string text(value);
  switch (option) {
    case Option::listen:
    case Option::metrics_listen: {
      Result<ListenAddress> address = parse_listen_address(text);
      if (!address) {
        return Error{"--" + std::string(name) + ": " + address.error().message};
      }
      (option == Option::listen ? options.listen : options.metrics_listen) = *address;
      break;
    }
    case Option::tls_profile:
      if (text == "intermediate") {
        options.tls_profile = TlsProfile::intermediate;
      } else if (text == "modern") {
        options.tls_profile = TlsProfile::modern;
      } else {
        return Error{"--tls-profile: \"" + text + "\" is not intermediate (TLS 1.2+) or modern (TLS 1.3)"};
      }
      break;
    case Option::threads: {
      const std::optional<unsigned> threads = parse_number<unsigned>(text);
      if (!threads || *threads > 1024) {
        return Error{"--threads: \"" + text + "\" is not a number from 0 (one per CPU) to 1024"};
      }
      options.threads = *threads;
      break;
    }
    case Option::max_connections: {
      const std::optional<std::size_t> count = parse_number<std::size_t>(text);
      if (!count || *count == 0) {
        return Error{"--max-connections: \"" + text + "\" is not a positive number"};
      }
      options.max_connections = *count;
      break;
    }
    case Option::max_body_memory: {
      const std::optional<std::size_t> bytes = parse_byte_size(text);
      if (!bytes || *bytes == 0) {
        return Error{"--max-body-memory: \"" + text + "\" is not a positive size (bytes, or with Ki, Mi or Gi)"};
      }
      options.max_body_memory = *bytes;
      break;
    }
    case Option::kubevirt_version:
      return admission::set_release_option(options.release, text);
    case Option::access_log:
      if (text != "true" && text != "false") {
        return Error{"--access-log: \"" + text + "\" is not true or false"};
      }
      options.access_log = text == "true";
      break;
    case Option::watch_interval:
    case Option::cache_sync_timeout:
    case Option::watch_idle:
    case Option::shutdown_delay:
    case Option::grace_period:
    case Option::handshake_timeout:
    case Option::header_timeout:
    case Option::body_timeout:
    case Option::idle_timeout: {
      const bool zero_allowed =
          option == Option::shutdown_delay || option == Option::grace_period || option == Option::cache_sync_timeout;
      Result<std::chrono::nanoseconds> duration = kube::parse_duration_option(name, text, zero_allowed);
      if (!duration) {
        return duration.error();
      }
      duration_field(options, option) = std::chrono::ceil<std::chrono::milliseconds>(*duration);
      break;
    }
    default:  // stored above
      break;
  }
  return Ok{};
}

}  // namespace

std::string ListenAddress::str() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return Error{"\"" + std::string(text) + "\" is not ADDR:PORT"};
  }
  std::string host(text.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (host.find(':') == std::string::npos) {
      return Error{"\"" + std::string(text) + "\": only IPv6 addresses go in brackets"};
    }
  } else if (host.find(':') != std::string::npos) {
    return Error{"\"" + std::string(text) + "\": write an IPv6 address in brackets, as [::1]:8443"};
  }
  if (host.empty()) {
    host = "0.0.0.0";
  }
  if (!is_ip_literal(host)) {
    return Error{"\"" + std::string(text) + "\": the address must be an IP address, not \"" + host + "\""};
  }
  const std::optional<std::uint16_t> port = parse_number<std::uint16_t>(text.substr(colon + 1));
  if (!port) {
    return Error{"\"" + std::string(text) + "\": the port must be a number from 0 to 65535"};
  }
  return ListenAddress{std::move(host), *port};
}

Result<ServeOptions> parse_serve_options(std::span<const std::string_view> args, const Environment& environment) {
  ServeOptions options;
  Result<common::ParsedArgs> parsed = common::parse_command_line(args, syntax, options, apply_option);
  if (!parsed) {
    return parsed.error();
  }
  if (options.help) {
    return options;
  }
  if (!options.kubeconfig.empty() && !options.objects.empty()) {
    return Error{"--kubeconfig and --objects are two sources of the cluster: give one"};
  }
  if (!options.context.empty() && options.kubeconfig.empty()) {
    return Error{"--context needs --kubeconfig"};
  }
  // The benchmark harness's contract (docs/webhook.md, "Environment for the benchmark harness"): PORT,
  // TLS_CERT, TLS_KEY.
  if (!parsed->has(index(Option::listen))) {
    if (const char* port = environment ? environment("PORT") : nullptr; port != nullptr && *port != '\0') {
      const std::optional<std::uint16_t> number = parse_number<std::uint16_t>(port);
      if (!number) {
        return Error{"environment PORT=\"" + std::string(port) + "\" is not a port number"};
      }
      options.listen = ListenAddress{"0.0.0.0", *number};
    }
  }
  if (options.tls_cert.empty() && options.tls_key.empty() && environment) {
    const char* cert = environment("TLS_CERT");
    const char* key = environment("TLS_KEY");
    options.tls_cert = cert != nullptr ? cert : "";
    options.tls_key = key != nullptr ? key : "";
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return Error{options.tls_cert.empty() ? "--tls-key needs --tls-cert" : "--tls-cert needs --tls-key"};
  }
  if (!options.client_ca.empty() && options.tls_cert.empty()) {
    return Error{"--client-ca needs --tls-cert and --tls-key (a generated development certificate is for local use)"};
  }
  return options;
}

std::string serve_usage() {
  return R"(Usage: vmgate serve [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE] [--client-ca FILE]
                    [--objects FILE|DIR... | --kubeconfig FILE [--context NAME]]
                    [--metrics-listen ADDR:PORT] [--threads N] [options]

Serves KubeVirt's VirtualMachine and VirtualMachineInstance admission webhooks over HTTPS
(AdmissionReview v1, HTTP/1.1), as kube-apiserver calls them:
  POST /virtualmachines-mutate            POST /virtualmachineinstances-mutate
  POST /virtualmachines-validate          POST /virtualmachineinstances-validate
and GET /healthz, /livez, /readyz and /metrics (Prometheus) over plain HTTP on the metrics port.

Options:
)" + common::format_options(specs) +
         R"(Durations are Go-style: 500ms, 10s, 2m.

Bodies above 8 MiB get 413, headers above 16 KiB 431. SIGTERM or SIGINT: /readyz fails,
requests are still served for the shutdown delay, then the listener closes, in-flight requests
finish (answered with Connection: close) and vmgate exits 0.
)";
}

}  // namespace vmgate::serve
