#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::spec {

std::uint64_t uint_or_zero(const Value& object, std::string_view key) {
  const Value* v = json::find(object, key);
  return v != nullptr && v->IsUint64() ? v->GetUint64() : 0;
}

void copy_if_unset(const Value& source, std::string_view source_key, Value& target, std::string_view target_key,
                   Allocator& allocator) {
  const Value* from = json::find(source, source_key);
  if (from == nullptr || from->IsNull() || !unset(target, target_key)) {
    return;
  }
  json::set(target, target_key, json::copy(*from, allocator), allocator);
}

void copy_string_if_empty(const Value& source, std::string_view source_key, Value& target, std::string_view target_key,
                          Allocator& allocator) {
  const Value* from = json::find(source, source_key);
  if (from == nullptr || !from->IsString() || from->GetStringLength() == 0 || !empty_string(target, target_key)) {
    return;
  }
  json::set(target, target_key, json::copy(*from, allocator), allocator);
}

void ensure_disk_target(Value& disk, Allocator& allocator) {
  if (unset(disk, "disk") && unset(disk, "cdrom") && unset(disk, "lun")) {
    json::set(disk, "disk", Value(rapidjson::kObjectType), allocator);
  }
}

Value& domain(Value& vmi_spec, Allocator& allocator) {
  return json::ensure_object(vmi_spec, "domain", allocator);
}

Value& devices(Value& vmi_spec, Allocator& allocator) {
  return json::ensure_object(domain(vmi_spec, allocator), "devices", allocator);
}

Value& annotations(Value& metadata, Allocator& allocator) {
  return json::ensure_object(metadata, "annotations", allocator);
}

}  // namespace vmgate::admission::spec
