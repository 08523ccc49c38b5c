// Follows pkg/storage/admitters/disks.go ValidatePath.
#include "vmgate/admission/validation/absolute_path.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace vmgate::admission::validation {

namespace {

// Go's path.Clean of "/" + path.
std::string clean_absolute(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, slash - start);
    if (part == "..") {
      if (!parts.empty()) {
        parts.pop_back();
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = slash + 1;
  }
  std::string out;
  for (std::string_view part : parts) {
    out.append("/").append(part);
  }
  return out.empty() ? "/" : out;
}

}  // namespace

ErrorList validate_absolute_path(const FieldPath& field, std::string_view value) {
  ErrorList causes;
  if (value == "/") {
    causes.push_back({CauseType::field_value_invalid, field.str(), field.str() + " must not point to root"});
    return causes;
  }
  std::string_view provided = value;
  if (!provided.empty() && provided.back() == '/') {
    provided.remove_suffix(1);  // strings.TrimSuffix: one slash
  }
  if (clean_absolute(value) != provided) {
    causes.push_back({CauseType::field_value_invalid, field.str(),
                      field.str() + " must be an absolute path to a file without relative components"});
  }
  return causes;
}

}  // namespace vmgate::admission::validation
