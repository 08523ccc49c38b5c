#pragma once
// Structural validation of VirtualMachines, VirtualMachineInstances, instancetypes and
// preferences: the JSON type and shape of every field the admission rules read, checked
// against JSON Schemas compiled into the library, so that a wrong type anywhere gives a
// field error instead of a crash or a silent default in a rule.
//
// What KubeVirt does here: its webhooks run the object's spec through the OpenAPI schema
// (pkg/util/webhooks/webhooks.go ValidateSchema, kube-openapi/go-openapi validators) before
// any rule; the messages below use the same wording
// ("spec.template.spec.domain.cpu.cores in body must be of type integer: \"string\"").
// Unlike go-openapi, paths are Kubernetes field paths: list items as `disks[3]`, map
// entries (labels, annotations, nodeSelector, resource lists) as `labels[app]`.
//
// For VMs and VMIs the field names are checked too, as KubeVirt's openapi.go does (see
// known_fields.hpp): an unknown member of the spec, of the template's metadata or at the top
// level is "a forbidden property", a member the API requires (spec, template, domain,
// devices, a disk's name...) "is required". Those causes come first.
//
// Not checked here, on purpose: value syntax such as quantities and names (the rules check
// it, with KubeVirt's messages), and status and metadata (other than types). A null value is
// accepted for every optional field, as Go decodes null as unset; a required member given as
// null "is required", as kube-apiserver deletes the null before KubeVirt's webhooks see it.
#include <memory>

#include "vmgate/admission/field_error.hpp"
#include "vmgate/admission/release.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission {

/// Which schema `StructureValidator::validate` applies. Each takes the whole object
/// (apiVersion, kind, metadata, spec); paths are relative to it, e.g. "spec.cpu.guest".
enum class StructureKind {
  virtual_machine,           // kubevirt.io/v1 VirtualMachine
  virtual_machine_instance,  // kubevirt.io/v1 VirtualMachineInstance
  instancetype_spec,         // instancetype.kubevirt.io VirtualMachine[Cluster]Instancetype
  preference_spec,           // instancetype.kubevirt.io VirtualMachine[Cluster]Preference
};

class StructureValidator {
 public:
  /// Parses and compiles the embedded schemas (a few milliseconds: build one at start-up and
  /// share it). A schema that does not compile is a vmgate bug: throws std::logic_error.
  StructureValidator();
  ~StructureValidator();
  /// Copies share the compiled schemas (immutable). There is no separate move: a "moved"
  /// validator stays usable.
  StructureValidator(const StructureValidator& other);
  StructureValidator& operator=(const StructureValidator& other);

  /// Field errors for unknown or missing members and wrong JSON types and shapes in `object`:
  /// first (VMs and VMIs) FieldValueForbidden for an unknown member and FieldValueRequired for
  /// a missing required one, object by object; then FieldValueInvalid for a wrong type or an
  /// out-of-range integer, FieldValueRequired, FieldValueNotSupported for a value outside an
  /// enumeration, at most one per field path (the most specific one), in document order.
  /// Empty when the structure is sound.
  /// A non-object root gives one error with an empty field path.
  ///
  /// Never throws for any input value (non-objects, huge strings, deep nesting); an internal
  /// failure is reported as one FieldValueInvalid error with an empty field path.
  /// Thread-safety: const and re-entrant; one validator may be used by many threads at once.
  [[nodiscard]] ErrorList validate(StructureKind kind, const json::Value& object,
                                   Release release = newest_release) const;

  /// True only when validate would find nothing: validate's fast path, one walk that checks the
  /// names and the types at once and answers "sound" or "not sure" (false). Thread-safe
  /// (const); never throws.
  [[nodiscard]] bool surely_sound(StructureKind kind, const json::Value& object,
                                  Release release = newest_release) const;

  /// validate without that fast path: the names check and the structure check each on its
  /// own, which decide wherever surely_sound is not sure. Public for the tests that hold
  /// surely_sound to its promise.
  [[nodiscard]] ErrorList validate_each_check_apart(StructureKind kind, const json::Value& object,
                                                    Release release = newest_release) const;

 private:
  struct Schemas;
  std::shared_ptr<const Schemas> schemas_;
};

}  // namespace vmgate::admission
