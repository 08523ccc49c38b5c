// The storage admitter's Validate (pkg/storage/admitters/vmi-storage-admitter.go), in its order:
// container disks, utility volumes, disk fields.
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_storage(const json::Value& spec, const FieldPath& path) {
  ErrorList causes = validate_container_disks(spec, path);
  append(causes, validate_utility_volumes(spec, path));
  append(causes, validate_disk_fields(spec, path));
  return causes;
}

}  // namespace vmgate::admission::validation
