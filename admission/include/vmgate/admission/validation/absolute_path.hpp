#pragma once
// pkg/storage/admitters/disks.go ValidatePath, shared by containerDisk paths and the kernel boot
// container's kernelPath/initrdPath.
#include <string_view>

#include "vmgate/admission/field_error.hpp"

namespace vmgate::admission::validation {

/// `value` must be absolute, without relative components (compared with Go's
/// filepath.Join("/", value), one trailing slash allowed) and not "/". Causes name `field`.
ErrorList validate_absolute_path(const FieldPath& field, std::string_view value);

}  // namespace vmgate::admission::validation
