// Reads: the whole admitted VM; instancetype and preference specs; cluster configuration.
// Follows vm.go SetupVMIFromVM/startVMI (setupStableFirmwareUUID with firmware.go
// CalculateLegacyUUID), controller.go ApplyToVMI and annotations.Set, and expand.go Expand.
#include "vmgate/admission/expand/expand.hpp"

#include <boost/uuid/name_generator_sha1.hpp>
#include <boost/uuid/uuid_io.hpp>

#include "vmgate/admission/defaults/vmi.hpp"
#include "vmgate/admission/instancetype/apply.hpp"
#include "vmgate/admission/instancetype/find.hpp"
#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::expand {

namespace {

using json::Allocator;
using json::Value;

std::string join(const std::vector<std::string>& fields) {
  std::string out;
  for (const std::string& field : fields) {
    out.append(out.empty() ? "" : ", ").append(field);
  }
  return out;
}

// pkg/virt-controller/watch/vm/firmware.go CalculateLegacyUUID: a version 5 UUID of the VM name in
// KubeVirt's namespace 6a1a24a1-4061-4607-8bf4-a3963d0c5895, so vmgate predicts the same value.
std::string legacy_firmware_uuid(std::string_view name) {
  constexpr boost::uuids::uuid kubevirt_namespace{
      {0x6a, 0x1a, 0x24, 0xa1, 0x40, 0x61, 0x46, 0x07, 0x8b, 0xf4, 0xa3, 0x96, 0x3d, 0x0c, 0x58, 0x95}};
  const boost::uuids::name_generator_sha1 generate(kubevirt_namespace);
  return boost::uuids::to_string(generate(name.data(), name.size()));
}

// annotations.Set: the kind decides between the namespaced and the cluster annotation.
void annotate(const Value& vm, instancetype::MatcherType type, Value& metadata, Allocator& allocator) {
  const bool is_instancetype = type == instancetype::MatcherType::instancetype;
  const Value* matcher = json::find_path(vm, {"spec", is_instancetype ? "instancetype" : "preference"});
  if (matcher == nullptr || !matcher->IsObject()) {
    return;
  }
  Result<ObjectKind> kind = instancetype::matcher_kind(type, json::find_string(*matcher, "kind"));
  if (!kind) {
    return;
  }
  const bool namespaced = *kind == ObjectKind::instancetype || *kind == ObjectKind::preference;
  const std::string key = std::string("kubevirt.io/") + (namespaced ? "" : "cluster-") +
                          (is_instancetype ? "instancetype-name" : "preference-name");
  json::set_string(spec::annotations(metadata, allocator), key, json::find_string(*matcher, "name"), allocator);
}

// SetupVMIFromVM: metav1.NewControllerRef(vm, VirtualMachine's GVK).
void set_owner_reference(const Value* vm_metadata, Value& metadata, Allocator& allocator) {
  Value owner(rapidjson::kObjectType);
  json::set_string(owner, "apiVersion", "kubevirt.io/v1", allocator);
  json::set_string(owner, "kind", "VirtualMachine", allocator);
  json::set_string(owner, "name", vm_metadata != nullptr ? json::find_string(*vm_metadata, "name") : "", allocator);
  json::set_string(owner, "uid", vm_metadata != nullptr ? json::find_string(*vm_metadata, "uid") : "", allocator);
  json::set(owner, "controller", Value(true), allocator);
  json::set(owner, "blockOwnerDeletion", Value(true), allocator);
  Value owners(rapidjson::kArrayType);
  owners.PushBack(std::move(owner), allocator);
  json::set(metadata, "ownerReferences", std::move(owners), allocator);
}

// startVMI: the VM's generation (1 for a VM being created: the API server sets it) and, for
// WaitAsReceiver, the migration-target request.
void set_start_annotations(const Value& vm, Value& metadata, Allocator& allocator) {
  const Value* generation = json::find_path(vm, {"metadata", "generation"});
  const std::int64_t value = generation != nullptr && generation->IsInt64() ? generation->GetInt64() : 1;
  Value& annotations = spec::annotations(metadata, allocator);
  json::set_string(annotations, "kubevirt.io/vm-generation", std::to_string(value), allocator);
  const Value* run_strategy = json::find_path(vm, {"spec", "runStrategy"});
  if (run_strategy != nullptr && run_strategy->IsString() && json::as_view(*run_strategy) == "WaitAsReceiver") {
    json::set_string(annotations, "kubevirt.io/create-migration-target", "true", allocator);
  }
}

}  // namespace

Result<json::Document> build_vmi(const json::Value& vm, std::string_view namespace_name, const ClusterView& cluster) {
  json::Document vmi(rapidjson::kObjectType);
  Allocator& allocator = vmi.GetAllocator();
  const Value* template_value = json::find_path(vm, {"spec", "template"});
  if (template_value == nullptr || !template_value->IsObject()) {
    return Error{"missing virtual machine template."};
  }
  vmi.AddMember("apiVersion", "kubevirt.io/v1", allocator);
  vmi.AddMember("kind", "VirtualMachineInstance", allocator);
  Value metadata(rapidjson::kObjectType);
  if (const Value* template_metadata = json::find_object(*template_value, "metadata")) {
    metadata.CopyFrom(*template_metadata, allocator);
  }
  const Value* vm_metadata = json::find_object(vm, "metadata");
  const std::string_view name = vm_metadata != nullptr ? json::find_string(*vm_metadata, "name") : "";
  json::erase(metadata, "generateName");
  json::set_string(metadata, "name", name, allocator);
  json::set_string(metadata, "namespace", namespace_name, allocator);
  vmi.AddMember("metadata", std::move(metadata), allocator);
  Value spec_value(rapidjson::kObjectType);
  if (const Value* template_spec = json::find_object(*template_value, "spec")) {
    spec_value.CopyFrom(*template_spec, allocator);
  }
  vmi.AddMember("spec", std::move(spec_value), allocator);
  Value& spec_ref = *json::find(vmi, "spec");

  // setupStableFirmwareUUID: the VM mutator normally set one; otherwise KubeVirt's legacy UUID.
  Value& firmware = json::ensure_object(spec::domain(spec_ref, allocator), "firmware", allocator);
  if (spec::empty_string(firmware, "uuid")) {
    json::set_string(firmware, "uuid", legacy_firmware_uuid(name), allocator);
  }
  set_owner_reference(vm_metadata, *json::find(vmi, "metadata"), allocator);
  defaults::set_default_volume_disks(spec_ref, allocator);
  set_start_annotations(vm, *json::find(vmi, "metadata"), allocator);
  json::ensure_array(*json::find(vmi, "metadata"), "finalizers", allocator)
      .PushBack(json::make_string("kubevirt.io/virtualMachineControllerFinalize", allocator), allocator);

  // The controller looks up any matcher, a nameless one too (an inference that left `{}`).
  Result<instancetype::FoundSpec> found_instancetype = instancetype::find_spec(
      instancetype::MatcherType::instancetype, vm, namespace_name, cluster, instancetype::NamelessMatcher::look_up);
  if (!found_instancetype) {
    return found_instancetype.error();
  }
  Result<instancetype::FoundSpec> found_preference = instancetype::find_spec(
      instancetype::MatcherType::preference, vm, namespace_name, cluster, instancetype::NamelessMatcher::look_up);
  if (!found_preference) {
    return found_preference.error();
  }
  const Value* instancetype_spec = found_instancetype->spec;
  const Value* preference_spec = found_preference->spec;

  // Autoattach preferences come before the controller adds the default input and pod network.
  if (preference_spec != nullptr) {
    preference::apply_autoattach(*preference_spec, *json::find(vmi, "spec"), allocator);
  }
  Value& devices = spec::devices(*json::find(vmi, "spec"), allocator);
  if (spec::is_true(devices, "autoattachInputDevice") && spec::empty_list(devices, "inputs")) {
    Value input(rapidjson::kObjectType);
    input.AddMember("name", "default-0", allocator);
    json::ensure_array(devices, "inputs", allocator).PushBack(std::move(input), allocator);
  }
  if (auto error = defaults::set_default_network_interface(*json::find(vmi, "spec"), cluster.config(), allocator)) {
    return Error{*error};
  }
  if (instancetype_spec == nullptr && preference_spec == nullptr) {
    return vmi;
  }
  annotate(vm, instancetype::MatcherType::instancetype, *json::find(vmi, "metadata"), allocator);
  annotate(vm, instancetype::MatcherType::preference, *json::find(vmi, "metadata"), allocator);
  std::vector<std::string> conflicts =
      instancetype::apply_with_preference(instancetype_spec, preference_spec, *json::find(vmi, "spec"),
                                          *json::find(vmi, "metadata"), "spec", allocator, cluster.config().release);
  if (!conflicts.empty()) {
    return Error{"VMI conflicts with instancetype spec in fields: [" + join(conflicts) + "]"};
  }
  return vmi;
}

bool expand_vm_in_place(json::Document& vm, std::string_view namespace_name, const ClusterView& cluster) {
  Value* spec_value = json::find(vm, "spec");
  if (spec_value == nullptr || !spec_value->IsObject() ||
      (!json::has(*spec_value, "instancetype") && !json::has(*spec_value, "preference"))) {
    return false;
  }
  Result<instancetype::FoundSpec> found_instancetype =
      instancetype::find_spec(instancetype::MatcherType::instancetype, vm, namespace_name, cluster);
  Result<instancetype::FoundSpec> found_preference =
      instancetype::find_spec(instancetype::MatcherType::preference, vm, namespace_name, cluster);
  if (!found_instancetype || !found_preference) {
    return false;
  }
  json::Document expanded;
  expanded.CopyFrom(vm, expanded.GetAllocator());
  Allocator& allocator = expanded.GetAllocator();
  Value* template_value = json::find_path(expanded, {"spec", "template"});
  if (template_value == nullptr || !template_value->IsObject()) {
    return false;
  }
  Value& template_spec = json::ensure_object(*template_value, "spec", allocator);
  defaults::set_default_volume_disks(template_spec, allocator);
  if (defaults::set_default_network_interface(template_spec, cluster.config(), allocator)) {
    return false;
  }
  json::ensure_object(*template_value, "metadata", allocator);
  std::vector<std::string> conflicts = instancetype::apply_with_preference(
      found_instancetype->spec, found_preference->spec, *json::find(*template_value, "spec"),
      *json::find(*template_value, "metadata"), "spec.template.spec", allocator, cluster.config().release);
  if (!conflicts.empty()) {
    return false;
  }
  if (defaults::set_spec_defaults(*json::find(*template_value, "spec"), cluster.config(), allocator)) {
    return false;
  }
  Value& expanded_spec = *json::find(expanded, "spec");
  json::erase(expanded_spec, "instancetype");
  json::erase(expanded_spec, "preference");
  if (Value* status = json::find(expanded, "status"); status != nullptr && status->IsObject()) {
    json::erase(*status, "instancetypeRef");
    json::erase(*status, "preferenceRef");
  }
  vm.Swap(expanded);
  return true;
}

}  // namespace vmgate::admission::expand
