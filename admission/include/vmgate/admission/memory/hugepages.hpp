#pragma once
// Hugepages rules (KubeVirt vmi-create-admitter.go validateHugepagesMemoryRequests).
#include "vmgate/admission/field_error.hpp"
#include "vmgate/admission/release.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::hugepages {

/// pageSize must parse; the VM memory (requests.memory, else memory.guest, else limits.memory)
/// must be ≥ and a multiple of the page size. Messages always name resources.requests.memory,
/// printing '0' when it is unset (KubeVirt's quirk). No allow-list of page sizes. v1.7 names the
/// page size spec.domain.hugepages.size (a path that does not exist; v1.8 says
/// spec.domain.memory.hugepages.pageSize), in the messages and the format error's field.
ErrorList validate(const json::Value& spec, const FieldPath& path, Release release = newest_release);

}  // namespace vmgate::admission::hugepages
