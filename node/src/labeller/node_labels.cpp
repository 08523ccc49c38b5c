// The node labeller's labels, their owner and the patches. Reads the facts of
// capabilities_xml.cpp and the KubeVirt CR's spec.configuration.{obsoleteCPUModels,
// developerConfiguration.{useEmulation,featureGates}}. KubeVirt: node_labeller.go
// (prepareLabels, nodeLabellerLabels, isNodeLabellerLabel, skipNodeLabelling), cpu_plugin.go
// (filterCpuModels), util/util.go (DefaultObsoleteCPUModels), heartbeat.go (do, the patch).
#include <algorithm>
#include <array>

#include "vmgate/common/json_decode.hpp"
#include "vmgate/node/node_labels.hpp"

namespace vmgate::node {

namespace {

constexpr std::string_view true_value = "true";

// KubeVirt's nodeLabellerLabels, with the two label prefixes prepareLabels writes but the
// list forgets (cpu-vendor, s390-pv): a label we write is one we may remove.
constexpr std::array<std::string_view, 17> owned_prefixes{cpu_feature_label,
                                                          cpu_model_label,
                                                          cpu_model_migration_label,
                                                          cpu_timer_label,
                                                          hyperv_label,
                                                          realtime_label,
                                                          sev_label,
                                                          sev_es_label,
                                                          sev_snp_label,
                                                          tdx_label,
                                                          host_model_cpu_label,
                                                          host_model_required_features_label,
                                                          obsolete_host_model_label,
                                                          machine_type_label,
                                                          vm_arch_label,
                                                          cpu_vendor_label,
                                                          secure_execution_label};

bool alphanumeric(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// apimachinery's IsQualifiedName for the name part after the prefix's '/'.
bool valid_label_name(std::string_view name) {
  if (name.empty() || name.size() > 63 || !alphanumeric(name.front()) || !alphanumeric(name.back())) {
    return false;
  }
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return alphanumeric(c) || c == '-' || c == '_' || c == '.'; });
}

void put(std::map<std::string, std::string>& labels, std::string_view prefix, std::string_view name,
         std::string_view value = true_value) {
  // A prefix ends with '/': `name` is the label's name part. A whole-key label (kubevirt.io/sev)
  // comes with an empty `name`; its own name part follows the '/'. An empty vendor makes the key
  // "cpu-vendor.node.kubevirt.io/", whose empty name part is refused here.
  const std::string key = std::string(prefix) + std::string(name);
  const std::string_view name_part =
      name.empty() ? std::string_view(key).substr(std::min(key.size(), key.rfind('/') + 1)) : name;
  if (!valid_label_name(name_part)) {
    return;
  }
  labels[key] = std::string(value);
}

bool obsolete(const std::string& model, const KubeVirtSettings& settings) {
  const std::set<std::string>& list =
      settings.obsolete_cpu_models ? *settings.obsolete_cpu_models : default_obsolete_cpu_models();
  return list.count(model) != 0;
}

}  // namespace

const std::set<std::string>& default_obsolete_cpu_models() {
  // Immutable after its first use; a function-local static is initialised thread-safely.
  static const std::set<std::string> models{
      "486",         "486-v1",      "pentium",       "pentium-v1",    "pentium2",   "pentium2-v1",  "pentium3",
      "pentium3-v1", "pentiumpro",  "pentiumpro-v1", "coreduo",       "coreduo-v1", "n270",         "n270-v1",
      "core2duo",    "core2duo-v1", "Conroe",        "Conroe-v1",     "athlon",     "athlon-v1",    "phenom",
      "phenom-v1",   "qemu64",      "qemu64-v1",     "qemu32",        "qemu32-v1",  "kvm64",        "kvm64-v1",
      "kvm32",       "kvm32-v1",    "Opteron_G1",    "Opteron_G1-v1", "Opteron_G2", "Opteron_G2-v1"};
  return models;
}

KubeVirtSettings kubevirt_settings(std::span<const json::Value* const> kubevirts) {
  // KubeVirt's GetConfigFromKubeVirtCR order, as vmgate's watch cache picks the CR.
  const auto rank = [](const json::Value& kubevirt) {
    const json::Value* metadata = json::find_object(kubevirt, "metadata");
    if (metadata != nullptr && json::has(*metadata, "deletionTimestamp")) {
      return 2;
    }
    const json::Value* status = json::find_object(kubevirt, "status");
    return status != nullptr && !json::find_string(*status, "phase").empty() ? 0 : 1;
  };
  const auto name = [](const json::Value& kubevirt) {
    const json::Value* metadata = json::find_object(kubevirt, "metadata");
    return metadata == nullptr ? std::string_view() : json::find_string(*metadata, "name");
  };
  const json::Value* chosen = nullptr;
  for (const json::Value* kubevirt : kubevirts) {
    if (kubevirt == nullptr || !kubevirt->IsObject() || rank(*kubevirt) == 2) {
      continue;
    }
    if (chosen == nullptr || std::pair(rank(*kubevirt), name(*kubevirt)) < std::pair(rank(*chosen), name(*chosen))) {
      chosen = kubevirt;
    }
  }
  KubeVirtSettings settings;
  if (chosen == nullptr) {
    return settings;
  }
  const json::Value* metadata = json::find_object(*chosen, "metadata");
  settings.source = std::string(metadata == nullptr ? "" : json::find_string(*metadata, "namespace")) + "/" +
                    std::string(name(*chosen));
  const json::Value* configuration = json::find_path(*chosen, {"spec", "configuration"});
  if (configuration == nullptr || !configuration->IsObject()) {
    return settings;
  }
  if (const json::Value* models = json::find(*configuration, "obsoleteCPUModels");
      models != nullptr && !models->IsNull()) {
    if (models->IsObject()) {
      std::set<std::string> keys;
      for (const auto& member : models->GetObject()) {
        keys.emplace(json::as_view(member.name));
      }
      settings.obsolete_cpu_models = std::move(keys);
    } else {
      settings.errors.emplace_back("spec.configuration.obsoleteCPUModels: not an object (using the default list)");
    }
  }
  if (const json::Value* developer = json::find_object(*configuration, "developerConfiguration")) {
    if (const json::Value* emulation = json::find(*developer, "useEmulation"); emulation != nullptr) {
      if (emulation->IsBool()) {
        settings.use_emulation = emulation->GetBool();
      } else if (!emulation->IsNull()) {
        settings.errors.emplace_back("spec.configuration.developerConfiguration.useEmulation: not a boolean");
      }
    }
    if (const json::Value* gates = json::find_array(*developer, "featureGates")) {
      for (const json::Value& gate : gates->GetArray()) {
        settings.cpu_manager_gate =
            settings.cpu_manager_gate || (gate.IsString() && json::as_view(gate) == "CPUManager");
      }
    }
  }
  return settings;
}

std::string_view virt_type(bool use_emulation, bool kvm_device, bool hardware_kvm_module) {
  return !use_emulation && kvm_device && hardware_kvm_module ? "kvm" : "qemu";
}

std::map<std::string, std::string> node_labels(const NodeFacts& facts, const KubeVirtSettings& settings) {
  std::map<std::string, std::string> labels;
  for (const std::string& feature : facts.supported_features) {
    put(labels, cpu_feature_label, feature);
  }
  for (const std::string& model : facts.domain.usable_models) {
    if (!obsolete(model, settings)) {
      put(labels, cpu_model_label, model);
    }
  }
  for (const std::string& model : facts.domain.known_models) {
    if (!obsolete(model, settings)) {
      put(labels, cpu_model_migration_label, model);
    }
  }
  for (const std::string& machine : facts.host.machines) {
    put(labels, machine_type_label, machine);
  }
  for (const std::string& enlightenment : facts.hyperv) {
    put(labels, hyperv_label, enlightenment);
  }
  if (facts.host.tsc) {
    put(labels, cpu_timer_label, "tsc-frequency", std::to_string(facts.host.tsc->frequency));
    put(labels, cpu_timer_label, "tsc-scalable", facts.host.tsc->scaling ? "true" : "false");
  }
  if (const HostModel& host_model = facts.domain.host_model; host_model.present) {
    // Only the CR's own list marks host-model obsolete (see KubeVirtSettings).
    if (settings.obsolete_cpu_models && settings.obsolete_cpu_models->count(host_model.name) != 0) {
      put(labels, obsolete_host_model_label, "");
    }
    for (const auto& [policy, feature] : host_model.features) {
      if (policy == "require") {
        put(labels, host_model_required_features_label, feature);
      }
    }
    put(labels, cpu_vendor_label, host_model.vendor);
    put(labels, host_model_cpu_label, host_model.name);
  }
  if (facts.realtime) {
    put(labels, realtime_label, "");
  }
  if (facts.domain.sev) {
    put(labels, sev_label, "");
  }
  if (facts.domain.sev_es) {
    put(labels, sev_es_label, "");
  }
  if (facts.domain.sev_snp) {
    put(labels, sev_snp_label, "");
  }
  if (facts.domain.secure_execution) {
    put(labels, secure_execution_label, "");
  }
  if (facts.domain.tdx) {
    put(labels, tdx_label, "");
  }
  return labels;
}

bool is_labeller_label(std::string_view key) {
  return std::any_of(owned_prefixes.begin(), owned_prefixes.end(),
                     [&](std::string_view prefix) { return key.starts_with(prefix); });
}

std::optional<std::string> labels_patch(const json::Value* current, const std::map<std::string, std::string>& desired) {
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  json::Value& labels = json::ensure_object(json::ensure_object(patch, "metadata", a), "labels", a);
  if (current != nullptr && current->IsObject()) {
    for (const auto& member : current->GetObject()) {
      const std::string_view key = json::as_view(member.name);
      if (is_labeller_label(key) && desired.count(std::string(key)) == 0) {
        json::set(labels, key, json::Value(), a);  // null: the merge patch removes it
      }
    }
  }
  for (const auto& [key, value] : desired) {
    const json::Value* existing = current != nullptr && current->IsObject() ? json::find(*current, key) : nullptr;
    if (existing == nullptr || !existing->IsString() || json::as_view(*existing) != value) {
      json::set_string(labels, key, value, a);
    }
  }
  if (labels.ObjectEmpty()) {
    return std::nullopt;
  }
  return json::to_string(patch);
}

bool skip_node(const json::Value& node) {
  const json::Value* annotations = json::find_path(node, {"metadata", "annotations"});
  return annotations != nullptr && annotations->IsObject() && json::has(*annotations, skip_node_annotation);
}

std::string heartbeat_patch(bool schedulable, bool cpu_manager, std::string_view now) {
  json::Document patch(rapidjson::kObjectType);
  auto& a = patch.GetAllocator();
  json::Value& metadata = json::ensure_object(patch, "metadata", a);
  json::Value& labels = json::ensure_object(metadata, "labels", a);
  json::set_string(labels, schedulable_label, schedulable ? "true" : "false", a);
  json::set_string(labels, deprecated_cpu_manager_label, cpu_manager ? "true" : "false", a);
  json::set_string(labels, cpu_manager_label, cpu_manager ? "true" : "false", a);
  json::set_string(json::ensure_object(metadata, "annotations", a), heartbeat_annotation, now, a);
  return json::to_string(patch);
}

bool cpu_manager_static(std::string_view cpu_manager_state) {
  Result<json::Document, json::DecodeError> state = json::parse_json(cpu_manager_state);
  return state && state->IsObject() && json::find_string(*state, "policyName") == "static";
}

}  // namespace vmgate::node
