#pragma once
// The Kubernetes objects `vmgate certs` reads and writes, as JSON: the Secret (read into a
// SecretState, written back with its resourceVersion so that a concurrent writer gets a 409),
// the webhook configurations (read into WebhookConfiguration; a JSON patch that sets only the
// caBundles), and a Service with its EndpointSlices (the addresses to probe). Pure;
// thread-safe. Errors name the object and the field.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/server/certs_plan.hpp"

namespace vmgate::certs {

/// A Secret as read: its state for the planner, and what a PUT needs to send it back.
struct SecretObject {
  SecretState state;
  std::string body;  // the JSON as read, kept so that a PUT keeps every other field
};

/// Reads a Secret (GET body). Errors: not JSON, not a v1 Secret, data that is not base64.
Result<SecretObject> read_secret(std::string_view body, std::string_view what);

/// The body of a PUT of `original` (or, when it is empty, of a POST creating `name` in
/// `namespace_name`, type Opaque) with `data` as its whole data and the annotations set ("" removes).
/// The original's resourceVersion is kept: the apiserver refuses the PUT with 409 if the Secret
/// changed since it was read.
Result<std::string> secret_body(std::string_view original, std::string_view name, std::string_view namespace_name,
                                const std::map<std::string, std::string>& data,
                                const std::map<std::string, std::string>& annotations);

/// Reads a webhook configuration (GET body). Errors: not JSON, webhooks not a list, a
/// caBundle that is not base64.
Result<WebhookConfiguration> read_configuration(std::string_view body, ConfigurationKind kind, std::string_view what);

/// A JSON patch (RFC 6902) setting every webhook's clientConfig.caBundle to `bundle_pem`
/// (base64). Each webhook's name is tested first, so that a list reordered since it was read
/// fails the patch (422) instead of changing another webhook.
std::string ca_bundle_patch(const WebhookConfiguration& configuration, std::string_view bundle_pem);

/// The ready addresses behind `port` of a Service: the Service's port entry with that port
/// number, then in each EndpointSlice (a list's body) the port of the same name; "ip:port"
/// ("[v6]:port"). Endpoints whose conditions.ready is false are left out.
/// Errors: no such port in the Service, bodies that are not JSON.
Result<std::vector<std::string>> ready_endpoints(std::string_view service_body, std::string_view slices_body,
                                                 std::uint16_t port);

}  // namespace vmgate::certs
