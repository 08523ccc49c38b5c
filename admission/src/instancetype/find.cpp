// Reads: VM spec.{instancetype,preference}.{name,kind,revisionName},
// status.{instancetypeRef,preferenceRef}.controllerRevisionRef.name; cluster objects.
// Follows pkg/instancetype/find/{spec,revision}.go, pkg/instancetype/preference/find/{spec,revision}.go
// and pkg/instancetype/compatibility/compatibility.go: revisions are consulted before the kind is
// looked at, a missing referenced revision is an error, and a revision must hold a v1beta1 object
// of the matcher's type.
#include "vmgate/admission/instancetype/find.hpp"

#include "vmgate/common/go_strings.hpp"

namespace vmgate::admission::instancetype {

namespace {

std::string not_found(ObjectKind kind, std::string_view name) {
  return std::string(group_resource(kind)) + " \"" + std::string(name) + "\" not found";
}

// A ControllerRevision stores the whole instancetype/preference object in `data`; KubeVirt decodes
// it with a scheme that only knows instancetype.kubevirt.io/v1beta1 and then insists on the
// matcher's type (compatibility.go GetInstancetypeSpec / GetPreferenceSpec).
Result<const json::Value*> revision_spec(MatcherType type, const json::Value& revision) {
  static const json::Value empty_spec(rapidjson::kObjectType);  // immutable: no shared mutable state
  const json::Value* data = json::find_object(revision, "data");
  const std::string_view api_version = data != nullptr ? json::find_string(*data, "apiVersion") : "";
  const std::string_view kind = data != nullptr ? json::find_string(*data, "kind") : "";
  if (api_version != "instancetype.kubevirt.io/v1beta1" ||
      (kind != "VirtualMachineInstancetype" && kind != "VirtualMachineClusterInstancetype" &&
       kind != "VirtualMachinePreference" && kind != "VirtualMachineClusterPreference")) {
    return Error{"failed to decode object in ControllerRevision: no kind \"" + std::string(kind) +
                 "\" is registered for version \"" + std::string(api_version) + "\""};
  }
  const bool wants_instancetype = type == MatcherType::instancetype;
  if (wants_instancetype != (kind.find("Instancetype") != std::string_view::npos)) {
    return Error{"unexpected type in ControllerRevision: *v1beta1." + std::string(kind)};
  }
  const json::Value* spec = json::find_object(*data, "spec");
  return spec != nullptr ? spec : &empty_spec;
}

}  // namespace

Result<ObjectKind> matcher_kind(MatcherType type, std::string_view kind) {
  // KubeVirt switches on strings.ToLower(kind), which also lowers U+0130 to 'i' and U+212A to 'k'.
  // The names are distinct, so the order of the tests is free: the cluster-wide kinds, which
  // most VMs name, first (each test walks the kind up to its first difference).
  const auto is = [kind](std::string_view name) { return common::go_lower_equals(kind, name); };
  if (type == MatcherType::instancetype) {
    if (kind.empty() || is("virtualmachineclusterinstancetype") || is("virtualmachineclusterinstancetypes")) {
      return ObjectKind::cluster_instancetype;
    }
    if (is("virtualmachineinstancetype") || is("virtualmachineinstancetypes")) {
      return ObjectKind::instancetype;
    }
    return Error{"got unexpected kind in InstancetypeMatcher: " + std::string(kind)};
  }
  if (kind.empty() || is("virtualmachineclusterpreference") || is("virtualmachineclusterpreferences")) {
    return ObjectKind::cluster_preference;
  }
  if (is("virtualmachinepreference") || is("virtualmachinepreferences")) {
    return ObjectKind::preference;
  }
  return Error{"got unexpected kind in PreferenceMatcher: " + std::string(kind)};
}

Result<FoundSpec> find_spec(MatcherType type, const json::Value& vm, std::string_view namespace_name,
                            const ClusterView& cluster, NamelessMatcher nameless) {
  const bool is_instancetype = type == MatcherType::instancetype;
  const json::Value* matcher = json::find_path(vm, {"spec", is_instancetype ? "instancetype" : "preference"});
  FoundSpec found;
  if (matcher == nullptr || !matcher->IsObject()) {
    return found;
  }
  found.name = std::string(json::find_string(*matcher, "name"));
  Result<ObjectKind> kind = matcher_kind(type, json::find_string(*matcher, "kind"));
  found.kind = kind ? *kind : (is_instancetype ? ObjectKind::cluster_instancetype : ObjectKind::cluster_preference);
  auto from_revision = [&](const json::Value& stored) -> Result<FoundSpec> {
    Result<const json::Value*> spec = revision_spec(type, stored);
    if (!spec) {
      return spec.error();
    }
    found.spec = *spec;
    return found;
  };

  // revision.go: revisionName wins over status.*Ref, and both come before the kind is read.
  if (std::string_view revision = json::find_string(*matcher, "revisionName"); !revision.empty()) {
    const json::Value* stored = cluster.find(ObjectKind::controller_revision, namespace_name, revision);
    if (stored == nullptr) {
      return Error{not_found(ObjectKind::controller_revision, revision)};
    }
    return from_revision(*stored);
  }
  const json::Value* ref =
      json::find_path(vm, {"status", is_instancetype ? "instancetypeRef" : "preferenceRef", "controllerRevisionRef"});
  if (std::string_view revision = ref != nullptr ? json::find_string(*ref, "name") : ""; !revision.empty()) {
    const json::Value* stored = cluster.find(ObjectKind::controller_revision, namespace_name, revision);
    if (stored == nullptr) {
      return Error{not_found(ObjectKind::controller_revision, revision)};
    }
    // Only a revision of the object the matcher names (bug #14595).
    const json::Value* labels = json::find_path(*stored, {"metadata", "labels"});
    const json::Value* object_name =
        labels != nullptr ? json::find(*labels, "instancetype.kubevirt.io/object-name") : nullptr;
    if (object_name != nullptr && object_name->IsString() && json::as_view(*object_name) == found.name) {
      return from_revision(*stored);
    }
  }
  if (found.name.empty() && nameless == NamelessMatcher::skip) {
    return found;  // only inferFromVolume: nothing to look up (the mutator infers the name first)
  }
  if (!kind) {
    return kind.error();
  }
  const json::Value* object = cluster.find(found.kind, namespace_name, found.name);
  if (object == nullptr) {
    // An object the cluster holds but the rules cannot read is named, with the field, rather
    // than taken as missing (KubeVirt would read it; vmgate cannot).
    if (const std::string_view problem = cluster.unreadable(found.kind, namespace_name, found.name); !problem.empty()) {
      return Error{std::string(group_resource(found.kind)) + " \"" + found.name + "\" " +
                   std::string(unreadable_object) + ": " + std::string(problem)};
    }
    return Error{not_found(found.kind, found.name)};
  }
  static const json::Value empty_spec(rapidjson::kObjectType);  // immutable: no shared mutable state
  const json::Value* spec = json::find_object(*object, "spec");
  found.spec = spec != nullptr ? spec : &empty_spec;
  return found;
}

}  // namespace vmgate::admission::instancetype
