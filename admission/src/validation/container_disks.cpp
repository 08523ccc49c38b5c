// Reads: spec.volumes[*].containerDisk.path. Follows pkg/storage/admitters/disks.go
// ValidateContainerDisks and ValidatePath: an absolute path without relative components
// (compared with Go's filepath.Join("/", path)), never "/".
#include <algorithm>
#include <string>
#include <vector>

#include "vmgate/admission/validation/rules.hpp"

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

ErrorList validate_container_disks(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* volumes = json::find_array(spec, "volumes");
  if (volumes == nullptr) {
    return causes;
  }
  for (rapidjson::SizeType i = 0; i < volumes->Size(); ++i) {
    const json::Value* disk = (*volumes)[i].IsObject() ? json::find_object((*volumes)[i], "containerDisk") : nullptr;
    const std::string_view disk_path = disk != nullptr ? json::find_string(*disk, "path") : std::string_view{};
    if (disk_path.empty()) {
      continue;
    }
    const std::string field = path.child("volumes").index(i).child("containerDisk").str();
    if (disk_path == "/") {
      causes.push_back({CauseType::field_value_invalid, field, field + " must not point to root"});
      continue;
    }
    std::string_view provided = disk_path;
    if (provided.back() == '/') {
      provided.remove_suffix(1);  // strings.TrimSuffix: one slash
    }
    if (clean_absolute(disk_path) != provided) {
      causes.push_back({CauseType::field_value_invalid, field,
                        field + " must be an absolute path to a file without relative components"});
    }
  }
  return causes;
}

}  // namespace vmgate::admission::validation
