// Reads: preference spec.cpu.preferredCPUFeatures; writes spec.domain.cpu.features.
// Follows pkg/instancetype/preference/apply/cpu.go, except that a missing domain.cpu is created
// instead of dereferencing nil (a KubeVirt bug for VMs without instancetype and cpu).
#include <string>
#include <unordered_set>

#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::preference {

void apply_cpu(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator) {
  const json::Value* cpu = json::find_object(preference, "cpu");
  const json::Value* preferred = cpu != nullptr ? json::find_array(*cpu, "preferredCPUFeatures") : nullptr;
  if (preferred == nullptr || preferred->Empty()) {
    return;
  }
  json::Value& vmi_cpu = json::ensure_object(spec::domain(vmi_spec, allocator), "cpu", allocator);
  json::Value& features = json::ensure_array(vmi_cpu, "features", allocator);
  // Owned strings: short names live inside the array's elements, which PushBack may move.
  std::unordered_set<std::string> names;
  for (const json::Value& feature : features.GetArray()) {
    names.emplace(json::find_string(feature, "name"));
  }
  for (const json::Value& feature : preferred->GetArray()) {
    if (!names.contains(std::string(json::find_string(feature, "name")))) {
      features.PushBack(json::copy(feature, allocator), allocator);
    }
  }
}

}  // namespace vmgate::admission::preference
