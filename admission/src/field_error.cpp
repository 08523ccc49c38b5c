#include "vmgate/admission/field_error.hpp"

#include <algorithm>

namespace vmgate::admission {

std::string_view to_string(CauseType type) {
  switch (type) {
    case CauseType::field_value_invalid:
      return "FieldValueInvalid";
    case CauseType::field_value_not_found:
      return "FieldValueNotFound";
    case CauseType::field_value_not_supported:
      return "FieldValueNotSupported";
    case CauseType::field_value_required:
      return "FieldValueRequired";
    case CauseType::field_value_duplicate:
      return "FieldValueDuplicate";
    case CauseType::field_value_forbidden:
      return "FieldValueForbidden";
    case CauseType::unexpected_server_response:
      return "UnexpectedServerResponse";
    case CauseType::none:
      return "";
  }
  return "FieldValueInvalid";
}

FieldPath FieldPath::child(std::string_view name) const {
  if (path_.empty()) {
    return FieldPath(std::string(name));
  }
  std::string next;
  next.reserve(path_.size() + 1 + name.size());
  next.append(path_).append(".").append(name);
  return FieldPath(std::move(next));
}

FieldPath FieldPath::index(std::size_t i) const {
  return FieldPath(path_ + "[" + std::to_string(i) + "]");
}

FieldPath FieldPath::key(std::string_view k) const {
  std::string next = path_;
  next.append("[").append(k).append("]");
  return FieldPath(std::move(next));
}

Verdict Verdict::invalid(ErrorList causes) {
  constexpr std::size_t max_causes = 10;
  Verdict verdict;
  verdict.allowed = false;
  verdict.code = 422;
  verdict.reason = "Invalid";
  const std::size_t shown = std::min(causes.size(), max_causes);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) {
      verdict.message.append(", ");
    }
    verdict.message.append(causes[i].message);
  }
  if (causes.size() > max_causes) {
    verdict.message.append(", and " + std::to_string(causes.size() - max_causes) + " more validation errors");
  }
  causes.resize(shown);
  verdict.causes = std::move(causes);
  return verdict;
}

Verdict Verdict::bad_request(std::string message) {
  Verdict verdict;
  verdict.allowed = false;
  verdict.code = 400;
  verdict.message = std::move(message);
  return verdict;
}

}  // namespace vmgate::admission
