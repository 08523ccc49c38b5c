// Reads: preference spec.{preferredSubdomain, preferredTerminationGracePeriodSeconds,
// preferredArchitecture, preferredLaunchSecurity, annotations}.
// Follows pkg/instancetype/preference/apply/{subdomain,termination,architecture,launchsecurity,annotations}.go.
#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::preference {

void apply_subdomain(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator) {
  spec::copy_string_if_empty(preference, "preferredSubdomain", vmi_spec, "subdomain", allocator);
}

void apply_termination_grace_period(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator) {
  spec::copy_if_unset(preference, "preferredTerminationGracePeriodSeconds", vmi_spec, "terminationGracePeriodSeconds",
                      allocator);
}

void apply_architecture(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator) {
  spec::copy_string_if_empty(preference, "preferredArchitecture", vmi_spec, "architecture", allocator);
}

void apply_launch_security(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator,
                           Release release) {
  if (release > Release::v1_8 && json::has(preference, "preferredLaunchSecurity")) {
    spec::copy_if_unset(preference, "preferredLaunchSecurity", spec::domain(vmi_spec, allocator), "launchSecurity",
                        allocator);
  }
}

void apply_annotations(const json::Value& preference, json::Value& metadata, json::Allocator& allocator) {
  const json::Value* annotations = json::find_object(preference, "annotations");
  if (annotations == nullptr || annotations->ObjectEmpty() || !metadata.IsObject()) {
    return;
  }
  json::Value& target = spec::annotations(metadata, allocator);
  // Existing keys win: instancetype annotations were applied first, user annotations before that.
  for (auto it = annotations->MemberBegin(); it != annotations->MemberEnd(); ++it) {
    if (json::find(target, json::as_view(it->name)) == nullptr) {
      target.AddMember(json::copy(it->name, allocator), json::copy(it->value, allocator), allocator);
    }
  }
}

}  // namespace vmgate::admission::preference
