// Reads: spec.volumes[*].containerDisk.path. Follows pkg/storage/admitters/disks.go
// ValidateContainerDisks: a set path must pass ValidatePath.
#include "vmgate/admission/validation/absolute_path.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

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
    append(causes, validate_absolute_path(path.child("volumes").index(i).child("containerDisk"), disk_path));
  }
  return causes;
}

}  // namespace vmgate::admission::validation
