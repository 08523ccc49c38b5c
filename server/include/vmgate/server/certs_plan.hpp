#pragma once
// The rotation planner of `vmgate certs` (docs/certificates.md, "Rotation"): given the Secret,
// the webhook configurations, the time and (when it asked for them) a freshly issued pair and
// the endpoints' probe results, the next step towards a valid serving pair that every caller of
// the webhooks trusts. Pure: no I/O, no clock, no randomness (the executor issues the pair and
// probes); thread-safe. Every state, however edited by hand, plans to a step; nothing throws.
//
// The steps of a rotation, each a separate write that replicas coordinate on through the
// Secret's resourceVersion:
//   steady      bundle = {CA1}, serving pair by CA1
//   start       next-* = CA2 + leaf2, ca-bundle.crt = {CA1, CA2}            (Secret)
//   publish     every webhook's clientConfig.caBundle = {CA1, CA2}          (configurations)
//   switch      serving pair = CA2 + leaf2 (only once every caBundle read back as {CA1, CA2})
//   retire      once every endpoint presents a leaf verified by CA2 alone: bundle = {CA2}
//   publish     caBundle = {CA2}                                            -> steady
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "vmgate/server/certs_pki.hpp"

namespace vmgate::certs {

/// The Secret's keys (docs/certificates.md, "The Secret").
namespace key {
inline constexpr const char* tls_crt = "tls.crt";
inline constexpr const char* tls_key = "tls.key";
inline constexpr const char* ca_crt = "ca.crt";
inline constexpr const char* ca_key = "ca.key";
inline constexpr const char* ca_bundle = "ca-bundle.crt";
// A rotation's new pair between "start" and "switch".
inline constexpr const char* next_tls_crt = "next-tls.crt";
inline constexpr const char* next_tls_key = "next-tls.key";
inline constexpr const char* next_ca_crt = "next-ca.crt";
inline constexpr const char* next_ca_key = "next-ca.key";
}  // namespace key

/// The Secret's annotations (state for people and the log; the data decides).
namespace annotation {
inline constexpr const char* phase = "vmgate.kubevirt.io/rotation-phase";      // publishing, retiring, or absent
inline constexpr const char* started = "vmgate.kubevirt.io/rotation-started";  // Unix seconds
inline constexpr const char* reason = "vmgate.kubevirt.io/rotation-reason";
}  // namespace annotation

struct SecretState {
  bool exists = false;
  std::map<std::string, std::string> data;  // decoded values
  std::map<std::string, std::string> annotations;
};

/// One webhook of a configuration: its name, the decoded clientConfig.caBundle and where it
/// calls (url, or the Service).
struct Webhook {
  std::string name;
  std::string ca_bundle;          // PEM; empty when unset
  std::string url;                // clientConfig.url; empty when the Service is used
  std::string service_namespace;  // clientConfig.service
  std::string service_name;
  std::uint16_t service_port = 443;
};

enum class ConfigurationKind { mutating, validating };

struct WebhookConfiguration {
  ConfigurationKind kind = ConfigurationKind::mutating;
  std::string name;
  std::vector<Webhook> webhooks;
};

struct Settings {
  std::string service;
  std::string namespace_name;
  std::string cluster_domain = "cluster.local";
  std::int64_t ca_duration = std::int64_t{8760} * 3600;    // seconds
  std::int64_t cert_duration = std::int64_t{2160} * 3600;  // seconds
  std::int64_t renew_before = std::int64_t{720} * 3600;    // seconds
  bool force_renew = false;
  std::size_t max_bundle = 5;  // CAs kept in the bundle at most (the current and the next always)
};

/// The serving certificate's subjectAltNames.
struct SubjectNames {
  std::vector<std::string> dns;
  std::vector<std::string> ip;  // canonical_ip() form
  bool operator==(const SubjectNames&) const = default;
};

/// `<svc>`, `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.<domain>`, and the host of every
/// webhook's clientConfig.url (a DNS name or an IP address): the apiserver checks the name it
/// dials, and a configuration with a url dials that host.
SubjectNames desired_names(const Settings& settings, const std::vector<WebhookConfiguration>& configurations);

/// The host of an https URL ("https://[::1]:8443/x" -> "::1"); empty when there is none.
std::string url_host(std::string_view url);

/// PEM text of a freshly issued CA and leaf (the executor's, on Action::issue).
struct FreshPair {
  std::string ca_crt;
  std::string ca_key;
  std::string tls_crt;
  std::string tls_key;
};

/// One endpoint's handshake: did it present a certificate verified by the CA alone?
struct ProbeResult {
  std::string endpoint;  // "127.0.0.1:8443", "https://host/path"
  bool ok = false;
  std::string detail;  // the failure, or the subject served
};

struct PlanInput {
  std::int64_t now = 0;  // Unix seconds
  Settings settings;
  SecretState secret;
  std::vector<WebhookConfiguration> configurations;
  std::optional<FreshPair> fresh;                 // after Action::issue
  std::optional<std::vector<ProbeResult>> probe;  // after Action::probe
};

enum class Action {
  steady,          // nothing to do
  issue,           // issue a fresh pair for `names` and plan again with it
  write_secret,    // PUT (or create) the Secret with `data` and `annotations`
  patch_webhooks,  // set every webhook's caBundle in `outdated` to `bundle`
  probe,           // probe every endpoint against `probe_ca` and plan again with the results
  wait,            // nothing to do now; try again on the next check (`reason` says why)
};

struct Step {
  Action action = Action::steady;
  std::string event;                               // for the log: "rotation started", "serving pair switched", ...
  std::string reason;                              // why, in words
  std::vector<std::string> problems;               // what is wrong with the Secret as found, each named
  SubjectNames names;                              // issue
  bool create = false;                             // write_secret: the Secret does not exist
  std::map<std::string, std::string> data;         // write_secret: the whole data
  std::map<std::string, std::string> annotations;  // write_secret: set these; "" removes one
  bool starts_rotation = false;                    // write_secret: a --force-renew is used up by it
  std::string bundle;                              // patch_webhooks: PEM
  /// patch_webhooks adding a rotation's new CA: the apiserver reads configurations through an
  /// informer, so the executor lets the change propagate before the serving pair switches.
  bool settle = false;
  std::vector<std::string> outdated;   // patch_webhooks: "mutating/NAME", "validating/NAME"
  std::string probe_ca;                // probe: PEM of the one CA to verify against
  std::int64_t rotation_seconds = -1;  // write_secret ending a rotation: how long it took
};

/// The next step. See the header comment for the sequence; in every state the Secret's
/// problems (unreadable PEM, a key of another certificate, a leaf not signed by ca.crt, an
/// expired CA, SANs that differ) are named in `problems` and repaired by a fresh pair,
/// published with an overlap whenever the webhook configurations still trust some CA.
Step plan(const PlanInput& input);

/// "mutating/NAME" or "validating/NAME".
std::string configuration_id(const WebhookConfiguration& configuration);

}  // namespace vmgate::certs
