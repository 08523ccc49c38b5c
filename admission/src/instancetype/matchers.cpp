// Reads: VM spec.{instancetype,preference}.{name, kind, revisionName, inferFromVolume,
// inferFromVolumeFailurePolicy}, and the old VM's on UPDATE.
// Follows pkg/instancetype/webhooks/vm/mutator.go (validateMatchers and validateMatcherUpdate).
#include "vmgate/admission/instancetype/matchers.hpp"

#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::instancetype {

namespace {

void validate_matcher(const json::Value& vm, std::string_view key, std::string_view type_name, ErrorList& causes) {
  const json::Value* matcher = json::find_path(vm, {"spec", key});
  if (matcher == nullptr || !matcher->IsObject()) {
    return;
  }
  const FieldPath path = FieldPath("spec").child(key);
  const bool infers = !spec::empty_string(*matcher, "inferFromVolume");
  if (spec::empty_string(*matcher, "name") && !infers) {
    causes.push_back({CauseType::field_value_not_found, path.str(),
                      "Either Name or InferFromVolume should be provided within the " + std::string(type_name)});
  }
  if (infers) {
    if (!spec::empty_string(*matcher, "name")) {
      causes.push_back({CauseType::field_value_not_supported, path.child("name").str(),
                        "Name already set, should be cleared before setting inferFromVolume"});
    }
    if (!spec::empty_string(*matcher, "kind")) {
      causes.push_back({CauseType::field_value_not_supported, path.child("kind").str(),
                        "Kind already set, should be cleared before setting inferFromVolume"});
    }
  }
  if (const json::Value* policy = json::find(*matcher, "inferFromVolumeFailurePolicy");
      policy != nullptr && !policy->IsNull()) {
    const std::string_view value = policy->IsString() ? json::as_view(*policy) : std::string_view{};
    if (value != "Reject" && value != "Ignore") {
      causes.push_back({CauseType::field_value_invalid, path.child("inferFromVolumeFailurePolicy").str(),
                        "Invalid value '" + std::string(value) + "' for InferFromVolumeFailurePolicy"});
    }
  }
}

void validate_update(const json::Value& vm, const json::Value& old_vm, std::string_view key, ErrorList& causes) {
  const json::Value* current = json::find_path(vm, {"spec", key});
  const json::Value* previous = json::find_path(old_vm, {"spec", key});
  if (current == nullptr || previous == nullptr || !current->IsObject() || !previous->IsObject()) {
    return;
  }
  // KubeVirt passes the matchers swapped, so the revision tested for "" is the new one; the
  // outcome is the same: clearing or changing revisionName with the name is allowed.
  const std::string_view revision = json::find_string(*current, "revisionName");
  if (revision.empty() || json::equal(*current, *previous)) {
    return;
  }
  if (json::find_string(*current, "name") != json::find_string(*previous, "name") &&
      revision == json::find_string(*previous, "revisionName")) {
    causes.push_back({CauseType::field_value_invalid, FieldPath("spec").child(key).child("revisionName").str(),
                      "the Matcher Name has been updated without updating the RevisionName"});
  }
}

}  // namespace

ErrorList validate_matchers(const json::Value& vm) {
  ErrorList causes;
  validate_matcher(vm, "instancetype", "InstancetypeMatcher", causes);
  if (!causes.empty()) {
    return causes;  // KubeVirt answers the instancetype's causes before looking at the preference
  }
  validate_matcher(vm, "preference", "PreferenceMatcher", causes);
  return causes;
}

ErrorList validate_matcher_update(const json::Value& vm, const json::Value& old_vm) {
  ErrorList causes;
  validate_update(vm, old_vm, "instancetype", causes);
  if (!causes.empty()) {
    return causes;
  }
  validate_update(vm, old_vm, "preference", causes);
  return causes;
}

}  // namespace vmgate::admission::instancetype
