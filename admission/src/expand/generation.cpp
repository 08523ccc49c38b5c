// Reads: metadata.generation and spec of the old VM, spec of the admitted one.
// Follows: k8s.io/apiextensions-apiserver pkg/registry/customresource/strategy.go
// (PrepareForCreate, PrepareForUpdate), which kube-apiserver applies to VirtualMachines.
#include "vmgate/admission/expand/generation.hpp"

#include "vmgate/admission/semantic_equal.hpp"

namespace vmgate::admission::expand {

std::int64_t stored_generation(const json::Value& vm, const json::Value* old_vm) {
  if (old_vm == nullptr || !old_vm->IsObject()) {
    return 1;
  }
  const json::Value* old_generation = json::find_path(*old_vm, {"metadata", "generation"});
  std::int64_t generation = old_generation != nullptr && old_generation->IsInt64() && old_generation->GetInt64() > 0
                                ? old_generation->GetInt64()
                                : 1;
  static const json::Value absent;  // null: immutable, no shared mutable state
  const json::Value* old_spec = json::find(*old_vm, "spec");
  const json::Value* new_spec = vm.IsObject() ? json::find(vm, "spec") : nullptr;
  if (!semantically_equal(old_spec != nullptr ? *old_spec : absent, new_spec != nullptr ? *new_spec : absent)) {
    ++generation;
  }
  return generation;
}

}  // namespace vmgate::admission::expand
