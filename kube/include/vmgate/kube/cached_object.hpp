#pragma once
// One cluster object as the watch cache and the live lookups hold it: an immutable JSON value
// with its own small allocator (a Document per object would reserve RapidJSON's 64 KiB first
// chunk each: 6 GB for 100 000 PVCs; this reserves about the object's text size), without
// metadata.managedFields (server-side apply's bookkeeping, often half of an object's size, which
// admission never reads; client-go informers drop it too).
// An object the admission rules cannot read (a quantity beyond their range, a malformed
// instancetype the apiserver's schema let through) is held too, with `problem` saying why, so
// that it is counted and a VM naming it is told which field of which object is unreadable.
// Thread-safety: immutable once built.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "vmgate/common/json.hpp"

namespace vmgate::kube {

struct CachedObject {
  /// A copy of `source`. `text_bytes`: its JSON size as received, the allocator's first chunk.
  CachedObject(const json::Value& source, std::size_t text_bytes);
  /// The items of a list carry no kind and apiVersion: set them, as the object reads alone.
  CachedObject(const json::Value& source, std::size_t text_bytes, std::string_view kind, std::string_view api_version);

  json::Allocator allocator;
  json::Value value;
  /// Empty when the rules can read the object; else "<field>: <why>".
  std::string problem;
};

using CachedObjectPtr = std::shared_ptr<const CachedObject>;

}  // namespace vmgate::kube
