#pragma once
// CPU model defaulting and CPU feature policy validation.
#include "vmgate/admission/cluster.hpp"
#include "vmgate/admission/field_error.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::cpu {

inline constexpr std::string_view default_model = "host-model";

/// VMI CREATE: spec.domain.cpu.model = the VMI's own, else the cluster's spec.configuration.cpuModel,
/// else host-model (pkg/defaults/defaults.go setDefaultCPUModel). arm64 got host-passthrough before
/// (defaults/arch), so the cluster model never applies there.
void set_default_model(json::Value& vmi_spec, const ClusterConfig& config, json::Allocator& allocator);

/// spec.domain.cpu.features[i].policy ∈ {"", force, require, optional, disable, forbid}
/// (vmi-create-admitter.go): "CPU feature %s uses policy %s that is not supported."
ErrorList validate_feature_policies(const json::Value& vmi_spec, const FieldPath& spec_path);

/// arm64: any model other than host-passthrough is rejected (pkg/virt-api/webhooks/arm64.go).
ErrorList validate_arm64_model(const json::Value& vmi_spec, const FieldPath& spec_path);

}  // namespace vmgate::admission::cpu
