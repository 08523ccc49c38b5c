#include "vmgate/server/certs_options.hpp"

#include <array>

#include "vmgate/admission/validation/dns1123.hpp"
#include "vmgate/common/options.hpp"
#include "vmgate/kube/go_duration.hpp"

namespace vmgate::certs {

namespace {

// In the order of the help.
enum class Option : std::size_t {
  namespace_name,
  service,
  secret,
  mutating,
  validating,
  cluster_domain,
  ca_duration,
  cert_duration,
  renew_before,
  write_dir,
  once,
  check_interval,
  force_renew,
  kubeconfig,
  context,
  help,
};

constexpr std::size_t option_count = common::option_index(Option::help) + 1;

constexpr auto specs = common::option_table<Option, option_count>([](auto set) {
  set(Option::namespace_name,
      {.name = "namespace", .value_name = "NS", .help = "the namespace of the Service and the Secret (required)."});
  set(Option::service, {.name = "service",
                        .value_name = "NAME",
                        .help = "the webhook's Service: the certificate is for NAME, NAME.NS, NAME.NS.svc\n"
                                "and NAME.NS.svc.DOMAIN (required)."});
  set(Option::secret, {.name = "secret",
                       .value_name = "NAME",
                       .help = "the Secret holding the CA, the serving pair and the CA bundle\n"
                               "(required; created when missing and RBAC allows)."});
  set(Option::mutating, {.name = "mutating-webhook-configuration",
                         .repeatable = true,
                         .value_name = "NAME",
                         .help = "a MutatingWebhookConfiguration whose caBundles are kept (repeatable)."});
  set(Option::validating, {.name = "validating-webhook-configuration",
                           .repeatable = true,
                           .value_name = "NAME",
                           .help = "a ValidatingWebhookConfiguration whose caBundles are kept (repeatable)."});
  set(Option::cluster_domain,
      {.name = "cluster-domain", .value_name = "DOMAIN", .help = "the cluster's DNS domain (default cluster.local)."});
  set(Option::ca_duration, {.name = "ca-duration", .value_name = "D", .help = "the CA's validity (default 8760h)."});
  set(Option::cert_duration, {.name = "cert-duration",
                              .value_name = "D",
                              .help = "the serving certificate's validity (default 2160h; at most --ca-duration)."});
  set(Option::renew_before, {.name = "renew-before",
                             .value_name = "D",
                             .help = "renew when the certificate or the CA expires within D (default 720h;\n"
                                     "shorter than both durations)."});
  set(Option::write_dir, {.name = "write-dir",
                          .non_empty = true,
                          .value_name = "DIR",
                          .help = "keep DIR/tls.crt, DIR/tls.key and DIR/ca.crt equal to the Secret's\n"
                                  "serving pair, swapped at once through a ..data symlink as the kubelet\n"
                                  "swaps a mounted Secret."});
  set(Option::once, {.name = "once",
                     .flag = true,
                     .help = "reconcile until the serving pair is valid and written, then exit (0 done,\n"
                             "1 failed, with the reason); an init container."});
  set(Option::check_interval, {.name = "check-interval",
                               .value_name = "D",
                               .help = "without --once, reconcile this often (default 1m); SIGTERM exits 0."});
  set(Option::force_renew, {.name = "force-renew", .flag = true, .help = "start a renewal now although none is due."});
  set(Option::kubeconfig, {.name = "kubeconfig",
                           .non_empty = true,
                           .value_name = "FILE",
                           .help = "the Kubernetes API of this kubeconfig (default: the pod's service\n"
                                   "account)."});
  set(Option::context, {.name = "context",
                        .non_empty = true,
                        .value_name = "NAME",
                        .help = "the kubeconfig context (default: its current-context)."});
  set(Option::help, {.name = "help", .flag = true, .help = "print this help."});
});
static_assert(common::every_option_declared(specs), "every Option is declared");

// The options stored as given; parse_certs_options() checks the others.
constexpr std::array fields{
    common::bind_option(Option::write_dir, &CertsOptions::write_dir),
    common::bind_option(Option::kubeconfig, &CertsOptions::kubeconfig),
    common::bind_option(Option::context, &CertsOptions::context),
    common::bind_option(Option::once, &CertsOptions::once),
    common::bind_option(Option::force_renew, &CertsOptions::force_renew),
    common::bind_option(Option::help, &CertsOptions::help),
};

// What Kubernetes accepts as a Service or namespace name (a DNS-1123 label) and as a Secret or
// configuration name (a DNS-1123 subdomain).
bool is_label(std::string_view text) {
  return admission::validation::dns1123_label_errors(text).empty();
}

bool is_subdomain(std::string_view text) {
  return admission::validation::dns1123_subdomain_errors(text).empty();
}

constexpr common::CommandSyntax<CertsOptions> syntax{"certs", specs, fields};

Status apply_option(CertsOptions& options, Option option, std::string_view value) {
  const std::string name(specs[common::option_index(option)].name);
  const std::string text(value);
  auto subdomain = [&](std::string& field) -> Status {
    if (!is_subdomain(text)) {
      std::string message = "--" + name;
      message += ": \"" + text;
      message += "\" is not a Kubernetes name (lower-case letters, digits, '-', '.')";
      return Error{message};
    }
    field = text;
    return Ok{};
  };
  Status status = Ok{};
  switch (option) {
    case Option::namespace_name:
      if (!is_label(text)) {
        return Error{"--namespace: \"" + text + "\" is not a namespace name (lower-case letters, digits, '-')"};
      }
      options.namespace_name = text;
      break;
    case Option::service:
      if (!is_label(text)) {
        return Error{"--service: \"" + text + "\" is not a Service name (lower-case letters, digits, '-')"};
      }
      options.service = text;
      break;
    case Option::secret:
      status = subdomain(options.secret);
      break;
    case Option::mutating:
      status = subdomain(options.mutating.emplace_back());
      break;
    case Option::validating:
      status = subdomain(options.validating.emplace_back());
      break;
    case Option::cluster_domain:
      status = subdomain(options.cluster_domain);
      break;
    case Option::ca_duration:
    case Option::cert_duration:
    case Option::renew_before:
    case Option::check_interval: {
      Result<std::chrono::nanoseconds> duration = kube::parse_duration_option(name, text, false);
      if (!duration) {
        return duration.error();
      }
      if (option == Option::check_interval) {
        options.check_interval = std::chrono::ceil<std::chrono::milliseconds>(*duration);
      } else {
        const auto seconds = std::chrono::ceil<std::chrono::seconds>(*duration);
        (option == Option::ca_duration     ? options.ca_duration
         : option == Option::cert_duration ? options.cert_duration
                                           : options.renew_before) = seconds;
      }
      break;
    }
    default:  // stored above
      break;
  }
  return status;
}

}  // namespace

Result<CertsOptions> parse_certs_options(std::span<const std::string_view> args) {
  CertsOptions options;
  Result<common::ParsedArgs> parsed = common::parse_command_line(args, syntax, options, apply_option);
  if (!parsed) {
    return parsed.error();
  }
  if (options.help) {
    return options;
  }
  for (const auto& [field, option] :
       {std::pair{&options.namespace_name, "--namespace"}, std::pair{&options.service, "--service"},
        std::pair{&options.secret, "--secret"}}) {
    if (field->empty()) {
      return Error{std::string(option) + " is required"};
    }
  }
  if (options.cert_duration > options.ca_duration) {
    return Error{"--cert-duration must not be longer than --ca-duration (a certificate cannot outlive its CA)"};
  }
  if (options.renew_before >= options.cert_duration) {
    return Error{"--renew-before must be shorter than --cert-duration (else every check renews)"};
  }
  if (options.renew_before >= options.ca_duration) {
    return Error{"--renew-before must be shorter than --ca-duration (else every check renews)"};
  }
  if (!options.context.empty() && options.kubeconfig.empty()) {
    return Error{"--context needs --kubeconfig"};
  }
  return options;
}

std::string certs_usage() {
  return "vmgate certs: keep a self-managed CA and serving certificate for vmgate's webhooks in a Secret,\n"
         "the CA bundle in the webhook configurations, and (with --write-dir) the serving pair on disk.\n"
         "A renewal publishes the new CA beside the old one, switches the serving pair only once every\n"
         "configuration trusts both, and drops the old CA only once every endpoint serves the new\n"
         "certificate: no request fails (docs/certificates.md).\n"
         "\n"
         "Usage:\n"
         "  vmgate certs --namespace NS --service NAME --secret NAME [options]\n"
         "\n"
         "Options:\n" +
         common::format_options(specs) +
         "\n"
         "Durations are Go durations: 10s, 5m, 720h. Logs are JSON lines on stderr.\n";
}

}  // namespace vmgate::certs
