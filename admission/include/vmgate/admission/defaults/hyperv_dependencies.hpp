#pragma once
// The Hyper-V enlightenments that need another one (pkg/defaults/hyperv.go and
// pkg/virt-api/webhooks/hyperv.go getHypervFeatureDependencies), shared by the defaulting and
// the validating rule.
#include <array>
#include <string_view>

#include "vmgate/common/json.hpp"

namespace vmgate::admission::defaults {

struct HypervDependency {
  std::string_view feature;
  std::string_view required;
};

/// In KubeVirt's order: the defaulting walk stops at the first requirement the user disabled.
inline constexpr std::array<HypervDependency, 5> hyperv_dependencies{{
    {"evmcs", "vapic"},
    {"ipi", "vpindex"},
    {"tlbflush", "vpindex"},
    {"synictimer", "synic"},
    {"synic", "vpindex"},
}};

enum class FeatureState { missing, enabled, disabled };

/// The state of features.hyperv.<key>: missing when the object or its `enabled` is absent.
FeatureState hyperv_feature_state(const json::Value& hyperv, std::string_view key);

/// SetHypervFeatureDependencies: each enabled feature gets its missing requirement enabled
/// (until one was disabled by the user); an eVMCS not disabled gets the vmx CPU feature with
/// policy `require` (an existing vmx entry's policy is rewritten).
void set_hyperv_dependencies(json::Value& vmi_spec, json::Allocator& allocator);

}  // namespace vmgate::admission::defaults
