// Reads: spec.affinity.{nodeAffinity, podAffinity, podAntiAffinity}. Follows
// validate-k8s-utils.go validateAffinity (Kubernetes' pod validation copied into KubeVirt),
// whose paths start at the VMI spec without "affinity" ("spec.nodeAffinity...") and whose causes
// carry field.Error's text.
#include <string>

#include "validation/field_errors.hpp"
#include "scheduling/label_selector.hpp"
#include "vmgate/admission/validation/dns1123.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

namespace {

using field_errors::forbidden;
using field_errors::invalid;
using field_errors::required;

rapidjson::SizeType count_of(const json::Value& object, std::string_view key) {
  const json::Value* list = json::find_array(object, key);
  return list != nullptr ? list->Size() : 0;
}

std::int64_t weight_of(const json::Value& term) {
  const json::Value* weight = json::find(term, "weight");
  return weight != nullptr && weight->IsInt64() ? weight->GetInt64() : 0;
}

void check_weight(const json::Value& term, const FieldPath& field, ErrorList& causes) {
  if (const std::int64_t weight = weight_of(term); weight <= 0 || weight > 100) {
    causes.push_back(invalid(field.child("weight"), weight, "must be in the range 1-100"));
  }
}

// ValidateNodeSelectorRequirement.
void check_node_expression(const json::Value& requirement, const FieldPath& field, ErrorList& causes) {
  const std::string_view op = json::find_string(requirement, "operator");
  const rapidjson::SizeType values = count_of(requirement, "values");
  if (op == "In" || op == "NotIn") {
    if (values == 0) {
      causes.push_back(required(field.child("values"), "must be specified when `operator` is 'In' or 'NotIn'"));
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (values > 0) {
      causes.push_back(
          forbidden(field.child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    }
  } else if (op == "Gt" || op == "Lt") {
    if (values != 1) {
      causes.push_back(
          required(field.child("values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"));
    }
  } else {
    causes.push_back(invalid(field.child("operator"), op, "not a valid selector operator"));
  }
  validate_label_name(json::find_string(requirement, "key"), field.child("key"), causes);
}

// ValidateNodeFieldSelectorRequirement: only metadata.name, with one DNS-subdomain value.
void check_node_field(const json::Value& requirement, const FieldPath& field, ErrorList& causes) {
  const std::string_view op = json::find_string(requirement, "operator");
  const json::Value* values = json::find_array(requirement, "values");
  const rapidjson::SizeType count = values != nullptr ? values->Size() : 0;
  if (op == "In" || op == "NotIn") {
    if (count != 1) {
      causes.push_back(required(field.child("values"),
                                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
    }
  } else {
    causes.push_back(invalid(field.child("operator"), op, "not a valid selector operator"));
  }
  const std::string_view key = json::find_string(requirement, "key");
  if (key != "metadata.name") {
    causes.push_back(invalid(field.child("key"), key, "not a valid field selector key"));
    return;
  }
  for (rapidjson::SizeType i = 0; i < count; ++i) {
    const std::string_view value = (*values)[i].IsString() ? json::as_view((*values)[i]) : "";
    for (const std::string& error : dns1123_subdomain_errors(value)) {
      causes.push_back(invalid(field.child("values").index(i), value, error));
    }
  }
}

// ValidateNodeSelectorTerm.
void check_node_term(const json::Value& term, const FieldPath& field, ErrorList& causes) {
  if (!term.IsObject()) {
    return;
  }
  for (const auto& [key, check] :
       {std::pair{"matchExpressions", &check_node_expression}, std::pair{"matchFields", &check_node_field}}) {
    if (const json::Value* requirements = json::find_array(term, key)) {
      for (rapidjson::SizeType i = 0; i < requirements->Size(); ++i) {
        if ((*requirements)[i].IsObject()) {
          check((*requirements)[i], field.child(key).index(i), causes);
        }
      }
    }
  }
}

// preferredDuringSchedulingIgnoredDuringExecution: each term's weight, then its inner term
// (`inner`: "preference" for nodes, "podAffinityTerm" for pods; an absent one is checked as {}).
void check_weighted_terms(const json::Value& affinity, const FieldPath& field, std::string_view inner,
                          void (*check_inner)(const json::Value&, const FieldPath&, ErrorList&), ErrorList& causes) {
  const json::Value* terms = json::find_array(affinity, "preferredDuringSchedulingIgnoredDuringExecution");
  if (terms == nullptr) {
    return;
  }
  const FieldPath terms_field = field.child("preferredDuringSchedulingIgnoredDuringExecution");
  const json::Value empty(rapidjson::kObjectType);
  for (rapidjson::SizeType i = 0; i < terms->Size(); ++i) {
    const json::Value& term = (*terms)[i];
    if (!term.IsObject()) {
      continue;
    }
    check_weight(term, terms_field.index(i), causes);
    const json::Value* inner_term = json::find_object(term, inner);
    check_inner(inner_term != nullptr ? *inner_term : empty, terms_field.index(i).child(inner), causes);
  }
}

void check_node_affinity(const json::Value& affinity, const FieldPath& field, ErrorList& causes) {
  if (const json::Value* selector = json::find_object(affinity, "requiredDuringSchedulingIgnoredDuringExecution")) {
    const FieldPath terms_field =
        field.child("requiredDuringSchedulingIgnoredDuringExecution").child("nodeSelectorTerms");
    const json::Value* terms = json::find_array(*selector, "nodeSelectorTerms");
    if (terms == nullptr || terms->Empty()) {
      causes.push_back(required(terms_field, "must have at least one node selector term"));
    } else {
      for (rapidjson::SizeType i = 0; i < terms->Size(); ++i) {
        check_node_term((*terms)[i], terms_field.index(i), causes);
      }
    }
  }
  check_weighted_terms(affinity, field, "preference", check_node_term, causes);
}

// validatePodAffinityTerm.
void check_pod_term(const json::Value& term, const FieldPath& field, ErrorList& causes) {
  validate_label_selector(json::find_object(term, "labelSelector"), field.child("labelSelector"), causes);
  validate_label_selector(json::find_object(term, "namespaceSelector"), field.child("namespaceSelector"), causes);
  if (const json::Value* namespaces = json::find_array(term, "namespaces")) {
    for (const json::Value& name : namespaces->GetArray()) {
      const std::string_view text = name.IsString() ? json::as_view(name) : "";
      for (const std::string& error : dns1123_label_errors(text)) {
        causes.push_back(invalid(field.child("namespace"), text, error));  // sic: "namespace"
      }
    }
  }
  const std::string_view topology_key = json::find_string(term, "topologyKey");
  if (topology_key.empty()) {
    causes.push_back(required(field.child("topologyKey"), "can not be empty"));
  }
  validate_label_name(topology_key, field.child("topologyKey"), causes);
}

void check_pod_affinity(const json::Value& affinity, const FieldPath& field, ErrorList& causes) {
  if (const json::Value* terms = json::find_array(affinity, "requiredDuringSchedulingIgnoredDuringExecution")) {
    for (rapidjson::SizeType i = 0; i < terms->Size(); ++i) {
      if ((*terms)[i].IsObject()) {
        check_pod_term((*terms)[i], field.child("requiredDuringSchedulingIgnoredDuringExecution").index(i), causes);
      }
    }
  }
  check_weighted_terms(affinity, field, "podAffinityTerm", check_pod_term, causes);
}

}  // namespace

ErrorList validate_affinity(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* affinity = json::find_object(spec, "affinity");
  if (affinity == nullptr) {
    return causes;
  }
  if (const json::Value* node = json::find_object(*affinity, "nodeAffinity")) {
    check_node_affinity(*node, path.child("nodeAffinity"), causes);
  }
  if (const json::Value* pod = json::find_object(*affinity, "podAffinity")) {
    check_pod_affinity(*pod, path.child("podAffinity"), causes);
  }
  if (const json::Value* anti = json::find_object(*affinity, "podAntiAffinity")) {
    check_pod_affinity(*anti, path.child("podAntiAffinity"), causes);
  }
  return causes;
}

}  // namespace vmgate::admission::validation
