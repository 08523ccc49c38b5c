// Reads/writes: spec.domain.cpu.model; reads the KubeVirt CR's spec.configuration.cpuModel.
// Follows pkg/defaults/defaults.go setDefaultCPUModel (VMI CREATE only; VM templates never get it).
#include "vmgate/admission/compute/cpu_model.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::cpu {

void set_default_model(json::Value& vmi_spec, const ClusterConfig& config, json::Allocator& allocator) {
  json::Value& cpu = json::ensure_object(spec::domain(vmi_spec, allocator), "cpu", allocator);
  if (!spec::empty_string(cpu, "model")) {
    return;
  }
  json::set_string(cpu, "model", config.cpu_model.empty() ? default_model : std::string_view(config.cpu_model),
                   allocator);
}

}  // namespace vmgate::admission::cpu
