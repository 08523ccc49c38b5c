// Reads: disks[i].disk.{pciAddress, bus}. Follows pkg/storage/admitters/disks.go validatePciAddress
// and hw_utils.go's PCI_ADDRESS_PATTERN; KubeVirt names the field
// "<disks>.domain.devices.disks.disk[i].pciAddress".
#include <cctype>
#include <string>

#include "validation/disk_rules.hpp"

namespace vmgate::admission::validation {

namespace {

// ^([\da-fA-F]{4}):([\da-fA-F]{2}):([\da-fA-F]{2})\.([0-7]{1})$
bool is_pci_address(std::string_view text) {
  constexpr std::string_view shape = "xxxx:xx:xx.f";
  if (text.size() != shape.size()) {
    return false;
  }
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const char c = text[i];
    const bool ok = shape[i] == 'x'   ? std::isxdigit(static_cast<unsigned char>(c)) != 0
                    : shape[i] == 'f' ? c >= '0' && c <= '7'
                                      : c == shape[i];
    if (!ok) {
      return false;
    }
  }
  return true;
}

}  // namespace

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
