#pragma once
// apimachinery meta/v1/validation ValidateLabelName and ValidateLabelSelector, shared by the
// affinity and topology spread rules (errors in field.Error form, see field_errors.hpp).
#include "vmgate/admission/field_error.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::validation {

/// A label key (qualified name) at `field`.
void validate_label_name(std::string_view key, const FieldPath& field, ErrorList& causes);
/// matchLabels keys and values; matchExpressions operators, values and keys. Null: nothing.
void validate_label_selector(const json::Value* selector, const FieldPath& field, ErrorList& causes);

}  // namespace vmgate::admission::validation
