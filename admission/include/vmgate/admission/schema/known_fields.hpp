#pragma once
// KubeVirt's OpenAPI check of field names: its validating webhooks run a VirtualMachine's or
// VirtualMachineInstance's spec through the OpenAPI definitions with additionalProperties set
// to false on every definition (pkg/util/openapi/openapi.go CreateOpenAPIValidator,
// Validate), so a misspelt or unknown field is refused rather than dropped:
//   ".very in body is a forbidden property"                        (top level)
//   "spec.template.spec.not-a-domain in body is a forbidden property"
//   "spec.template.spec.domain in body is required"
// The property names and required lists come from KubeVirt's API document
// (schemas/known_fields.inc, written by tools/gen-known-fields). As in structure.hpp, paths
// are Kubernetes field paths (`disks[0].name`, `nodeSelector[zone]`). Values of the wrong
// JSON type are left to StructureValidator, as is everything under status and metadata
// (KubeVirt does not check them either, except the template's metadata, which it does).
#include <memory>

#include "vmgate/admission/field_error.hpp"
#include "vmgate/admission/release.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission {

enum class KnownFieldsKind { virtual_machine, virtual_machine_instance };

class KnownFields {
 public:
  /// Compiles the embedded name tree (well under a millisecond; build one and share it).
  /// A tree that does not compile is a vmgate bug: throws std::logic_error.
  KnownFields();

  /// FieldValueForbidden for every member no definition declares, then FieldValueRequired
  /// for every required member missing (absent or null), object by object in document order
  /// (KubeVirt's order within an object). Never throws for any input value. Thread-safe (const).
  [[nodiscard]] ErrorList check(KnownFieldsKind kind, const json::Value& object,
                                Release release = newest_release) const;

 private:
  struct Tree;
  std::shared_ptr<const Tree> tree_;
};

}  // namespace vmgate::admission
