#pragma once
// Instancetype application (KubeVirt pkg/instancetype/apply/*.go) and the CPU topology that a
// preference chooses for the instancetype's vCPUs.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/admission/field_error.hpp"
#include "vmgate/admission/release.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::instancetype {

struct Topology {
  std::uint64_t sockets = 1;
  std::uint64_t cores = 1;
  std::uint64_t threads = 1;
  friend bool operator==(const Topology&, const Topology&) = default;
};

/// preferredCPUTopology with KubeVirt's default "sockets" (preference may be null).
std::string preferred_topology(const json::Value* preference);
/// spreadOptions: {ratio, across} with defaults 2 and "SocketsCores"; preferSpreadSocketToCoreRatio
/// is the deprecated ratio (pkg/instancetype/preference/apply/cpu.go GetSpreadOptions).
struct SpreadOptions {
  std::uint64_t ratio = 2;
  std::string across = "SocketsCores";
};
SpreadOptions spread_options(const json::Value* preference);
/// apply/cpu.go applyGuestCPUTopology: vCPUs → sockets/cores/threads.
Topology guest_topology(std::uint64_t vcpus, const json::Value* preference);

/// The spread divisibility check of the VM validating webhook
/// (pkg/instancetype/preference/validation/cpu.go); nullopt-like empty list when fine.
ErrorList check_spread(const json::Value* instancetype, const json::Value* preference);

/// Applies the instancetype spec to a VMI spec, collecting conflicts as field paths below
/// `base` ("spec.template.spec" in the VM webhook, "spec" in the controller); annotation
/// conflicts are "annotations.<key>" without base, as in KubeVirt. On conflicts the spec may be
/// partly changed (as in KubeVirt) and the preference must not be applied.
std::vector<std::string> apply(const json::Value& instancetype, const json::Value* preference, json::Value& vmi_spec,
                               json::Value& metadata, std::string_view base, json::Allocator& allocator);

/// The VM webhook's causes for conflicts: "VM field(s) <path> conflicts with selected instance type".
ErrorList conflict_causes(const std::vector<std::string>& conflicts);

/// apply(), then the preference if there was no conflict (pkg/instancetype/apply/vmi.go).
/// Either spec may be null. `release`: the preference fields that release applies.
std::vector<std::string> apply_with_preference(const json::Value* instancetype, const json::Value* preference,
                                               json::Value& vmi_spec, json::Value& metadata, std::string_view base,
                                               json::Allocator& allocator, Release release = newest_release);

}  // namespace vmgate::admission::instancetype
