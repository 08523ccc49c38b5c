// Reads: spec.domain.machine.type, spec.architecture; cluster emulatedMachines.
// Follows vmi-create-admitter.go validateEmulatedMachine (filepath.Match globs).
#include <fnmatch.h>

#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_machine_type(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  const json::Value* machine = json::find_path(spec, {"domain", "machine"});
  const std::string type(machine != nullptr ? json::find_string(*machine, "type") : "");
  if (type.empty()) {
    return {};
  }
  const std::vector<std::string> globs = config.emulated_machines_for(json::find_string(spec, "architecture"));
  std::string allowed = "[";
  for (const std::string& glob : globs) {
    if (fnmatch(glob.c_str(), type.c_str(), 0) == 0) {
      return {};
    }
    allowed.append(allowed.size() > 1 ? " " : "").append(glob);
  }
  allowed.push_back(']');
  const std::string field = path.child("domain").child("machine").child("type").str();
  return {{CauseType::field_value_invalid, field,
           field + " is not supported: " + type + " (allowed values: " + allowed + ")"}};
}

}  // namespace vmgate::admission::validation
