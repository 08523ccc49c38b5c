#include "vmgate/launcher/vmi_source.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "vmgate/admission/pipeline.hpp"
#include "vmgate/kube/cluster_loader.hpp"
#include "vmgate/kube/watch_cache.hpp"
#include "vmgate/kube/manifest_loader.hpp"

namespace vmgate::launcher {
namespace {

Result<const kube::ManifestObject*> single_object(const std::vector<kube::ManifestObject>& objects,
                                                  const std::string& file, std::string_view kind) {
  if (objects.size() != 1) {
    return Error{file + ": expected exactly one " + std::string(kind) + ", found " + std::to_string(objects.size()) +
                 " objects"};
  }
  const std::string_view found = json::find_string(objects.front().object(), "kind");
  if (found != kind) {
    return Error{objects.front().source + ": expected kind " + std::string(kind) + ", not \"" + std::string(found) +
                 "\""};
  }
  return &objects.front();
}

void default_namespace(json::Document& vmi, const std::string& namespace_name) {
  json::Value& metadata = json::ensure_object(vmi, "metadata", vmi.GetAllocator());
  if (json::find_string(metadata, "namespace").empty()) {
    json::set_string(metadata, "namespace", namespace_name, vmi.GetAllocator());
  }
}

}  // namespace

bool admitted(const json::Value& vmi) {
  const json::Value* finalizers = json::find_path(vmi, {"metadata", "finalizers"});
  if (finalizers == nullptr || !finalizers->IsArray()) {
    return false;
  }
  for (const json::Value& finalizer : finalizers->GetArray()) {
    if (finalizer.IsString() && json::as_view(finalizer) == admitted_finalizer) {
      return true;
    }
  }
  return false;
}

Result<json::Document> load_vmi(const LauncherOptions& options, std::istream& standard_input) {
  const bool from_vm = !options.vm_file.empty();
  const std::string& file = from_vm ? options.vm_file : options.vmi_file;
  Result<std::vector<kube::ManifestObject>> loaded = kube::load_manifests({file}, standard_input);
  if (!loaded) {
    return loaded.error();
  }
  Result<const kube::ManifestObject*> object =
      single_object(*loaded, file, from_vm ? "VirtualMachine" : "VirtualMachineInstance");
  if (!object) {
    return object.error();
  }
  json::Document vmi;
  if (!from_vm && admitted((*object)->object())) {
    vmi.CopyFrom((*object)->object(), vmi.GetAllocator());
    default_namespace(vmi, options.namespace_name);
    return vmi;
  }
  const admission::Pipeline pipeline(options.release);
  Result<kube::LoadedCluster> cluster =
      kube::load_cluster(options.objects, options.namespace_name, pipeline, standard_input);
  if (!cluster) {
    return cluster.error();
  }
  if (!from_vm) {
    // A VMI admission has not seen yet: the VMI webhooks' defaults (mutate, validate), so that
    // what boots is what KubeVirt would boot (a disk without a bus is sata on amd64, the sockets
    // come from the CPU limit, ...). No request time: the Pending transition stays unrecorded.
    vmi.CopyFrom((*object)->object(), vmi.GetAllocator());
    default_namespace(vmi, options.namespace_name);
    admission::Request request;
    request.resource = admission::Resource::virtual_machine_instance;
    request.namespace_name = std::string(json::find_string(*json::find(vmi, "metadata"), "namespace"));
    request.object = &vmi;
    admission::Outcome outcome = pipeline.admit(request, cluster->store);
    if (!outcome.verdict.allowed) {
      return Error{"admission denied the VirtualMachineInstance: " + outcome.verdict.message};
    }
    json::Document defaulted;
    defaulted.Swap(outcome.admitted);
    return defaulted;
  }
  admission::Request request;
  request.resource = admission::Resource::virtual_machine;
  request.namespace_name = options.namespace_name;
  request.object = &(*object)->object();
  admission::Outcome outcome = pipeline.admit(request, cluster->store);
  if (!outcome.verdict.allowed) {
    return Error{"admission denied the VirtualMachine: " + outcome.verdict.message};
  }
  // admit() admits a VM it cannot expand yet (the webhook only warns); the launcher needs the VMI.
  if (outcome.expansion_error) {
    return Error{"cannot expand the VirtualMachine: " + outcome.expansion_error->message};
  }
  vmi.Swap(outcome.expanded);
  default_namespace(vmi, options.namespace_name);
  return vmi;
}

bool use_software_emulation(Emulation emulation) {
  switch (emulation) {
    case Emulation::software:
      return true;
    case Emulation::kvm:
      return false;
    case Emulation::auto_detect:
      break;
  }
  std::error_code error;
  const bool kvm_device = std::filesystem::exists("/dev/kvm", error);
  const bool hardware_module =
      std::filesystem::exists("/sys/module/kvm_intel", error) || std::filesystem::exists("/sys/module/kvm_amd", error);
  return !(kvm_device && hardware_module);
}

}  // namespace vmgate::launcher
