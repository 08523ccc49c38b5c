#pragma once
// Matcher shape and update rules of the VM mutating webhook
// (KubeVirt pkg/instancetype/webhooks/vm/mutator.go validateMatchers).
#include "vmgate/admission/field_error.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::instancetype {

/// spec.instancetype / spec.preference: name or inferFromVolume, not both, no kind with
/// inferFromVolume, failure policy Reject or Ignore.
ErrorList validate_matchers(const json::Value& vm);

/// UPDATE: a matcher whose name changed while keeping a non-empty revisionName is rejected.
ErrorList validate_matcher_update(const json::Value& vm, const json::Value& old_vm);

}  // namespace vmgate::admission::instancetype
