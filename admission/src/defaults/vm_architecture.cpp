// Reads: VM spec.template.spec.architecture, spec.dataVolumeTemplates[*].spec.sourceRef; DataSource
// labels. Follows pkg/defaults/defaults.go setDefaultArchitectureFromDataSource and
// setDefaultArchitecture: DataSource lookup errors are ignored; unknown arch labels are skipped.

#include "vmgate/admission/defaults/vm.hpp"
#include "vmgate/admission/spec.hpp"
#include "vmgate/common/go_strings.hpp"

namespace vmgate::admission::defaults {

namespace {

std::string_view arch_from_data_sources(const json::Value& vm, std::string_view namespace_name,
                                        const ClusterView& cluster) {
  const json::Value* templates = json::find_path(vm, {"spec", "dataVolumeTemplates"});
  if (templates == nullptr || !templates->IsArray()) {
    return {};
  }
  for (const json::Value& dvt : templates->GetArray()) {
    const json::Value* ref = json::find_path(dvt, {"spec", "sourceRef"});
    if (ref == nullptr || !common::go_equal_fold(json::find_string(*ref, "kind"), "datasource")) {
      continue;
    }
    std::string_view source_namespace = json::find_string(*ref, "namespace");
    const json::Value* source =
        cluster.find(ObjectKind::data_source, source_namespace.empty() ? namespace_name : source_namespace,
                     json::find_string(*ref, "name"));
    if (source == nullptr) {
      continue;
    }
    if (const json::Value* nested = json::find_path(*source, {"spec", "source", "dataSource"});
        nested != nullptr && nested->IsObject()) {
      source = cluster.find(ObjectKind::data_source, json::find_string(*nested, "namespace"),
                            json::find_string(*nested, "name"));
      if (source == nullptr) {
        continue;
      }
    }
    const json::Value* labels = json::find_path(*source, {"metadata", "labels"});
    std::string_view arch = labels != nullptr ? json::find_string(*labels, "template.kubevirt.io/architecture") : "";
    if (arch == "amd64" || arch == "arm64" || arch == "s390x") {
      return arch;
    }
  }
  return {};
}

}  // namespace

void set_vm_architecture(json::Value& vm, std::string_view namespace_name, const ClusterView& cluster,
                         json::Allocator& allocator) {
  json::Value* template_spec = json::find_path(vm, {"spec", "template", "spec"});
  if (template_spec == nullptr || !template_spec->IsObject() || !spec::empty_string(*template_spec, "architecture")) {
    return;
  }
  std::string_view arch = arch_from_data_sources(vm, namespace_name, cluster);
  if (arch.empty()) {
    arch = cluster.config().default_architecture;
  }
  // Re-find: the lookup above only read, but keep the write on a fresh pointer.
  json::set_string(*json::find_path(vm, {"spec", "template", "spec"}), "architecture", arch, allocator);
}

void set_vm_machine_type(json::Value& vm, const ClusterConfig& config, json::Allocator& allocator) {
  json::Value* template_spec = json::find_path(vm, {"spec", "template", "spec"});
  if (template_spec == nullptr || !template_spec->IsObject()) {
    return;  // the validating webhook reports the missing template
  }
  json::Value& machine = json::ensure_object(spec::domain(*template_spec, allocator), "machine", allocator);
  if (spec::empty_string(machine, "type")) {
    json::set_string(machine, "type", config.machine_type_for(json::find_string(*template_spec, "architecture")),
                     allocator);
  }
}

bool supports_pcie_hotplug(const json::Value& vmi_spec, Release release) {
  const std::string_view arch = json::find_string(vmi_spec, "architecture");
  if (arch != "amd64" && arch != "arm64" && !arch.empty()) {
    return false;
  }
  if (release <= Release::v1_8) {
    return true;
  }
  const json::Value* machine = json::find_path(vmi_spec, {"domain", "machine"});
  if (machine != nullptr) {
    const std::string_view type = json::find_string(*machine, "type");
    if (type.find("q35") == std::string_view::npos && type.substr(0, 4) != "virt") {
      return false;
    }
  }
  return true;
}

bool annotates_pci_topology(const json::Value& vmi_spec, Release release) {
  return release >= Release::v1_8 && supports_pcie_hotplug(vmi_spec, release);
}

void set_pci_topology_version(json::Value& metadata, json::Allocator& allocator) {
  if (!metadata.IsObject()) {
    return;
  }
  json::Value& annotations = spec::annotations(metadata, allocator);
  if (json::find(annotations, "kubevirt.io/pci-topology-version") == nullptr) {
    json::set_string(annotations, "kubevirt.io/pci-topology-version", "v3", allocator);
  }
}

}  // namespace vmgate::admission::defaults
