#pragma once
// Where the launcher's VMI comes from: a VMI file, or a VM file expanded by the admission core
// (mutate → validate → expand, as `vmgate check` does), so the guest gets exactly what admission
// computed. Reads the file system. Thread-safety: no shared state.
#include <istream>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/launcher/options.hpp"

namespace vmgate::launcher {

/// The VMI to launch, with metadata.namespace set (from the object or --namespace).
/// Errors: unreadable or malformed files; not exactly one object of the expected kind; a VM
/// that admission denies ("admission denied the VirtualMachine: ..."); --vmi-name (no client yet).
Result<json::Document> load_vmi(const LauncherOptions& options, std::istream& standard_input);

/// `auto`: KVM only when /dev/kvm exists and the host module is kvm_intel or kvm_amd. Here
/// /dev/kvm exists but the module is kvm_pvm, which hangs normal guests (docs/launcher.md, "Choosing KVM or TCG").
bool use_software_emulation(Emulation emulation);

}  // namespace vmgate::launcher
