#pragma once
// What admission may read of the cluster: instancetypes, preferences, storage objects and the
// KubeVirt CR's configuration. ClusterView is the read interface the rules take; ObjectStore is
// the in-memory implementation fed by `vmgate check --objects`, `serve --objects` and (later)
// the Kubernetes watch cache.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vmgate/admission/release.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::admission {

enum class ObjectKind {
  instancetype,             // instancetype.kubevirt.io VirtualMachineInstancetype (namespaced)
  cluster_instancetype,     // VirtualMachineClusterInstancetype
  preference,               // VirtualMachinePreference (namespaced)
  cluster_preference,       // VirtualMachineClusterPreference
  persistent_volume_claim,  // core/v1 PersistentVolumeClaim
  data_volume,              // cdi.kubevirt.io DataVolume
  data_source,              // cdi.kubevirt.io DataSource
  volume_snapshot,          // snapshot.storage.k8s.io VolumeSnapshot
  controller_revision,      // apps/v1 ControllerRevision (instancetype revisions)
  kubevirt,                 // kubevirt.io KubeVirt (cluster configuration)
};

/// Kind, plural resource or short name (as kubectl accepts them), case-insensitive:
/// "VirtualMachineClusterInstancetype", "virtualmachineclusterinstancetypes", "vmcf", "pvc", "dv".
/// For user-facing lookups (CLI, object files); instancetype *matchers* follow KubeVirt's
/// stricter rule in instancetype/matcher_kind.hpp.
std::optional<ObjectKind> parse_object_kind(std::string_view name);
std::string_view kind_name(ObjectKind kind);       // "VirtualMachineClusterInstancetype"
std::string_view resource_name(ObjectKind kind);   // "virtualmachineclusterinstancetypes"
std::string_view group_resource(ObjectKind kind);  // "persistentvolumeclaims", "datasources.cdi.kubevirt.io"
bool is_namespaced(ObjectKind kind);

/// KubeVirt CR settings that admission reads (spec.configuration.*, status.defaultArchitecture).
struct ClusterConfig {
  std::string default_architecture = "amd64";
  std::string cpu_model;     // spec.configuration.cpuModel; empty: host-model
  std::string machine_type;  // spec.configuration.machineType (deprecated, all arches)
  std::unordered_map<std::string, std::string> arch_machine_type;  // architectureConfiguration.<arch>.machineType
  std::unordered_map<std::string, std::vector<std::string>> arch_emulated_machines;
  std::vector<std::string> feature_gates;                   // developerConfiguration.featureGates
  std::vector<std::string> disabled_feature_gates;          // developerConfiguration.disabledFeatureGates
  std::string instancetype_reference_policy = "reference";  // instancetype.referencePolicy
  std::string default_network_interface = "bridge";         // network.defaultNetworkInterface
  bool permit_bridge_interface_on_pod_network = true;       // network.permitBridgeInterfaceOnPodNetwork
  std::string eviction_strategy = "None";                   // evictionStrategy
  std::string vm_rollout_strategy = "LiveUpdate";           // vmRolloutStrategy
  std::uint32_t max_hotplug_ratio = 4;                      // liveUpdateConfiguration.maxHotplugRatio
  std::uint32_t max_cpu_sockets = 0;                        // liveUpdateConfiguration.maxCpuSockets
  std::string max_guest;                                    // liveUpdateConfiguration.maxGuest (quantity)
  std::string cpu_request;                                  // cpuRequest (quantity; "" = 100m default)
  // Read for the launcher pod (the controller), not by admission: developerConfiguration.*.
  std::int64_t cpu_allocation_ratio = 10;             // cpuAllocationRatio: a pod requests vCPUs / ratio
  std::int64_t memory_overcommit = 100;               // memoryOvercommit: percent of the guest's memory
  std::map<std::string, std::string> node_selectors;  // nodeSelectors: added to every launcher pod's
  std::optional<bool> persistent_reservation;         // persistentReservationConfiguration.enabled
  bool emulator_thread_even_parity =
      false;  // metadata.annotations has alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity
  /// Why the KubeVirt CR's configuration was not applied (KubeVirt's validateConfig message), or
  /// empty. When set, every other member holds the defaults, as on a cluster with that CR.
  std::string ignored_configuration;
  /// The KubeVirt release the rules judge as: --kubevirt-version when given (Pipeline pins it),
  /// else the release status.observedKubeVirtVersion names, else the newest supported one.
  Release release = newest_release;
  ReleaseSource release_source = ReleaseSource::newest;
  std::string observed_kubevirt_version;  // status.observedKubeVirtVersion as the CR says it

  /// Machine type for an architecture: the deprecated machineType, else architectureConfiguration,
  /// else the per-arch default (amd64 q35, arm64 virt, s390x s390-ccw-virtio).
  [[nodiscard]] std::string machine_type_for(std::string_view arch) const;
  /// Globs of accepted machine types for an arch (amd64: q35*, pc-q35*).
  [[nodiscard]] std::vector<std::string> emulated_machines_for(std::string_view arch) const;
  [[nodiscard]] bool feature_gate_enabled(std::string_view gate) const;
  /// persistentReservationConfiguration.enabled when set, else whether the CR lists the
  /// PersistentReservation gate (GA, yet still opt-in: virt-config.go PersistentReservationEnabled).
  [[nodiscard]] bool persistent_reservation_enabled() const;

  /// Reads a KubeVirt CR. Unknown or mistyped settings keep their defaults and are reported
  /// as errors naming the field, so a broken CR is never silently half-read.
  static Result<ClusterConfig> from_kubevirt(const json::Value& kubevirt);
};

/// Read access to cluster objects. Thread-safety: implementations are immutable snapshots
/// and safe to read from many threads.
class ClusterView {
 public:
  virtual ~ClusterView() = default;
  /// The object, or nullptr. `namespace_name` is ignored for cluster-scoped kinds.
  [[nodiscard]] virtual const json::Value* find(ObjectKind kind, std::string_view namespace_name,
                                                std::string_view name) const = 0;
  [[nodiscard]] virtual const ClusterConfig& config() const = 0;
  /// Why an object that exists in the cluster cannot be read by the rules ("spec.memory.guest
  /// '999999999999Ei': ..."), for an object find() does not return; empty when it is readable
  /// or absent. A source that refuses such objects when they are loaded (files) has none.
  [[nodiscard]] virtual std::string_view unreadable(ObjectKind /*kind*/, std::string_view /*namespace_name*/,
                                                    std::string_view /*name*/) const {
    return {};
  }
};

/// In-memory objects with O(1) lookup by (kind, namespace, name).
class ObjectStore final : public ClusterView {
 public:
  ObjectStore();
  ObjectStore(ObjectStore&&) noexcept;
  ObjectStore& operator=(ObjectStore&&) noexcept;
  ~ObjectStore() override;

  /// Adds (or replaces) an object. Its kind comes from `kind`; namespaced objects without
  /// metadata.namespace get `default_namespace`. A KubeVirt CR also sets config().
  /// Errors: kind not held by the store, missing or non-string metadata.name, bad KubeVirt CR.
  Result<ObjectKind> add(const json::Value& object, std::string_view default_namespace = "default");

  [[nodiscard]] const json::Value* find(ObjectKind kind, std::string_view namespace_name,
                                        std::string_view name) const override;
  [[nodiscard]] const ClusterConfig& config() const override;
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::size_t count(ObjectKind kind) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vmgate::admission
