#pragma once
// Loads the cluster objects the rules read (instancetypes, preferences, PVCs, DataVolumes,
// DataSources, the KubeVirt CR) from manifest files into an ObjectStore: `vmgate check
// --objects` and `vmgate serve --objects` share it, so both see the same cluster.
// Thread-safety: no shared state; reads the file system and the given stream.
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/admission/pipeline.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/kube/manifest_loader.hpp"

namespace vmgate::kube {

struct LoadedCluster {
  admission::ObjectStore store;
  /// One note per object skipped because the store does not hold its kind
  /// ("objects.yaml#3: skipping kind Service").
  std::vector<std::string> notes;
};

/// "<source>: skipping kind <kind>" (with the apiVersion for a VM/VMI of another group).
std::string skip_note(const ManifestObject& object);

/// Loads every input (load_manifests) and adds the objects of the kinds the store holds;
/// namespaced objects without metadata.namespace get `default_namespace`.
/// Errors: load_manifests' errors; an instancetype or preference that
/// Pipeline::check_cluster_object refuses ("<source>: invalid VirtualMachinePreference:
/// spec.cpu.preferredCPUTopology: ..."), since the rules would otherwise read garbage; an
/// object the store refuses (no metadata.name, a malformed KubeVirt CR), named by source.
Result<LoadedCluster> load_cluster(const std::vector<std::string>& inputs, std::string_view default_namespace,
                                   const admission::Pipeline& pipeline, std::istream& standard_input);

}  // namespace vmgate::kube
