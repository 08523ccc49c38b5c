#pragma once
// What the VM controller does with an admitted VM: the VirtualMachineInstance it would create
// (pkg/virt-controller/watch/vm/vm.go startVMI + pkg/instancetype/controller/vm/controller.go),
// and the `expand` reference policy (pkg/instancetype/expand/expand.go).
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::admission::expand {

/// The VMI as the controller builds it, before the VMI mutating webhook: template copy, stable
/// firmware UUID, disks for volumes, autoattach preferences, default input and pod network,
/// instancetype then preference with the kubevirt.io/[cluster-]{instancetype,preference}-name
/// annotations. Errors: lookup failures and conflicts, in the controller's words.
Result<json::Document> build_vmi(const json::Value& vm, std::string_view namespace_name, const ClusterView& cluster);

/// referencePolicy expand: instancetype and preference written into the VM template and the
/// matchers removed. Returns false (VM untouched) when there is nothing to expand or the
/// instancetype/preference cannot be found or conflicts (validation then reports it).
bool expand_vm_in_place(json::Document& vm, std::string_view namespace_name, const ClusterView& cluster);

}  // namespace vmgate::admission::expand
