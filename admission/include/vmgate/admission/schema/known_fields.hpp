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
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "vmgate/admission/field_error.hpp"
#include "vmgate/admission/release.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission {

enum class KnownFieldsKind { virtual_machine, virtual_machine_instance };

class KnownFields {
  struct Tree;

 public:
  /// Compiles the embedded name tree (well under a millisecond; build one and share it).
  /// A tree that does not compile is a vmgate bug: throws std::logic_error.
  KnownFields();

  /// FieldValueForbidden for every member no definition declares, then FieldValueRequired
  /// for every required member missing (absent or null), object by object in document order
  /// (KubeVirt's order within an object). Never throws for any input value. Thread-safe (const).
  [[nodiscard]] ErrorList check(KnownFieldsKind kind, const json::Value& object,
                                Release release = newest_release) const;

  /// A place in the name tree: what a spec member holds. For a walk that checks the names
  /// together with something else (StructureValidator's single walk of a sound object); a view
  /// into this KnownFields, valid while it lives.
  class Position {
   public:
    enum class Shape { anything, object, array, map };
    struct Property {
      std::string_view name;
      Release since;  // older releases refuse the member as unknown
      bool required;  // absent or null is "in body is required"
    };

    [[nodiscard]] Shape shape() const;
    /// Shape::object: its properties in the API's order, and what each holds.
    [[nodiscard]] std::vector<Property> properties() const;
    [[nodiscard]] Position holds(std::size_t property) const;
    /// Shape::array and Shape::map: what each element holds.
    [[nodiscard]] Position element() const;

   private:
    friend class KnownFields;
    Position(const Tree& tree, std::size_t holds) : tree_(&tree), holds_(holds) {}
    const Tree* tree_;
    std::size_t holds_;  // in the tree's list of every Holds
  };

  /// What `spec` holds: where check's walk starts, below the top-level names.
  [[nodiscard]] Position spec(KnownFieldsKind kind) const;

 private:
  std::shared_ptr<const Tree> tree_;
};

}  // namespace vmgate::admission
