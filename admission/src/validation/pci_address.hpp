#pragma once
// pkg/util/hardware/hw_utils.go ParsePciAddress, used for disks' and interfaces' pciAddress.
#include <string_view>

namespace vmgate::admission::validation {

/// ^([\da-fA-F]{4}):([\da-fA-F]{2}):([\da-fA-F]{2})\.([0-7]{1})$
bool is_pci_address(std::string_view text);

}  // namespace vmgate::admission::validation
