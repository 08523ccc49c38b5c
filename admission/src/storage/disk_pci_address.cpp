// Reads: disks[i].disk.{pciAddress, bus}. Follows pkg/storage/admitters/disks.go validatePciAddress
// and hw_utils.go's PCI_ADDRESS_PATTERN; KubeVirt names the field
// "<disks>.domain.devices.disks.disk[i].pciAddress".
#include <string>

#include "storage/disk_rules.hpp"
#include "validation/pci_address.hpp"

namespace vmgate::admission::validation {

void validate_disk_pci_address(const json::Value& disk, const FieldPath& disks_path, std::size_t index,
                               ErrorList& causes) {
  const json::Value* target = json::find_object(disk, "disk");
  const std::string_view address = target != nullptr ? json::find_string(*target, "pciAddress") : std::string_view{};
  if (address.empty()) {
    return;
  }
  const FieldPath field = disks_path.child("domain").child("devices").child("disks").child("disk").index(index);
  if (json::find_string(*target, "bus") != "virtio") {
    causes.push_back(
        {CauseType::field_value_invalid, field.child("pciAddress").str(),
         "disk " + field.child("name").str() + " - setting a PCI address is only possible with bus type virtio."});
  }
  if (!is_pci_address(address)) {
    causes.push_back(
        {CauseType::field_value_invalid, field.child("pciAddress").str(),
         "disk " + field.child("name").str() + " has malformed PCI address (" + std::string(address) + ")."});
  }
}

}  // namespace vmgate::admission::validation
