// Follows k8s.io/apimachinery/pkg/apis/meta/v1/validation ValidateLabelSelector with the default
// options (unknown operators and invalid values refused).
#include "scheduling/label_selector.hpp"

#include "validation/field_errors.hpp"
#include "vmgate/admission/validation/label_names.hpp"

namespace vmgate::admission::validation {

namespace {

std::string_view text_of(const json::Value& value) {
  return value.IsString() ? json::as_view(value) : "";
}

void validate_label_value(std::string_view value, const FieldPath& field, ErrorList& causes) {
  for (const std::string& error : label_value_errors(value)) {
    causes.push_back(field_errors::invalid(field, value, error));
  }
}

}  // namespace

void validate_label_name(std::string_view key, const FieldPath& field, ErrorList& causes) {
  for (const std::string& error : qualified_name_errors(key)) {
    causes.push_back(field_errors::invalid(field, key, error));
  }
}

void validate_label_selector(const json::Value* selector, const FieldPath& field, ErrorList& causes) {
  if (selector == nullptr || !selector->IsObject()) {
    return;
  }
  if (const json::Value* labels = json::find_object(*selector, "matchLabels")) {
    const FieldPath labels_field = field.child("matchLabels");
    for (const auto& label : labels->GetObject()) {
      validate_label_name(json::as_view(label.name), labels_field, causes);
      validate_label_value(text_of(label.value), labels_field, causes);
    }
  }
  const json::Value* expressions = json::find_array(*selector, "matchExpressions");
  if (expressions == nullptr) {
    return;
  }
  for (rapidjson::SizeType i = 0; i < expressions->Size(); ++i) {
    const json::Value& expression = (*expressions)[i];
    if (!expression.IsObject()) {
      continue;
    }
    const FieldPath expression_field = field.child("matchExpressions").index(i);
    const std::string_view op = json::find_string(expression, "operator");
    const json::Value* values = json::find_array(expression, "values");
    const rapidjson::SizeType count = values != nullptr ? values->Size() : 0;
    if (op == "In" || op == "NotIn") {
      if (count == 0) {
        causes.push_back(field_errors::required(expression_field.child("values"),
                                                "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (op == "Exists" || op == "DoesNotExist") {
      if (count > 0) {
        causes.push_back(field_errors::forbidden(expression_field.child("values"),
                                                 "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
    } else {
      causes.push_back(field_errors::invalid(expression_field.child("operator"), op, "not a valid selector operator"));
    }
    validate_label_name(json::find_string(expression, "key"), expression_field.child("key"), causes);
    for (rapidjson::SizeType v = 0; v < count; ++v) {
      validate_label_value(text_of((*values)[v]), expression_field.child("values").index(v), causes);
    }
  }
}

}  // namespace vmgate::admission::validation
