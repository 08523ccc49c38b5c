#pragma once
// Resolving a VM's instancetype and preference matchers to specs
// (KubeVirt pkg/instancetype/find/spec.go, pkg/instancetype/preference/find/spec.go).
#include <string>
#include <string_view>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::admission::instancetype {

enum class MatcherType { instancetype, preference };

/// Matcher kind → object kind, lower-cased comparison, singular or plural, empty = cluster kind.
/// CRD short names are NOT accepted, as in KubeVirt.
/// Error: "got unexpected kind in InstancetypeMatcher: %s" / "...PreferenceMatcher: %s".
Result<ObjectKind> matcher_kind(MatcherType type, std::string_view kind);

/// A resolved spec: points into the cluster's storage (object's `spec`, or a ControllerRevision's
/// embedded object's `spec`). `kind` and `name` identify what was found, for annotations.
struct FoundSpec {
  const json::Value* spec = nullptr;
  ObjectKind kind = ObjectKind::cluster_instancetype;
  std::string name;
};

/// What a matcher without a name (and no revision) means. The webhooks skip it: the mutator
/// infers the name first. The VM controller (pkg/instancetype/find/spec.go) looks it up like any
/// other: name "" is not found, and no VMI is created.
enum class NamelessMatcher { skip, look_up };

/// The words of find_spec's error for an object the rules cannot read.
inline constexpr std::string_view unreadable_object = "cannot be read by vmgate";

/// Finds the spec for `vm.spec.instancetype` / `vm.spec.preference`: revisionName first, then a
/// status.*Ref.controllerRevisionRef whose object-name label matches, then the live object.
/// Returns a FoundSpec with spec == nullptr when the VM has no such matcher (or, with
/// NamelessMatcher::skip, one without a name). Errors use the API server's words:
///   `virtualmachineclusterinstancetypes.instancetype.kubevirt.io "u1.small" not found`; an object
/// the cluster holds but the rules cannot read (ClusterView::unreadable) is named with its problem:
///   `... "huge" cannot be read by vmgate: spec.memory.guest '999999999999Ei': quantity out of range`.
Result<FoundSpec> find_spec(MatcherType type, const json::Value& vm, std::string_view namespace_name,
                            const ClusterView& cluster, NamelessMatcher nameless = NamelessMatcher::skip);

}  // namespace vmgate::admission::instancetype
