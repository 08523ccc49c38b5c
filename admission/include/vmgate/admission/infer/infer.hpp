#pragma once
// inferFromVolume (KubeVirt pkg/instancetype/infer/{handler,volume}.go).
#include <optional>
#include <string>
#include <string_view>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::infer {

inline constexpr std::string_view default_instancetype_label = "instancetype.kubevirt.io/default-instancetype";
inline constexpr std::string_view default_instancetype_kind_label =
    "instancetype.kubevirt.io/default-instancetype-kind";
inline constexpr std::string_view default_preference_label = "instancetype.kubevirt.io/default-preference";
inline constexpr std::string_view default_preference_kind_label = "instancetype.kubevirt.io/default-preference-kind";

/// Infers spec.instancetype, then spec.preference, of `vm` in place: each matcher with
/// inferFromVolume is replaced by {name, kind} from the volume's labels, or cleared under policy
/// Ignore for ignorable errors (Ignore + success on the instancetype also clears
/// spec.template.spec.domain.memory). Returns the error that rejects the request (400), e.g.
/// "unable to find volume rootdisk to infer defaults".
std::optional<std::string> infer_matchers(json::Value& vm, std::string_view namespace_name, const ClusterView& cluster,
                                          json::Allocator& allocator);

}  // namespace vmgate::admission::infer
