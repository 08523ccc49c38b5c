// The storage admitter's Validate (pkg/storage/admitters/vmi-storage-admitter.go), in its order:
// container disks, utility volumes, disk fields.
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_storage(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  for (ErrorList part :
       {validate_container_disks(spec, path), validate_utility_volumes(spec, path), validate_disk_fields(spec, path)}) {
    causes.insert(causes.end(), std::make_move_iterator(part.begin()), std::make_move_iterator(part.end()));
  }
  return causes;
}

}  // namespace vmgate::admission::validation
