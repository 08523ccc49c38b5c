#pragma once
// apimachinery field.Error, as KubeVirt turns the ones of its copied Kubernetes validators
// (affinity, topology spread) into causes: type FieldValueInvalid, the field, and the message
// Error() gives: "<field>: <Type>[: <value>][: <detail>]".
#include <cstdint>
#include <string>
#include <string_view>

#include "vmgate/admission/field_error.hpp"

namespace vmgate::admission::validation::field_errors {

/// Go's %q of a string (also json.Marshal of a named string type, for printable ASCII).
std::string quoted(std::string_view text);

FieldError required(const FieldPath& field, std::string_view detail);
FieldError forbidden(const FieldPath& field, std::string_view detail);
FieldError invalid(const FieldPath& field, std::string_view value, std::string_view detail);
FieldError invalid(const FieldPath& field, std::int64_t value, std::string_view detail);
FieldError duplicate(const FieldPath& field, std::string_view value);
/// field.NotSupported: "Unsupported value: <value>: supported values: "a", "b"".
FieldError not_supported(const FieldPath& field, std::string_view value, std::string_view supported_quoted);

}  // namespace vmgate::admission::validation::field_errors
