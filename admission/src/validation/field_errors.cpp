// Follows k8s.io/apimachinery/pkg/util/validation/field/errors.go Error and ErrorBody.
#include "validation/field_errors.hpp"

#include <cstdio>  // pure: snprintf into a buffer only

namespace vmgate::admission::validation::field_errors {

namespace {

FieldError make(const FieldPath& field, std::string_view body) {
  return {CauseType::field_value_invalid, field.str(), field.str() + ": " + std::string(body)};
}

}  // namespace

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append("\\n");
    } else if (c == '\t') {
      out.append("\\t");
    } else if (byte < 0x20 || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out.append(escaped);
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

FieldError required(const FieldPath& field, std::string_view detail) {
  return make(field, "Required value: " + std::string(detail));
}

FieldError forbidden(const FieldPath& field, std::string_view detail) {
  return make(field, "Forbidden: " + std::string(detail));
}

FieldError invalid(const FieldPath& field, std::string_view value, std::string_view detail) {
  return make(field, "Invalid value: " + quoted(value) + ": " + std::string(detail));
}

FieldError invalid(const FieldPath& field, std::int64_t value, std::string_view detail) {
  return make(field, "Invalid value: " + std::to_string(value) + ": " + std::string(detail));
}

FieldError duplicate(const FieldPath& field, std::string_view value) {
  return make(field, "Duplicate value: " + quoted(value));
}

FieldError not_supported(const FieldPath& field, std::string_view value, std::string_view supported_quoted) {
  return make(field, "Unsupported value: " + quoted(value) + ": supported values: " + std::string(supported_quoted));
}

}  // namespace vmgate::admission::validation::field_errors
