// Reads: VM spec.{instancetype,preference}.{name,kind,revisionName},
// status.{instancetypeRef,preferenceRef}.controllerRevisionRef.name; cluster objects.
// Follows pkg/instancetype/find/spec.go and pkg/instancetype/preference/find/spec.go.
#include "vmgate/admission/instancetype/find.hpp"

#include <algorithm>
#include <cctype>

namespace vmgate::admission::instancetype {

namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string not_found(ObjectKind kind, std::string_view name) {
  return std::string(group_resource(kind)) + " \"" + std::string(name) + "\" not found";
}

// A ControllerRevision stores the whole instancetype/preference object in `data`.
const json::Value* revision_spec(const json::Value& revision) {
  const json::Value* data = json::find_object(revision, "data");
  return data != nullptr ? json::find_object(*data, "spec") : nullptr;
}

}  // namespace

Result<ObjectKind> matcher_kind(MatcherType type, std::string_view kind) {
  const std::string k = lower(kind);
  if (type == MatcherType::instancetype) {
    if (k == "virtualmachineinstancetype" || k == "virtualmachineinstancetypes") {
      return ObjectKind::instancetype;
    }
    if (k.empty() || k == "virtualmachineclusterinstancetype" || k == "virtualmachineclusterinstancetypes") {
      return ObjectKind::cluster_instancetype;
    }
    return Error{"got unexpected kind in InstancetypeMatcher: " + std::string(kind)};
  }
  if (k == "virtualmachinepreference" || k == "virtualmachinepreferences") {
    return ObjectKind::preference;
  }
  if (k.empty() || k == "virtualmachineclusterpreference" || k == "virtualmachineclusterpreferences") {
    return ObjectKind::cluster_preference;
  }
  return Error{"got unexpected kind in PreferenceMatcher: " + std::string(kind)};
}

Result<FoundSpec> find_spec(MatcherType type, const json::Value& vm, std::string_view namespace_name,
                            const ClusterView& cluster) {
  const bool is_instancetype = type == MatcherType::instancetype;
  const json::Value* matcher = json::find_path(vm, {"spec", is_instancetype ? "instancetype" : "preference"});
  FoundSpec found;
  if (matcher == nullptr || !matcher->IsObject() || json::find_string(*matcher, "name").empty()) {
    return found;
  }
  Result<ObjectKind> kind = matcher_kind(type, json::find_string(*matcher, "kind"));
  if (!kind) {
    return kind.error();
  }
  found.kind = *kind;
  found.name = std::string(json::find_string(*matcher, "name"));

  if (std::string_view revision = json::find_string(*matcher, "revisionName"); !revision.empty()) {
    const json::Value* stored = cluster.find(ObjectKind::controller_revision, namespace_name, revision);
    if (stored == nullptr) {
      return Error{not_found(ObjectKind::controller_revision, revision)};
    }
    found.spec = revision_spec(*stored);
    if (found.spec == nullptr) {
      return Error{"ControllerRevision " + std::string(revision) + " holds no instancetype.kubevirt.io object"};
    }
    return found;
  }
  const json::Value* ref =
      json::find_path(vm, {"status", is_instancetype ? "instancetypeRef" : "preferenceRef", "controllerRevisionRef"});
  if (ref != nullptr) {
    std::string_view revision = json::find_string(*ref, "name");
    const json::Value* stored =
        revision.empty() ? nullptr : cluster.find(ObjectKind::controller_revision, namespace_name, revision);
    const json::Value* labels = stored != nullptr ? json::find_path(*stored, {"metadata", "labels"}) : nullptr;
    if (labels != nullptr && json::find_string(*labels, "instancetype.kubevirt.io/object-name") == found.name) {
      if (const json::Value* spec = revision_spec(*stored)) {
        found.spec = spec;
        return found;
      }
    }
  }
  const json::Value* object = cluster.find(found.kind, namespace_name, found.name);
  if (object == nullptr) {
    return Error{not_found(found.kind, found.name)};
  }
  static const json::Value empty_spec(rapidjson::kObjectType);  // immutable: no shared mutable state
  const json::Value* spec = json::find_object(*object, "spec");
  found.spec = spec != nullptr ? spec : &empty_spec;
  return found;
}

}  // namespace vmgate::admission::instancetype
