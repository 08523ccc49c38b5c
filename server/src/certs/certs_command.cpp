#include "vmgate/server/certs_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <thread>

#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/api_command.hpp"
#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/command_frame.hpp"
#include "vmgate/kube/log_line.hpp"
#include "vmgate/kube/stop_signal.hpp"
#include "vmgate/server/certs_objects.hpp"
#include "vmgate/server/certs_options.hpp"
#include "vmgate/server/certs_plan.hpp"
#include "vmgate/server/certs_probe.hpp"
#include "vmgate/server/certs_write_dir.hpp"
#include "vmgate/server/tls.hpp"

namespace vmgate::certs {

namespace {

using namespace std::chrono_literals;
using Fields = std::vector<std::pair<std::string, std::string>>;

constexpr int exit_failed = 1;
constexpr auto api_deadline = 15s;
constexpr auto probe_timeout = 3s;
// Steps one pass may take: a whole rotation is about six; more means no progress.
constexpr int max_steps = 24;
// After the new CA is in every configuration and before the serving pair switches: kube-apiserver
// sees configurations through an informer (a watch, usually milliseconds behind); a leaf served
// before the apiserver's copy trusts its CA would fail admissions.
constexpr auto propagation_delay = 2s;

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

using Log = kube::EventLog;

std::string joined(const std::vector<std::string>& parts, std::string_view separator = "; ") {
  std::string text;
  for (const std::string& part : parts) {
    text += (text.empty() ? "" : std::string(separator)) + part;
  }
  return text;
}

// What the API said, in words that name what was asked: a 403 names the verb and the
// resource, which is what a missing RBAC rule needs to be fixed.
Error api_error(std::string_view verb, std::string_view resource, std::string_view name,
                std::string_view namespace_name, const kube::HttpResponse& response) {
  std::string what = std::string(verb) + " " + std::string(resource);
  if (!name.empty()) {
    what += " \"" + std::string(name) + "\"";
  }
  if (!namespace_name.empty()) {
    what += " in namespace " + std::string(namespace_name);
  }
  if (response.status == 403) {
    return Error{"forbidden: cannot " + what + " (RBAC: the Role or ClusterRole of vmgate certs lacks verb \"" +
                 std::string(verb) + "\" on " + std::string(resource) + "): " + kube::status_message(response)};
  }
  return Error{"cannot " + what + ": HTTP " + std::to_string(response.status) + ": " + kube::status_message(response)};
}

struct Snapshot {
  std::optional<SecretObject> secret;  // nullopt: not found
  std::vector<WebhookConfiguration> configurations;
};

enum class PassEnd { steady, waiting };

struct PassResult {
  PassEnd end = PassEnd::steady;
  std::string reason;
  bool pair_written = false;  // the Secret's serving pair is valid and in --write-dir (when given)
};

class Reconciler {
 public:
  // `sleep` waits (interruptibly) and says whether to go on.
  Reconciler(kube::ApiConnection& api, const CertsOptions& options, Log& log,
             std::function<bool(std::chrono::milliseconds)> sleep)
      : api_(api), options_(options), log_(log), sleep_(std::move(sleep)) {
    settings_.service = options.service;
    settings_.namespace_name = options.namespace_name;
    settings_.cluster_domain = options.cluster_domain;
    settings_.ca_duration = options.ca_duration.count();
    settings_.cert_duration = options.cert_duration.count();
    settings_.renew_before = options.renew_before.count();
    settings_.force_renew = options.force_renew;
  }

  Result<PassResult> pass() {
    PassResult result;
    for (int steps = 0; steps < max_steps; ++steps) {
      Result<Snapshot> snapshot = read();
      if (!snapshot) {
        return snapshot.error();
      }
      Result<bool> written = write_dir(*snapshot);
      if (!written) {
        return written.error();
      }
      result.pair_written = *written;
      PlanInput input;
      input.now = unix_now();
      input.settings = settings_;
      if (snapshot->secret) {
        input.secret = snapshot->secret->state;
      }
      input.configurations = snapshot->configurations;
      Step step = plan(input);
      if (step.action == Action::issue) {
        Result<FreshPair> fresh = issue(step.names);
        if (!fresh) {
          return fresh.error();
        }
        input.fresh = std::move(fresh.value());
        step = plan(input);
      }
      if (step.action == Action::probe) {
        input.probe = probe(snapshot->configurations, step.probe_ca);
        step = plan(input);
      }
      if (!step.problems.empty() && step.action != Action::steady) {
        log_("warning", "the Secret needs repair", {{"secret", options_.secret}, {"problems", joined(step.problems)}});
      }
      switch (step.action) {
        case Action::steady:
          return PassResult{PassEnd::steady, step.reason, result.pair_written};
        case Action::wait:
          log_("info", step.event.empty() ? "waiting" : step.event, {{"reason", step.reason}});
          return PassResult{PassEnd::waiting, step.reason, result.pair_written};
        case Action::issue:
        case Action::probe:
          return Error{"internal error: the planner asked for " +
                       std::string(step.action == Action::issue ? "a pair" : "a probe") + " twice"};
        case Action::write_secret: {
          Result<bool> stored = write_secret(*snapshot, step);
          if (!stored) {
            return stored.error();
          }
          if (*stored && step.starts_rotation) {
            settings_.force_renew = false;  // used up
          }
          break;
        }
        case Action::patch_webhooks: {
          Status patched = patch_webhooks(*snapshot, step);
          if (!patched) {
            return patched.error();
          }
          if (step.settle && !sleep_(propagation_delay)) {
            return Error{"stopped"};
          }
          break;
        }
      }
    }
    return Error{"no steady state after " + std::to_string(max_steps) +
                 " steps: something keeps changing the Secret or the webhook configurations"};
  }

  void cancel() { api_.cancel(); }

 private:
  std::string secret_path() const {
    return "/api/v1/namespaces/" + options_.namespace_name + "/secrets/" + options_.secret;
  }

  static std::string configuration_path(ConfigurationKind kind, const std::string& name) {
    return std::string("/apis/admissionregistration.k8s.io/v1/") +
           (kind == ConfigurationKind::mutating ? "mutatingwebhookconfigurations/"
                                                : "validatingwebhookconfigurations/") +
           name;
  }

  static std::string resource_of(ConfigurationKind kind) {
    return kind == ConfigurationKind::mutating ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations";
  }

  Result<kube::HttpResponse> call(std::string_view method, const std::string& target, std::string_view body = {},
                                  std::string_view content_type = {}) {
    auto response = api_.request(method, target, body, content_type, api_deadline);
    if (!response) {
      return Error{response.error().message};
    }
    return std::move(response.value());
  }

  Result<Snapshot> read() {
    Snapshot snapshot;
    Result<kube::HttpResponse> secret = call("GET", secret_path());
    if (!secret) {
      return secret.error();
    }
    if (secret->status == 200) {
      Result<SecretObject> parsed = read_secret(secret->body, "Secret " + options_.secret);
      if (!parsed) {
        return parsed.error();
      }
      snapshot.secret = std::move(parsed.value());
    } else if (secret->status != 404) {
      return api_error("get", "secrets", options_.secret, options_.namespace_name, *secret);
    }
    for (const auto& [kind, names] : {std::pair{ConfigurationKind::mutating, &options_.mutating},
                                      std::pair{ConfigurationKind::validating, &options_.validating}}) {
      for (const std::string& name : *names) {
        Result<kube::HttpResponse> got = call("GET", configuration_path(kind, name));
        if (!got) {
          return got.error();
        }
        if (got->status != 200) {
          return api_error("get", resource_of(kind), name, "", *got);
        }
        Result<WebhookConfiguration> parsed = read_configuration(got->body, kind, resource_of(kind) + "/" + name);
        if (!parsed) {
          return parsed.error();
        }
        snapshot.configurations.push_back(std::move(parsed.value()));
      }
    }
    return snapshot;
  }

  // Keeps --write-dir equal to the Secret's serving pair when that pair is valid; true when the
  // directory now holds it.
  Result<bool> write_dir(const Snapshot& snapshot) {
    if (!snapshot.secret) {
      return false;
    }
    const std::map<std::string, std::string>& data = snapshot.secret->state.data;
    const auto value = [&](const char* name) {
      const auto found = data.find(name);
      return found == data.end() ? std::string() : found->second;
    };
    Result<Certificate> ca = parse_certificate(value(key::ca_crt), key::ca_crt);
    Result<Certificate> leaf = parse_certificate(value(key::tls_crt), key::tls_crt);
    if (!ca || !leaf || !check_key(*leaf, value(key::tls_key), key::tls_key) || !signed_by(*leaf, *ca)) {
      return false;  // never a broken pair on disk: serve keeps what it has
    }
    if (options_.write_dir.empty()) {
      return true;
    }
    Result<bool> swapped = write_atomically(
        options_.write_dir,
        {{key::tls_crt, value(key::tls_crt)}, {key::tls_key, value(key::tls_key)}, {key::ca_crt, value(key::ca_crt)}});
    if (!swapped) {
      return swapped.error();
    }
    if (*swapped) {
      log_("info", "write-dir updated",
           {{"dir", options_.write_dir},
            {"subject", leaf->subject},
            {"not_after", std::to_string(leaf->not_after)},
            {"issuer_ca", ca->subject}});
    }
    return true;
  }

  Result<FreshPair> issue(const SubjectNames& names) {
    const std::string service_dns = options_.service + "." + options_.namespace_name + ".svc";
    Result<serve::tls::Authority> authority =
        serve::tls::make_authority("vmgate-ca@" + std::to_string(unix_now()), options_.ca_duration);
    if (!authority) {
      return Error{"cannot issue a CA: " + authority.error().message};
    }
    Result<serve::tls::IssuedCertificate> leaf = serve::tls::issue_certificate(
        *authority, service_dns, names.dns, names.ip, std::min(options_.cert_duration, options_.ca_duration),
        serve::tls::KeyUsage::server);
    if (!leaf) {
      return Error{"cannot issue the serving certificate: " + leaf.error().message};
    }
    Result<std::string> ca_key = serve::tls::private_key_pem(*authority->key);
    if (!ca_key) {
      return Error{"cannot write the CA key: " + ca_key.error().message};
    }
    return FreshPair{serve::tls::certificate_pem(*authority->certificate), std::move(ca_key.value()),
                     leaf->certificate_pem, leaf->private_key_pem};
  }

  // Every endpoint the apiserver may call: each url, and the ready addresses of each Service.
  std::vector<ProbeResult> probe(const std::vector<WebhookConfiguration>& configurations, const std::string& ca) {
    std::vector<ProbeTarget> targets;
    std::vector<ProbeResult> results;
    auto add = [&](ProbeTarget target) {
      for (const ProbeTarget& known : targets) {
        if (known.host == target.host && known.port == target.port && known.server_name == target.server_name) {
          return;
        }
      }
      targets.push_back(std::move(target));
    };
    std::vector<std::string> services_done;
    std::vector<std::string> services;  // for the log: "ns/name:port: N ready"
    for (const WebhookConfiguration& configuration : configurations) {
      for (const Webhook& webhook : configuration.webhooks) {
        if (!webhook.url.empty()) {
          Result<ProbeTarget> target = url_target(webhook.url);
          if (!target) {
            results.push_back(ProbeResult{webhook.url, false, target.error().message});
            continue;
          }
          target->endpoint = target->host + ":" + std::to_string(target->port);
          add(std::move(target.value()));
          continue;
        }
        if (webhook.service_name.empty()) {
          continue;
        }
        const std::string id =
            webhook.service_namespace + "/" + webhook.service_name + ":" + std::to_string(webhook.service_port);
        if (std::find(services_done.begin(), services_done.end(), id) != services_done.end()) {
          continue;
        }
        services_done.push_back(id);
        Result<std::vector<std::string>> endpoints = service_endpoints(webhook);
        if (!endpoints) {
          results.push_back(ProbeResult{"service " + id, false, endpoints.error().message});
          continue;
        }
        services.push_back(id + ": " + std::to_string(endpoints->size()) + " ready");
        const std::string server_name = webhook.service_name + "." + webhook.service_namespace + ".svc";
        for (const std::string& endpoint : *endpoints) {
          const std::size_t colon = endpoint.rfind(':');
          std::string host = endpoint.substr(0, colon);
          if (host.starts_with('[')) {
            host = host.substr(1, host.size() - 2);
          }
          add(ProbeTarget{endpoint, host, static_cast<std::uint16_t>(std::stoi(endpoint.substr(colon + 1))),
                          server_name});
        }
      }
    }
    std::vector<std::string> endpoints;
    for (const ProbeTarget& target : targets) {
      endpoints.push_back(target.endpoint);
      results.push_back(probe_endpoint(target, ca, probe_timeout));
    }
    log_("info", "probing endpoints", {{"endpoints", joined(endpoints, ",")}, {"services", joined(services, ",")}});
    return results;
  }

  Result<std::vector<std::string>> service_endpoints(const Webhook& webhook) {
    const std::string ns = webhook.service_namespace;
    Result<kube::HttpResponse> service = call("GET", "/api/v1/namespaces/" + ns + "/services/" + webhook.service_name);
    if (!service) {
      return service.error();
    }
    if (service->status != 200) {
      return api_error("get", "services", webhook.service_name, ns, *service);
    }
    Result<kube::HttpResponse> slices =
        call("GET", "/apis/discovery.k8s.io/v1/namespaces/" + ns + "/endpointslices?labelSelector=" +
                        kube::query_escape("kubernetes.io/service-name=" + webhook.service_name));
    if (!slices) {
      return slices.error();
    }
    if (slices->status != 200) {
      return api_error("list", "endpointslices", "", ns, *slices);
    }
    return ready_endpoints(service->body, slices->body, webhook.service_port);
  }

  // true when written; false after a 409 (re-read and plan again).
  Result<bool> write_secret(const Snapshot& snapshot, const Step& step) {
    const bool create = !snapshot.secret;
    Result<std::string> body = secret_body(create ? std::string_view() : std::string_view(snapshot.secret->body),
                                           options_.secret, options_.namespace_name, step.data, step.annotations);
    if (!body) {
      return body.error();
    }
    Result<kube::HttpResponse> response =
        create ? call("POST", "/api/v1/namespaces/" + options_.namespace_name + "/secrets", *body, "application/json")
               : call("PUT", secret_path(), *body, "application/json");
    if (!response) {
      return response.error();
    }
    if (response->status == 409) {
      log_("info", "Secret changed meanwhile (409); re-reading", {{"secret", options_.secret}});
      return false;
    }
    if (response->status != 200 && response->status != 201) {
      return api_error(create ? "create" : "update", "secrets", create ? "" : options_.secret, options_.namespace_name,
                       *response);
    }
    Fields fields{{"secret", options_.secret}, {"reason", step.reason}};
    if (step.rotation_seconds >= 0) {
      fields.emplace_back("rotation_seconds", std::to_string(step.rotation_seconds));
    }
    log_("info", step.event, fields);
    return true;
  }

  Status patch_webhooks(const Snapshot& snapshot, const Step& step) {
    for (const WebhookConfiguration& configuration : snapshot.configurations) {
      const std::string id = configuration_id(configuration);
      if (std::find(step.outdated.begin(), step.outdated.end(), id) == step.outdated.end()) {
        continue;
      }
      Result<kube::HttpResponse> response =
          call("PATCH", configuration_path(configuration.kind, configuration.name),
               ca_bundle_patch(configuration, step.bundle), "application/json-patch+json");
      if (!response) {
        return response.error();
      }
      if (response->status == 409 || response->status == 422) {
        // Changed since read (a webhook added or reordered): the next read plans again.
        log_("info", "webhook configuration changed meanwhile; re-reading", {{"configuration", id}});
        continue;
      }
      if (response->status != 200) {
        return api_error("patch", resource_of(configuration.kind), configuration.name, "", *response);
      }
      std::size_t cas = 0;
      for (std::size_t at = step.bundle.find("-----BEGIN CERTIFICATE"); at != std::string::npos;
           at = step.bundle.find("-----BEGIN CERTIFICATE", at + 1)) {
        ++cas;
      }
      log_("info", step.event, {{"configuration", id}, {"cas", std::to_string(cas)}, {"reason", step.reason}});
    }
    return Ok{};
  }

  kube::ApiConnection& api_;
  const CertsOptions& options_;
  Log& log_;
  std::function<bool(std::chrono::milliseconds)> sleep_;
  Settings settings_;
};

}  // namespace

int run_certs(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  kube::CommandStart<CertsOptions> start =
      kube::start_command(parse_certs_options(args), {"error: ", "vmgate certs"}, certs_usage, out, err);
  if (!start.options) {
    return start.exit_code;
  }
  const CertsOptions& options = *start.options;
  Result<std::unique_ptr<kube::ApiCommand>> api = kube::open_api_command(options.kubeconfig, options.context, 1);
  if (!api) {
    return kube::usage_error({"error: ", ""}, api.error(), err);
  }
  const kube::ClientConfig& config = (*api)->config;
  Log& log = (*api)->log;
  // Continuous mode wakes early on SIGTERM; --once keeps the default signal handling.
  std::optional<kube::StopSignal> stop;
  Reconciler reconciler(*(*api)->connections[0], options, log, [&stop](std::chrono::milliseconds interval) {
    if (stop) {
      return !stop->wait(interval);
    }
    std::this_thread::sleep_for(interval);
    return true;
  });
  log("info", "vmgate certs starting",
      {{"namespace", options.namespace_name},
       {"service", options.service},
       {"secret", options.secret},
       {"mode", options.once ? "once" : "continuous"},
       {"server", config.server}});

  if (options.once) {
    Result<PassResult> result = reconciler.pass();
    if (!result) {
      log("error", "reconcile failed", {{"error", result.error().message}});
      err << "error: " << result.error().message << '\n';
      return exit_failed;
    }
    if (!result->pair_written) {
      const std::string reason = "the Secret holds no valid serving pair after the pass: " + result->reason;
      log("error", "reconcile failed", {{"error", reason}});
      err << "error: " << reason << '\n';
      return exit_failed;
    }
    log("info", result->end == PassEnd::steady ? "steady" : "done; the rotation continues in the sidecar",
        {{"reason", result->reason}});
    return 0;
  }

  stop.emplace([&reconciler] { reconciler.cancel(); });
  std::string last_state;
  while (!stop->stopped()) {
    Result<PassResult> result = reconciler.pass();
    if (stop->stopped()) {
      break;
    }
    if (!result) {
      log("error", "reconcile failed; retrying at the next check", {{"error", result.error().message}});
    } else if (result->end == PassEnd::steady && last_state != "steady") {
      log("info", "steady", {{"reason", result->reason}});
    }
    last_state = result && result->end == PassEnd::steady ? "steady" : "other";
    if (stop->wait(options.check_interval)) {
      break;
    }
  }
  stop.reset();  // before the reconciler its handler cancels goes
  log("info", "stopping on signal");
  return 0;
}

}  // namespace vmgate::certs
