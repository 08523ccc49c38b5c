#pragma once
// The VM's metadata.generation as the API server stores it, which the VM controller copies into
// the VMI's kubevirt.io/vm-generation annotation (pkg/virt-controller/watch/vm/vm.go startVMI).
// The custom resource strategy (k8s.io/apiextensions-apiserver
// pkg/registry/customresource/strategy.go) sets 1 on CREATE and, on UPDATE, keeps the old
// object's generation, plus one when the spec changed.
#include <cstdint>

#include "vmgate/common/json.hpp"

namespace vmgate::admission::expand {

/// old_vm is null on CREATE. An old object without a generation counts as generation 1 (a stored
/// object always has one; a `vmgate check --old` file may not). Specs compare as KubeVirt's
/// decoded structs do (semantically_equal). Pure; no errors.
std::int64_t stored_generation(const json::Value& vm, const json::Value* old_vm);

}  // namespace vmgate::admission::expand
