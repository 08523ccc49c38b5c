#pragma once
// The node labeller's decisions (KubeVirt's virt-handler node-labeller and heartbeat): what
// libvirt's XML says about the node, which labels that makes, which label keys are the
// labeller's own, and the patches that write them. Pure: the XML and JSON come in as text or
// values, the time as a string; no libvirt, sockets, files or clocks. Thread-safe (no state).
//
// KubeVirt sources: pkg/virt-handler/node-labeller/{node_labeller.go,cpu_plugin.go,model.go,
// util/util.go}, cmd/virt-launcher/node-labeller/node-labeller.sh (which queries libvirt),
// pkg/virt-handler/heartbeat/heartbeat.go, staging/src/kubevirt.io/api/core/v1/types.go.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::node {

// Label keys and prefixes (kubevirt.io/api/core/v1).
inline constexpr std::string_view cpu_feature_label = "cpu-feature.node.kubevirt.io/";
inline constexpr std::string_view cpu_model_label = "cpu-model.node.kubevirt.io/";
inline constexpr std::string_view cpu_model_migration_label = "cpu-model-migration.node.kubevirt.io/";
inline constexpr std::string_view cpu_timer_label = "cpu-timer.node.kubevirt.io/";
inline constexpr std::string_view cpu_vendor_label = "cpu-vendor.node.kubevirt.io/";
inline constexpr std::string_view hyperv_label = "hyperv.node.kubevirt.io/";
inline constexpr std::string_view machine_type_label = "machine-type.node.kubevirt.io/";
inline constexpr std::string_view host_model_cpu_label = "host-model-cpu.node.kubevirt.io/";
inline constexpr std::string_view host_model_required_features_label = "host-model-required-features.node.kubevirt.io/";
inline constexpr std::string_view obsolete_host_model_label = "node-labeller.kubevirt.io/obsolete-host-model";
inline constexpr std::string_view skip_node_annotation = "node-labeller.kubevirt.io/skip-node";
inline constexpr std::string_view realtime_label = "kubevirt.io/realtime";
inline constexpr std::string_view sev_label = "kubevirt.io/sev";
inline constexpr std::string_view sev_es_label = "kubevirt.io/sev-es";
inline constexpr std::string_view sev_snp_label = "kubevirt.io/sev-snp";
inline constexpr std::string_view tdx_label = "kubevirt.io/tdx";
inline constexpr std::string_view secure_execution_label = "kubevirt.io/s390-pv";
inline constexpr std::string_view vm_arch_label = "kubevirt.io/vm-arch-";
inline constexpr std::string_view schedulable_label = "kubevirt.io/schedulable";
inline constexpr std::string_view cpu_manager_label = "kubevirt.io/cpumanager";
inline constexpr std::string_view deprecated_cpu_manager_label = "cpumanager";
inline constexpr std::string_view heartbeat_annotation = "kubevirt.io/heartbeat";

/// The <cpu><mode name='host-model'> of the domain capabilities.
struct HostModel {
  bool present = false;
  std::string name;  // <model>, e.g. "EPYC"
  std::string fallback;
  std::string vendor;                                         // <vendor>, "" when absent
  std::vector<std::pair<std::string, std::string>> features;  // (policy, name) in document order
};

/// What node labels need from virConnectGetDomainCapabilities.
struct DomainCapabilities {
  std::string arch;     // <arch>
  std::string machine;  // <machine>, the canonical machine type asked for (pc-q35-7.2)
  HostModel host_model;
  std::vector<std::string> usable_models;  // custom mode models with usable != "no"
  std::vector<std::string> known_models;   // every custom (and host-model) model with a usable attribute
  bool sev = false;                        // <features><sev supported='yes'>
  bool sev_es = false;                     // ... and maxESGuests > 0
  bool sev_snp = false;                    // ... and launchSecurity lists sev-snp
  bool tdx = false;                        // <features><tdx supported='yes'>
  bool secure_execution = false;           // <features><s390-pv supported='yes'>
};

/// The TSC counter of virConnectGetCapabilities' <host><cpu><counter name='tsc'>.
struct TscCounter {
  std::uint64_t frequency = 0;
  bool scaling = false;
};

/// What node labels need from virConnectGetCapabilities.
struct HostCapabilities {
  std::optional<TscCounter> tsc;
  std::vector<std::string> machines;  // every <guest><arch><machine>, names as written, deduplicated
};

/// Parses domain capabilities XML. Unknown elements and attributes are ignored (libvirt adds
/// them release by release). Errors: not well-formed XML, the root not <domainCapabilities>, a
/// host-model mode with no <model> (KubeVirt: "host model mode is expected to contain a model").
Result<DomainCapabilities> parse_domain_capabilities(std::string_view xml);

/// Parses capabilities XML. Errors: not well-formed, the root not <capabilities>.
Result<HostCapabilities> parse_host_capabilities(std::string_view xml);

/// The names of the features with policy "require" in virConnectBaselineHypervisorCPU's
/// answer (a <cpu>), KubeVirt's supported_features.xml. Errors: not well-formed, no <cpu> root.
Result<std::vector<std::string>> parse_baseline_features(std::string_view xml);

/// The host-model CPU as a <cpu mode='custom' match='exact'> document, the input of
/// virConnectBaselineHypervisorCPU with VIR_CONNECT_BASELINE_CPU_EXPAND_FEATURES (virsh does the
/// same conversion when node-labeller.sh pipes domcapabilities into hypervisor-cpu-baseline).
/// Empty when there is no host-model.
std::string host_model_cpu_xml(const HostModel& host_model);

/// KubeVirt's util.DefaultObsoleteCPUModels.
const std::set<std::string>& default_obsolete_cpu_models();

/// What the labeller reads from the KubeVirt CR.
struct KubeVirtSettings {
  /// spec.configuration.obsoleteCPUModels: the keys, whatever their value (KubeVirt tests the
  /// key's presence). nullopt when the CR has none: custom models are then filtered by the
  /// default list, but host-model is never marked obsolete (KubeVirt's GetObsoleteCPUModels is
  /// nil then, and node_labeller.go looks the host model up in that nil map).
  std::optional<std::set<std::string>> obsolete_cpu_models;
  bool use_emulation = false;       // developerConfiguration.useEmulation
  bool cpu_manager_gate = false;    // developerConfiguration.featureGates has "CPUManager"
  std::string source;               // "kubevirt/kubevirt", "" for the defaults; for logs
  std::vector<std::string> errors;  // malformed fields, ignored (the defaults used); for logs
};

/// The settings from the KubeVirt CRs of the install namespace (the caller lists that
/// namespace only). With several, KubeVirt's choice: not being deleted, then one with a
/// status.phase, then the first by name. None usable: the defaults.
KubeVirtSettings kubevirt_settings(std::span<const json::Value* const> kubevirts);

/// The libvirt virttype to query: "qemu" under emulation or without a usable KVM device; "kvm"
/// when the device node exists and a hardware KVM module (kvm_intel, kvm_amd) is loaded, as
/// vmgate-launcher's `--emulation auto` decides, so that the labels describe the CPU the
/// launcher will actually run.
std::string_view virt_type(bool use_emulation, bool kvm_device, bool hardware_kvm_module);

/// Everything the labels come from.
struct NodeFacts {
  DomainCapabilities domain;
  HostCapabilities host;
  std::vector<std::string> supported_features;  // parse_baseline_features
  std::vector<std::string> hyperv;              // KVM's Hyper-V enlightenments (kvm_caps)
  bool realtime = false;                        // kernel.sched_rt_runtime_us == -1
};

/// The labeller's labels for the node (NodeLabeller.prepareLabels on amd64). Keys whose name
/// part is not a valid label name (63 characters of [A-Za-z0-9._-], alphanumeric at both ends)
/// are left out, so that one odd model or machine name cannot get the whole patch refused.
std::map<std::string, std::string> node_labels(const NodeFacts& facts, const KubeVirtSettings& settings);

/// True for the keys the labeller owns (KubeVirt's nodeLabellerLabels prefixes, plus
/// cpu-vendor and s390-pv, which KubeVirt writes without listing): stale ones are removed.
bool is_labeller_label(std::string_view key);

/// A JSON merge patch of metadata.labels that sets `desired` and removes (null) the labeller
/// labels in `current` (the node's metadata.labels, or nullptr) that `desired` lacks; others'
/// labels are not mentioned. nullopt when nothing would change.
std::optional<std::string> labels_patch(const json::Value* current, const std::map<std::string, std::string>& desired);

/// True when the node carries node-labeller.kubevirt.io/skip-node (KubeVirt then leaves it alone).
bool skip_node(const json::Value& node);

/// The heartbeat's strategic merge patch: kubevirt.io/schedulable, the two cpumanager labels and
/// the kubevirt.io/heartbeat annotation (`now`, RFC 3339 as metav1.Now marshals it).
std::string heartbeat_patch(bool schedulable, bool cpu_manager, std::string_view now);

/// Whether the kubelet's cpu_manager_state (JSON) names the static policy.
bool cpu_manager_static(std::string_view cpu_manager_state);

}  // namespace vmgate::node
