#pragma once
// Per-disk checks of pkg/storage/admitters/disks.go ValidateDisks that validate_disks (disks.cpp)
// runs in KubeVirt's order. `disks_path` is the disks list's path (KubeVirt's `field`).
#include "vmgate/admission/field_error.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::validation {

/// validatePciAddress: a disk's PCI address needs the virtio bus and the form dddd:dd:dd.f.
void validate_disk_pci_address(const json::Value& disk, const FieldPath& disks_path, std::size_t index,
                               ErrorList& causes);
/// validateBlockSize: custom sizes not with matchVolume, logical ≤ physical, 512 on SATA,
/// discard granularity a multiple of logical, sizes powers of 2 in [512, 2 MiB].
void validate_disk_block_size(const json::Value& disk, const FieldPath& disk_path, ErrorList& causes);

}  // namespace vmgate::admission::validation
