// Reads: spec.topologySpreadConstraints[*].{maxSkew, topologyKey, whenUnsatisfiable, labelSelector}.
// Follows validate-k8s-utils.go validateTopologySpreadConstraints (Kubernetes' copy in KubeVirt),
// including its label-selector path without the index ("spec.topologySpreadConstraints.labelSelector").
#include <string>

#include "validation/field_errors.hpp"
#include "scheduling/label_selector.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_topology_spread(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* constraints = json::find_array(spec, "topologySpreadConstraints");
  if (constraints == nullptr) {
    return causes;
  }
  const FieldPath field = path.child("topologySpreadConstraints");
  for (rapidjson::SizeType i = 0; i < constraints->Size(); ++i) {
    const json::Value& constraint = (*constraints)[i];
    if (!constraint.IsObject()) {
      continue;
    }
    const FieldPath item = field.index(i);
    const json::Value* skew = json::find(constraint, "maxSkew");
    const std::int64_t max_skew = skew != nullptr && skew->IsInt64() ? skew->GetInt64() : 0;
    if (max_skew <= 0) {
      causes.push_back(field_errors::invalid(item.child("maxSkew"), max_skew, "must be greater than zero"));
    }
    const std::string_view topology_key = json::find_string(constraint, "topologyKey");
    if (topology_key.empty()) {
      causes.push_back(field_errors::required(item.child("topologyKey"), "can not be empty"));
    } else {
      validate_label_name(topology_key, item.child("topologyKey"), causes);
    }
    const std::string_view action = json::find_string(constraint, "whenUnsatisfiable");
    if (action != "DoNotSchedule" && action != "ScheduleAnyway") {
      causes.push_back(
          field_errors::not_supported(item.child("whenUnsatisfiable"), action, R"("DoNotSchedule", "ScheduleAnyway")"));
    }
    validate_label_selector(json::find_object(constraint, "labelSelector"), field.child("labelSelector"), causes);
    for (rapidjson::SizeType j = i + 1; j < constraints->Size(); ++j) {
      const json::Value& other = (*constraints)[j];
      if (other.IsObject() && json::find_string(other, "topologyKey") == topology_key &&
          json::find_string(other, "whenUnsatisfiable") == action) {
        causes.push_back(field_errors::duplicate(item.child("{topologyKey, whenUnsatisfiable}"),
                                                 "{" + std::string(topology_key) + ", " + std::string(action) + "}"));
        break;
      }
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
