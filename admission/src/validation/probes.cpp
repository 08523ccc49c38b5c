// Reads: spec.{readinessProbe, livenessProbe}.{httpGet, tcpSocket, exec, guestAgentPing},
// spec.networks[*].pod. Follows vmi-create-admitter.go validateProbe and
// appendStatusCauseForProbeNotAllowedWithNoPodNetworkPresent.
#include <array>
#include <string>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

void validate_probe(const json::Value& probe, const FieldPath& field, ErrorList& causes) {
  int handlers = 0;
  for (std::string_view handler : {"httpGet", "tcpSocket", "exec", "guestAgentPing"}) {
    handlers += json::has(probe, handler) ? 1 : 0;
  }
  if (handlers > 1) {
    causes.push_back(
        {CauseType::field_value_invalid, field.str(), field.str() + " must have exactly one probe type set"});
  }
  if (handlers < 1) {
    causes.push_back({CauseType::field_value_required, field.str(),
                      "either " + field.child("tcpSocket").str() + ", " + field.child("exec").str() + " or " +
                          field.child("httpGet").str() + " must be set if a " + field.str() + " is specified"});
  }
}

bool has_pod_network(const json::Value& spec) {
  const json::Value* networks = json::find(spec, "networks");
  if (networks == nullptr || !networks->IsArray()) {
    return false;
  }
  for (const json::Value& network : networks->GetArray()) {
    if (network.IsObject() && json::has(network, "pod")) {
      return true;
    }
  }
  return false;
}

}  // namespace

ErrorList validate_probes(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  constexpr std::array<std::string_view, 2> probes{"readinessProbe", "livenessProbe"};
  for (std::string_view name : probes) {
    if (const json::Value* probe = json::find_object(spec, name)) {
      validate_probe(*probe, path.child(name), causes);
    }
  }
  if (has_pod_network(spec)) {
    return causes;
  }
  // HTTP and TCP probes reach the guest through the pod network.
  for (std::string_view name : probes) {
    if (const json::Value* probe = json::find_object(spec, name)) {
      for (std::string_view handler : {"httpGet", "tcpSocket"}) {
        if (json::has(*probe, handler)) {
          const std::string field = path.child(name).child(handler).str();
          causes.push_back(
              {CauseType::field_value_invalid, field, field + " is only allowed if the Pod Network is attached"});
        }
      }
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
