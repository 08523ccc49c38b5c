// Reads/writes: VM spec.template.spec.domain.firmware.{uuid, serial}; reads metadata.{uid,name}.
// Follows vm-mutator.go setFirmwareDefaultsIfEmpty (CREATE only), with derived instead of random UUIDs.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "vmgate/admission/defaults/vm.hpp"
#include "vmgate/admission/spec.hpp"
#include "vmgate/common/sha1.hpp"

namespace vmgate::admission::defaults {

std::string name_based_uuid(std::string_view name) {
  // A fixed namespace UUID for vmgate (itself a v5 UUID of "vmgate.io" in the URL namespace).
  static constexpr std::array<char, 16> vmgate_namespace{'\x6c', '\x1e', '\x4f', '\x8a', '\x3b', '\x52',
                                                         '\x5d', '\x7e', '\x9a', '\x0f', '\x2d', '\x61',
                                                         '\x4b', '\x83', '\xc5', '\x17'};
  // RFC 4122 §4.3: the first 16 bytes of SHA-1(namespace, name), version 5, variant 10.
  std::array<std::uint8_t, 20> hash =
      common::sha1(std::string_view(vmgate_namespace.data(), vmgate_namespace.size()), name);
  hash[6] = static_cast<std::uint8_t>((hash[6] & 0x0FU) | 0x50U);
  hash[8] = static_cast<std::uint8_t>((hash[8] & 0x3FU) | 0x80U);
  constexpr std::string_view hex = "0123456789abcdef";
  // Into a fixed array, then one string: a push per character costs a capacity test each.
  std::array<char, 36> text{};
  std::size_t at = 0;
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      text[at++] = '-';
    }
    text[at++] = hex[hash[i] >> 4U];
    text[at++] = hex[hash[i] & 0x0FU];
  }
  return std::string(text.data(), text.size());
}

std::string_view NameBasedUuids::uuid(std::string_view name) {
  for (std::size_t index = 0; index < size_; ++index) {
    if (remembered_[index].name == name) {
      return remembered_[index].uuid;
    }
  }
  if (name.size() > longest_kept_name) {
    computed_ = name_based_uuid(name);
    return computed_;
  }
  Remembered& slot = size_ < kept ? remembered_[size_++] : remembered_[std::exchange(next_, (next_ + 1) % kept)];
  slot.name.assign(name);
  slot.uuid = name_based_uuid(name);
  return slot.uuid;
}

void set_vm_firmware_ids(json::Value& vm, std::string_view namespace_name, json::Allocator& allocator,
                         NameBasedUuids* uuids) {
  json::Value* template_spec = json::find_path(vm, {"spec", "template", "spec"});
  if (template_spec == nullptr || !template_spec->IsObject()) {
    return;
  }
  const json::Value* metadata = json::find_object(vm, "metadata");
  // The seed, then the seed and each suffix in turn: one buffer (this runs on every VM create).
  constexpr std::string_view uuid_suffix = "#firmware-uuid";
  constexpr std::string_view serial_suffix = "#firmware-serial";
  std::string name;
  if (std::string_view uid = metadata != nullptr ? json::find_string(*metadata, "uid") : ""; !uid.empty()) {
    name.reserve(4 + uid.size() + serial_suffix.size());
    name.append("uid:").append(uid);
  } else {
    const std::string_view vm_name = metadata != nullptr ? json::find_string(*metadata, "name") : "";
    name.reserve(4 + namespace_name.size() + vm_name.size() + serial_suffix.size());
    name.append("vm:").append(namespace_name).append("/").append(vm_name);
  }
  const std::size_t seed_size = name.size();
  json::Value& firmware = json::ensure_object(spec::domain(*template_spec, allocator), "firmware", allocator);
  const auto set_derived = [&](std::string_view member, std::string_view suffix) {
    if (spec::empty_string(firmware, member)) {
      name.resize(seed_size);
      name.append(suffix);
      json::set_string(firmware, member, uuids != nullptr ? uuids->uuid(name) : name_based_uuid(name), allocator);
    }
  };
  set_derived("uuid", uuid_suffix);
  set_derived("serial", serial_suffix);
}

}  // namespace vmgate::admission::defaults
