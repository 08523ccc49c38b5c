// Launcher pods and their status files (launcher_status.hpp). Reads: the pod's labels,
// spec.nodeName, spec.hostNetwork, metadata.ownerReferences and uid; the status file's phase,
// reason, paused and timestamps. Follows the contract of docs/node.md and KubeVirt's virt-handler, which
// finds a VMI's pod by the controller owner reference (pkg/controller ... GetControllerOf).
#include "vmgate/node/launcher_status.hpp"

#include <algorithm>
#include <array>

#include "vmgate/admission/validation/dns1123.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/vmi_status.hpp"

namespace vmgate::node {
namespace {

constexpr std::array<std::string_view, 4> phases{"Scheduled", "Running", "Succeeded", "Failed"};

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// Kubernetes uids are UUIDs (8-4-4-4-12, lower-case hex); the pod's becomes a path component.
bool is_uid(std::string_view text) {
  if (text.size() != 36) {
    return false;
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !is_hex(text[i])) {
      return false;
    }
  }
  return true;
}

// A DNS subdomain (RFC 1123, apimachinery's check), the form of object names: it goes into an
// API path.
bool is_object_name(std::string_view text) {
  return admission::validation::dns1123_subdomain_errors(text).empty();
}

bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == '\x7f'; });
}

}  // namespace

Result<LauncherStatus> parse_launcher_status(std::string_view text) {
  if (text.size() > max_status_file_bytes) {
    return Error{"larger than " + std::to_string(max_status_file_bytes) + " bytes"};
  }
  // Depth 2 is all the format has ({"timestamps":{...}}): deeper nesting is refused while parsing.
  Result<json::Document, json::DecodeError> parsed = json::parse_json(text, {.max_depth = 2});
  if (!parsed) {
    return Error{"not JSON: " + parsed.error().message};
  }
  const json::Value& root = *parsed;
  if (!root.IsObject()) {
    return Error{"not a JSON object"};
  }
  const json::Value* phase = json::find(root, "phase");
  if (phase == nullptr || !phase->IsString()) {
    return Error{"phase: not a string"};
  }
  const std::string_view phase_text = json::as_view(*phase);
  if (std::find(phases.begin(), phases.end(), phase_text) == phases.end()) {
    return Error{"phase: not one of Scheduled, Running, Succeeded, Failed"};
  }
  const json::Value* reason = json::find(root, "reason");
  if (reason == nullptr || !reason->IsString()) {
    return Error{"reason: not a string"};
  }
  const std::string_view reason_text = json::as_view(*reason);
  if (reason_text.size() > max_status_reason_bytes) {
    return Error{"reason: longer than " + std::to_string(max_status_reason_bytes) + " bytes"};
  }
  if (has_control_character(reason_text)) {
    return Error{"reason: holds control characters"};
  }
  if (const json::Value* timestamps = json::find(root, "timestamps"); timestamps != nullptr) {
    if (!timestamps->IsObject()) {
      return Error{"timestamps: not an object"};
    }
    for (const auto& member : timestamps->GetObject()) {
      if (!member.value.IsString()) {
        return Error{"timestamps: a value is not a string"};
      }
    }
  }
  bool paused = reason_text.find("started paused") != std::string_view::npos;
  if (const json::Value* flag = json::find(root, "paused"); flag != nullptr) {
    if (!flag->IsBool()) {
      return Error{"paused: not a boolean"};
    }
    paused = flag->GetBool();
  }
  return LauncherStatus{std::string(phase_text), std::string(reason_text), paused};
}

bool is_final_phase(std::string_view phase) {
  return phase == "Succeeded" || phase == "Failed";
}

Result<LauncherPod> launcher_pod(const json::Value& pod, std::string_view node_name) {
  const json::Value* metadata = json::find_object(pod, "metadata");
  const json::Value* spec = json::find_object(pod, "spec");
  if (metadata == nullptr || spec == nullptr) {
    return Error{"no metadata or spec"};
  }
  const json::Value* labels = json::find_object(*metadata, "labels");
  if (labels == nullptr || json::find_string(*labels, "kubevirt.io") != "virt-launcher") {
    return Error{"not labelled kubevirt.io=virt-launcher"};
  }
  if (json::find_string(*spec, "nodeName") != node_name) {
    return Error{"not on this node"};
  }
  LauncherPod result;
  result.namespace_name = std::string(json::find_string(*metadata, "namespace"));
  result.name = std::string(json::find_string(*metadata, "name"));
  result.uid = std::string(json::find_string(*metadata, "uid"));
  if (!is_object_name(result.namespace_name) || result.name.empty()) {
    return Error{"no namespace or name"};
  }
  if (!is_uid(result.uid)) {
    return Error{"metadata.uid is not a UUID"};
  }
  const json::Value* host_network = json::find(*spec, "hostNetwork");
  result.host_network = host_network != nullptr && host_network->IsBool() && host_network->GetBool();

  // The controller owner, as apimachinery's GetControllerOf: the one reference with controller
  // true. Any other reference (a VMI named without controller: true) is not the pod's VMI.
  const json::Value* owners = json::find_array(*metadata, "ownerReferences");
  const json::Value* controller = nullptr;
  if (owners != nullptr) {
    for (const json::Value& owner : owners->GetArray()) {
      const json::Value* flag = json::find(owner, "controller");
      if (flag == nullptr || !flag->IsBool() || !flag->GetBool()) {
        continue;
      }
      if (controller != nullptr) {
        return Error{"more than one controller owner reference"};
      }
      controller = &owner;
    }
  }
  if (controller == nullptr) {
    return Error{"no controller owner reference"};
  }
  const std::string_view api_version = json::find_string(*controller, "apiVersion");
  if (json::find_string(*controller, "kind") != "VirtualMachineInstance" ||
      api_version.substr(0, api_version.find('/')) != "kubevirt.io") {
    return Error{"the controller owner is not a kubevirt.io VirtualMachineInstance"};
  }
  result.vmi_name = std::string(json::find_string(*controller, "name"));
  result.vmi_uid = std::string(json::find_string(*controller, "uid"));
  if (!is_object_name(result.vmi_name)) {
    return Error{"the owner reference's name is not an object name"};
  }
  if (!is_uid(result.vmi_uid)) {
    return Error{"the owner reference's uid is not a UUID"};
  }
  return result;
}

std::string private_dir(std::string_view kubelet_root, std::string_view pod_uid) {
  std::string path(kubelet_root);
  while (path.size() > 1 && path.back() == '/') {
    path.pop_back();
  }
  return path + "/pods/" + std::string(pod_uid) + "/volumes/kubernetes.io~empty-dir/private";
}

json::Document launcher_status_patch(std::string_view vmi_uid, const LauncherStatus& status, std::string_view node_name,
                                     std::string_view now) {
  // The supervisor's stop request is the reason of the Running it writes then ("stop requested:
  // ACPI shutdown"); the launcher's own api link remembers it the same way.
  const bool stopping = status.reason.starts_with("stop requested");
  json::Document patch = kube::vmi_status_patch(vmi_uid, status.phase, status.reason, stopping, status.paused, now);
  json::set_string(json::ensure_object(patch, "status", patch.GetAllocator()), "nodeName", node_name,
                   patch.GetAllocator());
  return patch;
}

bool needs_report(const ReportState& state, const LauncherStatus& current) {
  if (!state.written) {
    return true;
  }
  return !is_final_phase(state.written->phase) && *state.written != current;
}

}  // namespace vmgate::node
