#pragma once
// Preference requirements (KubeVirt pkg/instancetype/preference/requirements/*.go), checked by the
// VM validating webhook after instancetype, preference and VMI spec defaults were applied.
#include "vmgate/admission/field_error.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::preference {

/// cpu, then memory, then architecture; the first failure wins. The cause has type
/// FieldValueNotFound, message "failure checking preference requirements: <error>" and the
/// conflicting field paths joined by ", ". `instancetype` may be null.
ErrorList check_requirements(const json::Value* instancetype, const json::Value& preference,
                             const json::Value& vmi_spec);

}  // namespace vmgate::admission::preference
