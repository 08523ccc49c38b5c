#pragma once
// Where the launcher's VMI comes from: a VMI file, or a VM file expanded by the admission core
// (mutate → validate → expand, as `vmgate check` does), so the guest gets exactly what admission
// computed. Reads the file system. Thread-safety: no shared state.
#include <istream>
#include <string_view>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/launcher/options.hpp"

namespace vmgate::launcher {

/// The finalizer KubeVirt's VMI mutating webhook (and vmgate's) adds on CREATE: a VMI that
/// carries it has been admitted, with every default applied.
inline constexpr std::string_view admitted_finalizer = "kubevirt.io/foregroundDeleteVirtualMachine";

/// True when `vmi` carries admitted_finalizer.
bool admitted(const json::Value& vmi);

/// The VMI to launch, with metadata.namespace set (from the object or --namespace). A --vmi that
/// has not been admitted goes through the admission core's VMI webhooks first (mutate, validate,
/// with the cluster of --objects), as kube-apiserver would send it; an admitted one is taken as
/// it is (its status.memory, say, records a hotplug), so loading is idempotent.
/// Errors: unreadable or malformed files; not exactly one object of the expected kind; a VM
/// or VMI that admission denies ("admission denied the VirtualMachine: ...").
Result<json::Document> load_vmi(const LauncherOptions& options, std::istream& standard_input);

/// `auto`: KVM only when /dev/kvm exists and the host module is kvm_intel or kvm_amd. Here
/// /dev/kvm exists but the module is kvm_pvm, which hangs normal guests (docs/launcher.md, "Choosing KVM or TCG").
bool use_software_emulation(Emulation emulation);

}  // namespace vmgate::launcher
