// pause, unpause and console of a VirtualMachineInstance: what virt-api checks before it
// forwards the request to virt-handler on the VMI's node (lifecycle.go's validate functions,
// console.go's validateVMIForConsole).
#include "object_fields.hpp"
#include "vmgate/server/subresource_api.hpp"

namespace vmgate::subresources {

namespace {

constexpr std::string_view vmi_kind = "virtualmachineinstance";

using fields::name_of;
using fields::phase_of;

// ConditionManager.HasCondition: the type, whatever its status.
bool has_condition(const json::Value& vmi, std::string_view type) {
  return fields::has_condition(vmi, type);
}

}  // namespace

std::optional<ApiStatus> check_pause(const json::Value& vmi) {
  const std::string_view name = name_of(vmi);
  if (phase_of(vmi) != "Running") {
    return conflict(vmi_kind, name, "VM is not running");
  }
  if (const json::Value* probe = json::find_path(vmi, {"spec", "livenessProbe"});
      probe != nullptr && !probe->IsNull()) {
    return forbidden(vmi_kind, name, "Pausing VMIs with LivenessProbe is currently not supported");
  }
  if (has_condition(vmi, "Paused")) {
    return conflict(vmi_kind, name, "VMI is already paused");
  }
  return std::nullopt;
}

std::optional<ApiStatus> check_unpause_vm(const json::Value* vm, std::string_view name) {
  if (vm == nullptr) {
    return std::nullopt;
  }
  if (const json::Value* snapshot = json::find_path(*vm, {"status", "snapshotInProgress"});
      snapshot != nullptr && !snapshot->IsNull()) {
    return conflict("virtualmachine", name, "VM snapshot is in progress");
  }
  return std::nullopt;
}

std::optional<ApiStatus> check_unpause(const json::Value& vmi) {
  const std::string_view name = name_of(vmi);
  if (phase_of(vmi) != "Running") {
    return conflict(vmi_kind, name, "VMI is not running");
  }
  if (!has_condition(vmi, "Paused")) {
    return conflict(vmi_kind, name, "VMI is not paused");
  }
  return std::nullopt;
}

std::optional<ApiStatus> check_console(const json::Value& vmi) {
  const json::Value* autoattach = json::find_path(vmi, {"spec", "domain", "devices", "autoattachSerialConsole"});
  if (autoattach != nullptr && autoattach->IsBool() && !autoattach->GetBool()) {
    return bad_request("No serial consoles are present.");
  }
  if (phase_of(vmi) == "Failed") {
    return conflict(vmi_kind, name_of(vmi), "VMI is in failed status");
  }
  if (phase_of(vmi) != "Running") {
    return bad_request("VMI is not running");
  }
  return std::nullopt;
}

}  // namespace vmgate::subresources
