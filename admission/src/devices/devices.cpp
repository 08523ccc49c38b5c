// Reads: spec.domain.devices.{inputs[*].{bus,type}, hostDevices}, spec.domain.ioThreadsPolicy.
// Follows vmi-create-admitter.go validateInputDevices, validateIOThreadsPolicy and
// validateHostDevicesWithPassthroughEnabled.
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {

ErrorList validate_inputs(const json::Value& spec, const FieldPath& path) {
  ErrorList causes;
  const json::Value* inputs = json::find_path(spec, {"domain", "devices", "inputs"});
  if (inputs == nullptr || !inputs->IsArray()) {
    return causes;
  }
  const FieldPath inputs_path = path.child("domain").child("devices").child("inputs");
  for (rapidjson::SizeType i = 0; i < inputs->Size(); ++i) {
    const std::string_view bus = json::find_string((*inputs)[i], "bus");
    if (bus != "virtio" && bus != "usb" && !bus.empty()) {
      causes.push_back({CauseType::field_value_invalid, inputs_path.index(i).child("bus").str(),
                        "Input device can have only virtio or usb bus."});
    }
    if (json::find_string((*inputs)[i], "type") != "tablet") {
      causes.push_back({CauseType::field_value_invalid, inputs_path.index(i).child("type").str(),
                        "Input device can have only tablet type."});
    }
  }
  return causes;
}

ErrorList validate_io_threads_policy(const json::Value& spec, const FieldPath& path) {
  const json::Value* domain = json::find_object(spec, "domain");
  const json::Value* policy = domain != nullptr ? json::find(*domain, "ioThreadsPolicy") : nullptr;
  if (policy == nullptr || policy->IsNull()) {
    return {};
  }
  const std::string_view value = policy->IsString() ? json::as_view(*policy) : std::string_view{};
  if (value != "shared" && value != "auto" && value != "supplementalPool") {
    return {{CauseType::field_value_invalid, path.child("domain").child("ioThreadsPolicy").str(),
             "Invalid IOThreadsPolicy (" + std::string(value) + ")"}};
  }
  if (value == "supplementalPool") {
    const json::Value* threads = json::find_object(*domain, "ioThreads");
    const json::Value* count = threads != nullptr ? json::find(*threads, "supplementalPoolThreadCount") : nullptr;
    if (count == nullptr || !count->IsInt64() || count->GetInt64() < 1) {
      // KubeVirt names a field that does not exist (ioThreads.count); kept for identical causes.
      return {{CauseType::field_value_invalid, path.child("domain").child("ioThreads").child("count").str(),
               "the number of iothreads needs to be set and positive for the dedicated policy"}};
    }
  }
  return {};
}

ErrorList validate_host_devices(const json::Value& spec, const FieldPath& path, const ClusterConfig& config) {
  // Go tests `HostDevices != nil`: an empty list `[]` counts as set.
  const json::Value* devices = json::find_path(spec, {"domain", "devices"});
  if (devices == nullptr || spec::unset(*devices, "hostDevices") || config.feature_gate_enabled("HostDevices")) {
    return {};
  }
  // KubeVirt's field is `<spec>.HostDevices` (field.Child("HostDevices")), not the device list's path.
  return {{CauseType::field_value_invalid, path.child("HostDevices").str(),
           "Host Devices feature gate is not enabled in kubevirt-config"}};
}

}  // namespace vmgate::admission::validation
