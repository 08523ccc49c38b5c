#include "vmgate/kube/cached_object.hpp"

#include <algorithm>

namespace vmgate::kube {

namespace {

json::Value copy_without_managed_fields(const json::Value& source, json::Allocator& allocator) {
  if (!source.IsObject()) {
    return json::Value(source, allocator);
  }
  json::Value copy(rapidjson::kObjectType);
  for (const auto& member : source.GetObject()) {
    json::Value name(member.name, allocator);
    if (json::as_view(member.name) != "metadata" || !member.value.IsObject()) {
      copy.AddMember(name, json::Value(member.value, allocator), allocator);
      continue;
    }
    json::Value metadata(rapidjson::kObjectType);
    for (const auto& field : member.value.GetObject()) {
      if (json::as_view(field.name) != "managedFields") {
        metadata.AddMember(json::Value(field.name, allocator), json::Value(field.value, allocator), allocator);
      }
    }
    copy.AddMember(name, metadata, allocator);
  }
  return copy;
}

}  // namespace

// managedFields, dropped here, are often half of the text, and a value outgrowing its first chunk
// just takes a second one.
CachedObject::CachedObject(const json::Value& source, std::size_t text_bytes)
    : allocator(std::max<std::size_t>(text_bytes / 2, 512)), value(copy_without_managed_fields(source, allocator)) {}

CachedObject::CachedObject(const json::Value& source, std::size_t text_bytes, std::string_view kind,
                           std::string_view api_version)
    : CachedObject(source, text_bytes) {
  if (value.IsObject() && !json::has(value, "kind")) {
    json::set_string(value, "kind", kind, allocator);
  }
  if (value.IsObject() && !json::has(value, "apiVersion")) {
    json::set_string(value, "apiVersion", api_version, allocator);
  }
}

}  // namespace vmgate::kube
