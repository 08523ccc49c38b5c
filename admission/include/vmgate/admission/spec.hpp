#pragma once
// Small editing helpers for KubeVirt specs held as JSON, mirroring Go's "nil pointer / zero
// value" tests so the rules read like the KubeVirt code they follow.
#include <string_view>

#include "vmgate/common/json.hpp"

namespace vmgate::admission::spec {

using json::Allocator;
using json::Value;

/// Go `x == nil` for a pointer field: member absent or null.
inline bool unset(const Value& object, std::string_view key) {
  return !json::has(object, key);
}
/// Go `s == ""` for a string field: absent, null or "" (a non-string counts as set).
inline bool empty_string(const Value& object, std::string_view key) {
  const Value* v = json::find(object, key);
  return v == nullptr || v->IsNull() || (v->IsString() && v->GetStringLength() == 0);
}
/// Go `len(list) == 0`.
inline bool empty_list(const Value& object, std::string_view key) {
  const Value* v = json::find(object, key);
  return v == nullptr || v->IsNull() || (v->IsArray() && v->Empty());
}
/// The member as a non-negative integer (Go uint32 fields); 0 when unset or of another type.
std::uint64_t uint_or_zero(const Value& object, std::string_view key);
/// Go bool field: true only for a JSON true.
inline bool is_true(const Value& object, std::string_view key) {
  const Value* v = json::find(object, key);
  return v != nullptr && v->IsBool() && v->GetBool();
}

/// Copies `source[key]` to `target[key]` when the source has it and the target does not
/// (the preference rule "copied if the VMI value is nil").
void copy_if_unset(const Value& source, std::string_view source_key, Value& target, std::string_view target_key,
                   Allocator& allocator);
/// Copies a non-empty source string into an empty target string.
void copy_string_if_empty(const Value& source, std::string_view source_key, Value& target, std::string_view target_key,
                          Allocator& allocator);

/// KubeVirt's SetDefaults_DiskDevice: a disk with no target (disk, cdrom, lun) gets `disk: {}`.
void ensure_disk_target(Value& disk, Allocator& allocator);

/// Nested objects created on demand (Go's `if x == nil { x = &T{} }`).
Value& domain(Value& vmi_spec, Allocator& allocator);
Value& devices(Value& vmi_spec, Allocator& allocator);
Value& annotations(Value& metadata, Allocator& allocator);

}  // namespace vmgate::admission::spec
