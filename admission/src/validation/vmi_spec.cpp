// The rule list of ValidateVirtualMachineInstanceSpec (vmi-create-admitter.go), in KubeVirt's order,
// restricted to the rules vmgate implements (see README: "Rules").
#include "vmgate/admission/compute/cpu_model.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_vmi_spec(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  ErrorList causes;
  if (!spec.IsObject()) {
    return causes;
  }
  append(causes, validate_quantities(spec, path));
  append(causes, validate_dns_names(spec, path));
  append(causes, validate_memory(spec, path, config));
  append(causes, validate_machine_type(spec, path, config));
  append(causes, validate_firmware_acpi(spec, path));
  append(causes, validate_cpu(spec, path));
  append(causes, validate_dedicated_cpu(spec, path, config));
  append(causes, cpu::validate_feature_policies(spec, path));
  append(causes, validate_cpu_hotplug(spec, path));
  append(causes, validate_start_strategy(spec, path));
  append(causes, validate_realtime(spec, path));
  append(causes, validate_affinity(spec, path));
  append(causes, validate_topology_spread(spec, path));
  append(causes, validate_architecture_gate(spec, path, config));
  append(causes, validate_network(spec, path, config));
  append(causes, validate_disk_volumes(spec, path, config));
  append(causes, validate_inputs(spec, path));
  append(causes, validate_io_threads_policy(spec, path));
  append(causes, validate_probes(spec, path));
  append(causes, validate_disk_fields(spec, path));
  append(causes, validate_firmware(spec, path));
  append(causes, validate_kernel_boot(spec, path));
  append(causes, validate_volumes(spec, path, config));
  append(causes, validate_container_disks(spec, path));
  append(causes, validate_utility_volumes(spec, path));
  append(causes, validate_access_credentials(spec, path));
  append(causes, validate_dns(spec, path));
  append(causes, validate_eviction_strategy(spec, path));
  append(causes, validate_gpu_displays(spec, path));
  append(causes, validate_host_devices(spec, path, config));
  append(causes, validate_sound(spec, path));
  append(causes, validate_launch_security(spec, path, config));
  append(causes, validate_vsock(spec, path, config));
  append(causes, validate_persistent_reservation(spec, path, config));
  append(causes, validate_downward_metrics_device(spec, path, config));
  append(causes, validate_virtiofs_storage(spec, path, config));
  append(causes, validate_video(spec, path, config));
  append(causes, validate_panic_devices(spec, path, config));
  append(causes, validate_reboot_policy(spec, path, config));
  append(causes, validate_reserved_overhead(spec, path, config));
  append(causes, validate_service_account_name(spec, path));
  return causes;
}

}  // namespace vmgate::admission::validation
