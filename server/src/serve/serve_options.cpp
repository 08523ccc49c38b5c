#include "vmgate/server/serve_options.hpp"

#include <arpa/inet.h>

#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <set>
#include <utility>

#include "vmgate/server/go_duration.hpp"

namespace vmgate::serve {

namespace {

enum class Option {
  listen,
  metrics_listen,
  tls_cert,
  tls_key,
  client_ca,
  dev_cert_dir,
  tls_profile,
  objects,
  kubeconfig,
  kubevirt_namespace,
  threads,
  watch_interval,
  shutdown_delay,
  grace_period,
  handshake_timeout,
  header_timeout,
  body_timeout,
  idle_timeout,
  max_connections,
  max_body_memory,
  access_log,
  help,
};

struct OptionSpec {
  Option option;
  std::string_view name;  // without "--"
  bool takes_value;
};

constexpr std::array<OptionSpec, 22> specs{{
    {Option::listen, "listen", true},
    {Option::metrics_listen, "metrics-listen", true},
    {Option::tls_cert, "tls-cert", true},
    {Option::tls_key, "tls-key", true},
    {Option::client_ca, "client-ca", true},
    {Option::dev_cert_dir, "dev-cert-dir", true},
    {Option::tls_profile, "tls-profile", true},
    {Option::objects, "objects", true},
    {Option::kubeconfig, "kubeconfig", true},
    {Option::kubevirt_namespace, "kubevirt-namespace", true},
    {Option::threads, "threads", true},
    {Option::watch_interval, "watch-interval", true},
    {Option::shutdown_delay, "shutdown-delay", true},
    {Option::grace_period, "grace-period", true},
    {Option::handshake_timeout, "handshake-timeout", true},
    {Option::header_timeout, "header-timeout", true},
    {Option::body_timeout, "body-timeout", true},
    {Option::idle_timeout, "idle-timeout", true},
    {Option::max_connections, "max-connections", true},
    {Option::max_body_memory, "max-body-memory", true},
    {Option::access_log, "access-log", true},
    {Option::help, "help", false},
}};

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

Result<std::chrono::milliseconds> parse_milliseconds(std::string_view name, std::string_view text) {
  Result<std::chrono::nanoseconds> parsed = parse_go_duration(text);
  if (!parsed) {
    return Error{"--" + std::string(name) + ": " + parsed.error().message + " (e.g. 10s, 500ms, 2m)"};
  }
  return std::chrono::ceil<std::chrono::milliseconds>(*parsed);
}

bool is_ip_literal(const std::string& host) {
  std::array<unsigned char, 16> buffer{};
  return ::inet_pton(AF_INET, host.c_str(), buffer.data()) == 1 ||
         ::inet_pton(AF_INET6, host.c_str(), buffer.data()) == 1;
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
  std::set<Option> seen;
  std::optional<std::string> kubeconfig;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (!arg.starts_with("--")) {
      return Error{"unexpected argument \"" + std::string(arg) + "\" (serve takes only options)"};
    }
    std::string_view name = arg.substr(2);
    std::optional<std::string_view> value;
    if (const std::size_t equals = name.find('='); equals != std::string_view::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& candidate : specs) {
      if (candidate.name == name) {
        spec = &candidate;
      }
    }
    if (spec == nullptr) {
      return Error{"unknown option --" + std::string(name)};
    }
    if (!spec->takes_value && value) {
      return Error{"--" + std::string(name) + " takes no value"};
    }
    if (spec->takes_value && !value) {
      if (i + 1 >= args.size()) {
        return Error{"--" + std::string(name) + " needs a value"};
      }
      value = args[++i];
    }
    if (spec->option != Option::objects && !seen.insert(spec->option).second) {
      return Error{"--" + std::string(name) + " given more than once"};
    }
    const std::string text(value.value_or(""));
    switch (spec->option) {
      case Option::listen:
      case Option::metrics_listen: {
        Result<ListenAddress> address = parse_listen_address(text);
        if (!address) {
          return Error{"--" + std::string(name) + ": " + address.error().message};
        }
        (spec->option == Option::listen ? options.listen : options.metrics_listen) = *address;
        break;
      }
      case Option::tls_cert:
        options.tls_cert = text;
        break;
      case Option::tls_key:
        options.tls_key = text;
        break;
      case Option::client_ca:
        options.client_ca = text;
        break;
      case Option::dev_cert_dir:
        options.dev_cert_dir = text;
        break;
      case Option::tls_profile:
        if (text == "intermediate") {
          options.tls_profile = TlsProfile::intermediate;
        } else if (text == "modern") {
          options.tls_profile = TlsProfile::modern;
        } else {
          return Error{"--tls-profile: \"" + text + "\" is not intermediate (TLS 1.2+) or modern (TLS 1.3)"};
        }
        break;
      case Option::objects:
        options.objects.push_back(text);
        break;
      case Option::kubeconfig:
        kubeconfig = text;
        break;
      case Option::kubevirt_namespace:
        if (text.empty()) {
          return Error{"--kubevirt-namespace must not be empty"};
        }
        options.kubevirt_namespace = text;
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
      case Option::access_log:
        if (text != "true" && text != "false") {
          return Error{"--access-log: \"" + text + "\" is not true or false"};
        }
        options.access_log = text == "true";
        break;
      case Option::help:
        options.help = true;
        break;
      case Option::watch_interval:
      case Option::shutdown_delay:
      case Option::grace_period:
      case Option::handshake_timeout:
      case Option::header_timeout:
      case Option::body_timeout:
      case Option::idle_timeout: {
        Result<std::chrono::milliseconds> duration = parse_milliseconds(name, text);
        if (!duration) {
          return duration.error();
        }
        const bool zero_allowed = spec->option == Option::shutdown_delay || spec->option == Option::grace_period;
        if (duration->count() == 0 && !zero_allowed) {
          return Error{"--" + std::string(name) + " must be longer than 0"};
        }
        switch (spec->option) {
          case Option::watch_interval:
            options.watch_interval = *duration;
            break;
          case Option::shutdown_delay:
            options.shutdown_delay = *duration;
            break;
          case Option::grace_period:
            options.grace_period = *duration;
            break;
          case Option::handshake_timeout:
            options.handshake_timeout = *duration;
            break;
          case Option::header_timeout:
            options.header_timeout = *duration;
            break;
          case Option::body_timeout:
            options.body_timeout = *duration;
            break;
          default:
            options.idle_timeout = *duration;
            break;
        }
        break;
      }
    }
  }
  if (options.help) {
    return options;
  }
  if (kubeconfig) {
    return Error{
        "--kubeconfig: the Kubernetes API client is not part of this build yet; serve the cluster "
        "from manifest files with --objects DIR"};
  }
  // The benchmark harness's contract (docs/webhook.md, "Environment for the benchmark harness"): PORT,
  // TLS_CERT, TLS_KEY.
  if (seen.count(Option::listen) == 0) {
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

std::string_view serve_usage() {
  return R"(Usage: vmgate serve [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE] [--client-ca FILE]
                    [--objects FILE|DIR]... [--metrics-listen ADDR:PORT] [--threads N] [options]

Serves KubeVirt's VirtualMachine and VirtualMachineInstance admission webhooks over HTTPS
(AdmissionReview v1, HTTP/1.1), as kube-apiserver calls them:
  POST /virtualmachines-mutate            POST /virtualmachineinstances-mutate
  POST /virtualmachines-validate          POST /virtualmachineinstances-validate
and GET /healthz, /livez, /readyz and /metrics (Prometheus) over plain HTTP on the metrics port.

Options:
  --listen ADDR:PORT          the HTTPS listener (default 0.0.0.0:8443; env PORT sets the port).
  --metrics-listen ADDR:PORT  health and metrics, plain HTTP (default 0.0.0.0:8080).
  --tls-cert FILE             PEM certificate chain (env TLS_CERT); re-read when it changes.
  --tls-key FILE              PEM private key (env TLS_KEY); re-read when it changes.
                              Without both, a development CA and certificate for localhost are
                              generated into --dev-cert-dir and the log says so.
  --dev-cert-dir DIR          where the development certificate goes (default $TMPDIR/vmgate-dev-cert).
  --client-ca FILE            require client certificates signed by this CA (re-read on change).
  --tls-profile NAME          intermediate (default: TLS 1.2 and 1.3) or modern (TLS 1.3 only).
  --objects FILE|DIR          the cluster: instancetypes, preferences, PVCs, DataVolumes,
                              DataSources, the KubeVirt CR (repeatable); re-read when it changes.
  --kubevirt-namespace NS     KubeVirt's namespace; its service accounts count as KubeVirt
                              (default kubevirt).
  --threads N                 I/O threads (default 0: one per CPU this process may use).
  --max-connections N         open connections at most (default 10000); more are closed at once.
  --max-body-memory SIZE      request bodies held at once, all connections together (default
                              512Mi); a request beyond it gets 503 with Retry-After.
  --handshake-timeout D       TLS handshake (default 10s).
  --header-timeout D          from a request's first byte to its last header (default 10s).
  --body-timeout D            the request body, or ?timeout= when shorter (default 30s).
  --idle-timeout D            keep-alive connection idle (default 120s, above the apiserver's 90s).
  --shutdown-delay D          after SIGTERM: not ready but still serving (default 5s).
  --grace-period D            then, for in-flight requests to finish (default 25s).
  --watch-interval D          how often certificate and object files are checked (default 1s).
  --access-log true|false     one JSON line per admission on stderr (default true).
  --kubeconfig FILE           not available yet: the Kubernetes API client comes in a later release.
  --help                      print this help.
Durations are Go-style: 500ms, 10s, 2m.

Bodies above 8 MiB get 413, headers above 16 KiB 431. SIGTERM or SIGINT: /readyz fails,
requests are still served for the shutdown delay, then the listener closes, in-flight requests
finish (answered with Connection: close) and vmgate exits 0.
)";
}

}  // namespace vmgate::serve
