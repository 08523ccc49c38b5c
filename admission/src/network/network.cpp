// The network admitter's Validate (pkg/network/admitter/validator.go), in its order: network
// sources, interface states, bindings, network and interface names, interface fields. DRA
// network devices are not checked (see README).
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_network(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes = validate_network_sources(spec, path);
  append(causes, validate_interface_states(spec, path));
  append(causes, validate_interface_bindings(spec, path, config));
  append(causes, validate_network_names(spec, path));
  append(causes, validate_interface_fields(spec, path, config));
  return causes;
}

}  // namespace vmgate::admission::validation
