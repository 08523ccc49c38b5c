#pragma once
// Defaults of the VM mutating webhook (KubeVirt vm-mutator.go and pkg/defaults/defaults.go
// SetVirtualMachineDefaults).
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::defaults {

/// The last few name-based UUIDs asked for, kept by a caller across requests (the webhook: one
/// per review scratch, which its connections share). A VM created again (a CI pipeline's dry
/// runs, a GitOps loop) asks for the same two, each two SHA-1 blocks. Bounded: a few names, each
/// of limited length. Not thread-safe.
class NameBasedUuids {
 public:
  /// name_based_uuid(name); the view is valid until the next call.
  std::string_view uuid(std::string_view name);

 private:
  static constexpr std::size_t kept = 8;
  static constexpr std::size_t longest_kept_name = 512;  // longer names are computed every time
  struct Remembered {
    std::string name;
    std::string uuid;
  };
  std::array<Remembered, kept> remembered_;
  std::size_t size_ = 0;  // remembered_[0, size_) are filled
  std::size_t next_ = 0;  // the one replaced next, once all are
  std::string computed_;  // the answer for a name too long to keep
};

/// CREATE: spec.template.spec.domain.firmware.{uuid,serial} when empty. KubeVirt draws random
/// UUIDs; admission is pure, so vmgate derives name-based (v5) UUIDs from metadata.uid when the
/// apiserver sent one, else from namespace/name: the same VM always gets the same answer.
/// `uuids`: the caller's memo, or null.
void set_vm_firmware_ids(json::Value& vm, std::string_view namespace_name, json::Allocator& allocator,
                         NameBasedUuids* uuids = nullptr);

/// Architecture: a dataVolumeTemplate's DataSource label template.kubevirt.io/architecture
/// (following one nested DataSource), else the cluster default; a user-set arch is kept.
void set_vm_architecture(json::Value& vm, std::string_view namespace_name, const ClusterView& cluster,
                         json::Allocator& allocator);

/// spec.template.spec.domain.machine.type when empty: the cluster's type for the arch.
void set_vm_machine_type(json::Value& vm, const ClusterConfig& config, json::Allocator& allocator);

/// pkg/defaults SupportsPCIeHotplug: amd64/arm64 (or unset) with a q35/virt machine type; at
/// v1.8 any machine type (PR #17029 added the machine type after it).
bool supports_pcie_hotplug(const json::Value& vmi_spec, Release release = newest_release);
/// Whether the mutators annotate the PCI topology version: where supports_pcie_hotplug(), from v1.8
/// on (v1.7 has no kubevirt.io/pci-topology-version).
bool annotates_pci_topology(const json::Value& vmi_spec, Release release);
/// metadata.annotations["kubevirt.io/pci-topology-version"] = "v3" when absent.
void set_pci_topology_version(json::Value& metadata, json::Allocator& allocator);

/// A name-based UUID (RFC 4122 version 5) of `name` in vmgate's namespace.
std::string name_based_uuid(std::string_view name);

}  // namespace vmgate::admission::defaults
