// Reads: disks[i].blockSize.{matchVolume.enabled, custom.{logical, physical, discardGranularity}}
// and the disk's bus. Follows pkg/storage/admitters/disks.go validateBlockSize and
// validateCustomBlockSize: the first failing check of the chain is reported.
#include <cstdint>
#include <string>

#include "storage/disk_rules.hpp"

namespace vmgate::admission::validation {

namespace {

constexpr std::uint64_t min_custom_block_size = 512;
constexpr std::uint64_t max_custom_block_size = 2097152;  // 2 MiB

std::uint64_t size_of(const json::Value& custom, std::string_view key) {
  const json::Value* value = json::find(custom, key);
  return value != nullptr && value->IsUint64() ? value->GetUint64() : 0;
}

// getDiskBus: the bus of the disk's target.
std::string_view bus_of(const json::Value& disk) {
  for (std::string_view target : {"disk", "lun", "cdrom"}) {
    if (const json::Value* device = json::find_object(disk, target)) {
      return json::find_string(*device, "bus");
    }
  }
  return {};
}

void check_custom_size(std::uint64_t size, const FieldPath& field, ErrorList& causes) {
  std::string message;
  if (size < min_custom_block_size) {
    message = "Provided size of " + std::to_string(size) + " is less than the supported minimum size of " +
              std::to_string(min_custom_block_size);
  } else if (size > max_custom_block_size) {
    message = "Provided size of " + std::to_string(size) + " is greater than the supported maximum size of " +
              std::to_string(max_custom_block_size);
  } else if ((size & (size - 1)) != 0) {
    message = "Provided size of " + std::to_string(size) + " is not a power of 2";
  } else {
    return;
  }
  causes.push_back({CauseType::field_value_invalid, field.str(), std::move(message)});
}

}  // namespace

void validate_disk_block_size(const json::Value& disk, const FieldPath& disk_path, ErrorList& causes) {
  const json::Value* block_size = json::find_object(disk, "blockSize");
  const json::Value* custom = block_size != nullptr ? json::find_object(*block_size, "custom") : nullptr;
  if (custom == nullptr) {
    return;
  }
  const FieldPath field = disk_path.child("blockSize");
  if (const json::Value* match = json::find_object(*block_size, "matchVolume")) {
    const json::Value* enabled = json::find(*match, "enabled");
    if (enabled == nullptr || enabled->IsNull() || (enabled->IsBool() && enabled->GetBool())) {
      causes.push_back({CauseType::field_value_invalid, field.str(),
                        "Block size matching can't be enabled together with a custom value"});
      return;
    }
  }
  const FieldPath custom_field = field.child("custom");
  const std::uint64_t logical = size_of(*custom, "logical");
  const std::uint64_t physical = size_of(*custom, "physical");
  const json::Value* discard = json::find(*custom, "discardGranularity");
  const bool has_discard = discard != nullptr && discard->IsUint64();
  if (logical > physical) {
    causes.push_back({CauseType::field_value_invalid, custom_field.child("logical").str(),
                      "Logical size " + std::to_string(logical) +
                          " must be the same or less than the physical size of " + std::to_string(physical)});
  } else if (bus_of(disk) == "sata" && logical != min_custom_block_size) {
    causes.push_back({CauseType::field_value_invalid, custom_field.child("logical").str(),
                      "Logical size " + std::to_string(logical) + " must be 512 for SATA devices"});
  } else if (has_discard && logical != 0 && discard->GetUint64() % logical != 0) {
    causes.push_back({CauseType::field_value_invalid, custom_field.child("discardGranularity").str(),
                      "Discard granularity " + std::to_string(discard->GetUint64()) +
                          " must be multiples of logical size " + std::to_string(logical)});
  } else {
    check_custom_size(logical, custom_field.child("logical"), causes);
    check_custom_size(physical, custom_field.child("physical"), causes);
  }
}

}  // namespace vmgate::admission::validation
