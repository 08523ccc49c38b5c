#pragma once
// Validation rules shared by the VM and VMI validating webhooks. Each takes the VMI spec and the
// field path of that spec ("spec" for a VMI, "spec.template.spec" for a VM) and returns causes in
// KubeVirt's words (vmi-create-admitter.go and the storage/network admitters it calls).
#include <string_view>
#include <unordered_map>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/admission/field_error.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::validation {

/// Quantity syntax of resources.{requests,limits}.*, memory.{guest,maxGuest}: a bad quantity is a
/// cause naming its field, never a silent default.
ErrorList validate_quantities(const json::Value& spec, const FieldPath& path);
/// hostname (DNS label) and subdomain (DNS subdomain).
ErrorList validate_dns_names(const json::Value& spec, const FieldPath& path);
/// Memory requests/limits: non-negative, requests ≥ 1M, requests ≤ limits; then hugepages::validate;
/// then guest ≤ limits unless LiveUpdate (KubeVirt's order: the hugepages causes come before the
/// guest's).
ErrorList validate_memory(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// domain.machine.type against the arch's emulated-machine globs.
ErrorList validate_machine_type(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// CPU requests/limits, NUMA passthrough, isolateEmulatorThread.
ErrorList validate_cpu(const json::Value& spec, const FieldPath& path);
/// dedicatedCpuPlacement (validateCpuPinning): memory provided, whole CPUs, requests equal to
/// limits and agreeing with the topology, thread limits (one on arm64, at most two).
ErrorList validate_dedicated_cpu(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// Whether each network name is on the pod network (the last network of a name wins, as
/// KubeVirt's IndexNetworkSpecByName); a name without a network is absent.
std::unordered_map<std::string_view, bool> pod_networks_by_name(const json::Value& spec);
/// Network sources: one pod network, one Multus default, one type per network, Multus names.
ErrorList validate_network_sources(const json::Value& spec, const FieldPath& path);
/// affinity: node selector terms and requirements, weights, pod (anti-)affinity terms — in
/// Kubernetes' field.Error words, at KubeVirt's paths ("spec.nodeAffinity...").
ErrorList validate_affinity(const json::Value& spec, const FieldPath& path);
/// topologySpreadConstraints: maxSkew, topologyKey, whenUnsatisfiable, label selector, no repeats.
ErrorList validate_topology_spread(const json::Value& spec, const FieldPath& path);
/// Interface states: known values, link states not on SR-IOV, absent only with bridge binding
/// and not on the default network.
ErrorList validate_interface_states(const json::Value& spec, const FieldPath& path);
/// Interface fields: name characters, model, MAC and PCI addresses, forwarded ports and port
/// ranges on the pod network, DHCP options.
ErrorList validate_interface_fields(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// Interface bindings: exactly one; masquerade and passt on the pod network only; bridge on
/// the pod network only when permitted; the in-pod bridge's MAC is reserved.
ErrorList validate_interface_bindings(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// Interfaces ↔ networks by name, unique network and interface names.
ErrorList validate_network_names(const json::Value& spec, const FieldPath& path);
/// validateBootOrder: each disk's volume exists (an empty CD-ROM needs DeclarativeHotplugVolumes)
/// and suits it (LUN, downwardMetrics), boot orders unique across disks and interfaces.
ErrorList validate_disk_volumes(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// storage ValidateDisks: unique names, one target, PCI address, boot order value, bus, serial,
/// cache, IO, error policy, name as a DNS label, block size.
ErrorList validate_disk_fields(const json::Value& spec, const FieldPath& path);
/// The network admitter's Validate: network sources, interface states, bindings, names, fields.
ErrorList validate_network(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// Volumes: unique names, one source each, cloud-init data, hostDisk, names of configMap/secret/
/// serviceAccount sources, at most one serviceAccount/downwardMetrics/memoryDump volume.
ErrorList validate_volumes(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// Input devices: bus virtio/usb, type tablet.
ErrorList validate_inputs(const json::Value& spec, const FieldPath& path);
/// ioThreadsPolicy ∈ {shared, auto, supplementalPool}.
ErrorList validate_io_threads_policy(const json::Value& spec, const FieldPath& path);
/// EFI and BIOS exclusive; Secure Boot requires SMM (unless TDX).
ErrorList validate_firmware(const json::Value& spec, const FieldPath& path);
/// Host devices need the HostDevices feature gate.
ErrorList validate_host_devices(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// readinessProbe/livenessProbe: exactly one handler; HTTP and TCP ones need the pod network.
ErrorList validate_probes(const json::Value& spec, const FieldPath& path);
/// evictionStrategy ∈ {LiveMigrate, LiveMigrateIfPossible, None, External}.
ErrorList validate_eviction_strategy(const json::Value& spec, const FieldPath& path);
/// Sound device: model ich9 or ac97, a name.
ErrorList validate_sound(const json::Value& spec, const FieldPath& path);
/// cpu.sockets at most cpu.maxSockets (when set).
ErrorList validate_cpu_hotplug(const json::Value& spec, const FieldPath& path);
/// A video device needs the VideoConfig feature gate (GA after v1.8), and
/// autoattachGraphicsDevice not false.
ErrorList validate_video(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// CREATE: a discontinued feature gate (Passt, Macvtap) listed in the KubeVirt CR while the spec
/// uses its API; causes without a field.
ErrorList validate_discontinued_feature_gates(const json::Value& spec, const ClusterConfig& config);
/// CREATE: the slirp, passt and macvtap bindings were discontinued in v1.3. v1.7 refuses only
/// slirp so (validateCreationSlirpBinding); passt and macvtap are binding methods there, behind
/// their discontinued gates (validate_interface_bindings).
ErrorList validate_discontinued_bindings(const json::Value& spec, const FieldPath& path,
                                         Release release = newest_release);
/// startStrategy is Paused (and then no liveness probe).
ErrorList validate_start_strategy(const json::Value& spec, const FieldPath& path);
/// autoattachVSOCK needs the VSOCK feature gate.
ErrorList validate_vsock(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// utilityVolumes are refused on creation (they arrive by hotplug only).
ErrorList validate_utility_volumes(const json::Value& spec, const FieldPath& path);
/// The storage admitter's Validate: container disks, utility volumes, disk fields.
ErrorList validate_storage(const json::Value& spec, const FieldPath& path);
/// containerDisk paths: absolute, without relative components, not "/".
ErrorList validate_container_disks(const json::Value& spec, const FieldPath& path);
/// cpu.realtime needs dedicatedCpuPlacement and numa.guestMappingPassthrough.
ErrorList validate_realtime(const json::Value& spec, const FieldPath& path);
/// launchSecurity: one type, its feature gate, UEFI without Secure Boot, no bootable NICs (amd64).
ErrorList validate_launch_security(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// firmware.acpi: a SLIC or MSDM reference, each naming a secret volume (paths under "spec.acpi").
ErrorList validate_firmware_acpi(const json::Value& spec, const FieldPath& path);
/// firmware.kernelBoot: kernel arguments need a container; the container's image and paths.
ErrorList validate_kernel_boot(const json::Value& spec, const FieldPath& path);
/// accessCredentials: one type, one source, one propagation method, its cloud-init volume.
ErrorList validate_access_credentials(const json::Value& spec, const FieldPath& path);
/// dnsPolicy ∈ {ClusterFirstWithHostNet, ClusterFirst, Default, None}; dnsConfig's nameservers,
/// searches and options (required with dnsPolicy None).
ErrorList validate_dns(const json::Value& spec, const FieldPath& path);
/// At most one vGPU display with ramfb.
ErrorList validate_gpu_displays(const json::Value& spec, const FieldPath& path);
/// A LUN with reservation needs persistent reservations enabled in the KubeVirt CR.
ErrorList validate_persistent_reservation(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// devices.downwardMetrics needs the DownwardMetrics feature gate.
ErrorList validate_downward_metrics_device(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// The architecture vmgate was built for, in Go's words ("amd64", "arm64", "s390x"): what
/// virt-api's runtime.GOARCH says where KubeVirt asks the webhook's own architecture.
std::string_view webhook_architecture();
/// v1.7 only: an architecture other than the webhook's own (runtime.GOARCH) needs the
/// MultiArchitecture gate. v1.8 deprecated the gate and dropped the check.
ErrorList validate_architecture_gate(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// virtiofs filesystems on PVC/DataVolume volumes need EnableVirtioFsStorageVolumes; at v1.7 those
/// on config volumes need EnableVirtioFsConfigVolumes, and ExperimentalVirtiofsSupport allows both.
ErrorList validate_virtiofs_storage(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// domain.rebootPolicy needs the RebootPolicy feature gate.
ErrorList validate_reboot_policy(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// memory.reservedOverhead needs the ReservedOverheadMemlock feature gate.
ErrorList validate_reserved_overhead(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// panicDevices: the PanicDevices feature gate (GA after v1.8; only that cause without it), none
/// on s390x, model hyperv, isa or pvpanic.
ErrorList validate_panic_devices(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);
/// serviceAccountName: a DNS subdomain, the same account as any serviceAccount volume.
ErrorList validate_service_account_name(const json::Value& spec, const FieldPath& path);

/// ValidateVirtualMachineInstanceSpec: every rule above, plus CPU feature policies and hugepages,
/// in KubeVirt's order.
ErrorList validate_vmi_spec(const json::Value& spec, const FieldPath& path, const ClusterConfig& config);

/// Metadata of a VMI or a VM's template: reserved kubevirt.io/ labels (unless KubeVirt's own
/// service accounts), the ignition and sidecar annotations need their feature gates.
ErrorList validate_vmi_metadata(const json::Value& metadata, const FieldPath& path, const ClusterConfig& config,
                                bool from_kubevirt_service_account);

/// VMI UPDATE (admitVMILabelsUpdate): whether a reserved kubevirt.io/ label was added, removed or
/// changed.
bool reserved_vmi_labels_changed(const json::Value& vmi, const json::Value& old_vmi);

/// VMI CREATE only: Hyper-V enlightenments' dependencies, eVMCS needs vmx required, no
/// hyperv beside hypervPassthrough (the spec of a VMI, paths as KubeVirt writes them).
ErrorList validate_hyperv(const json::Value& spec);

/// VMI CREATE only: volumes need a disk, memory is mandatory, reserved labels, per-arch rules.
ErrorList validate_vmi_only(const json::Value& vmi, const ClusterConfig& config, bool from_kubevirt_service_account);

/// VirtualMachine spec: template present, run strategy, dataVolumeTemplates, then the template spec.
ErrorList validate_vm_spec(const json::Value& vm, const ClusterConfig& config, bool from_kubevirt_service_account);

/// VirtualMachine storage, after the spec passed: dataVolumeTemplates in the VM's namespace
/// (unless an UPDATE left them unchanged); on UPDATE, no volume or running-state change while a
/// snapshot is in progress and no runStrategy change while a restore is. `old_vm` is required on
/// UPDATE.
ErrorList validate_vm_storage(const json::Value& vm, const json::Value* old_vm, bool update,
                              std::string_view namespace_name);

/// VirtualMachine status.volumeRequests, after the storage stage: each request well formed,
/// not repeated, not conflicting with the template's volume of its name, its disk hotpluggable;
/// then the template spec with the requests applied (no defaults) passes the VMI spec rules.
ErrorList validate_vm_volume_requests(const json::Value& vm, const ClusterConfig& config);

}  // namespace vmgate::admission::validation
