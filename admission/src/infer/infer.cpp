// Reads: VM spec.{instancetype,preference}.{inferFromVolume, inferFromVolumeFailurePolicy},
// spec.template.spec.volumes, spec.dataVolumeTemplates; PVCs, DataVolumes, DataSources and
// VolumeSnapshots. Follows pkg/instancetype/infer/handler.go and volume.go, including which
// errors policy Ignore may swallow (IgnoreableInferenceError) and which always reject.
#include "vmgate/admission/infer/infer.hpp"

#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::infer {

namespace {

struct Inferred {
  std::string name;
  std::string kind;
};

struct Failure {
  std::string message;
  bool ignorable = false;
};

struct Outcome {
  std::optional<Inferred> inferred;
  std::optional<Failure> failure;
  static Outcome ok(Inferred value) { return {std::move(value), std::nullopt}; }
  static Outcome fail(std::string message, bool ignorable) {
    return {std::nullopt, Failure{std::move(message), ignorable}};
  }
};

class VolumeInference {
 public:
  VolumeInference(std::string_view name_label, std::string_view kind_label, const json::Value& vm,
                  std::string_view namespace_name, const ClusterView& cluster)
      : name_label_(name_label), kind_label_(kind_label), vm_(vm), namespace_(namespace_name), cluster_(cluster) {}

  Outcome from_volumes(std::string_view volume_name) const {
    if (const json::Value* volumes = json::find_path(vm_, {"spec", "template", "spec", "volumes"});
        volumes != nullptr && volumes->IsArray()) {
      for (const json::Value& volume : volumes->GetArray()) {
        if (json::find_string(volume, "name") != volume_name) {
          continue;
        }
        if (const json::Value* pvc = json::find_object(volume, "persistentVolumeClaim")) {
          return from_pvc(json::find_string(*pvc, "claimName"), namespace_);
        }
        if (const json::Value* dv = json::find_object(volume, "dataVolume")) {
          return from_data_volume(json::find_string(*dv, "name"));
        }
        return Outcome::fail(
            "unable to infer defaults from volume " + std::string(volume_name) + " as type is not supported", true);
      }
    }
    return Outcome::fail("unable to find volume " + std::string(volume_name) + " to infer defaults", false);
  }

 private:
  Outcome from_labels(const json::Value& object) const {
    const json::Value* labels = json::find_path(object, {"metadata", "labels"});
    const json::Value* name = labels != nullptr ? json::find(*labels, name_label_) : nullptr;
    if (name == nullptr || !name->IsString()) {
      return Outcome::fail("unable to find required " + std::string(name_label_) + " label on the volume", true);
    }
    return Outcome::ok({std::string(json::as_view(*name)), std::string(json::find_string(*labels, kind_label_))});
  }

  Outcome lookup(ObjectKind kind, std::string_view name, std::string_view namespace_name,
                 const json::Value*& object) const {
    object = cluster_.find(kind, namespace_name, name);
    if (object == nullptr) {
      return Outcome::fail(std::string(group_resource(kind)) + " \"" + std::string(name) + "\" not found", false);
    }
    return {};
  }

  Outcome from_pvc(std::string_view name, std::string_view namespace_name) const {
    const json::Value* pvc = nullptr;
    if (Outcome missing = lookup(ObjectKind::persistent_volume_claim, name, namespace_name, pvc); missing.failure) {
      return missing;
    }
    return from_labels(*pvc);
  }

  Outcome from_snapshot(std::string_view name, std::string_view namespace_name) const {
    const json::Value* snapshot = nullptr;
    if (Outcome missing = lookup(ObjectKind::volume_snapshot, name, namespace_name, snapshot); missing.failure) {
      return missing;
    }
    return from_labels(*snapshot);
  }

  Outcome from_data_volume(std::string_view name) const {
    if (const json::Value* templates = json::find_path(vm_, {"spec", "dataVolumeTemplates"});
        templates != nullptr && templates->IsArray()) {
      for (const json::Value& dvt : templates->GetArray()) {
        const json::Value* metadata = json::find_object(dvt, "metadata");
        if (metadata != nullptr && json::find_string(*metadata, "name") == name) {
          // Only the template's spec counts: its labels are ignored, as in KubeVirt.
          return from_data_volume_spec(json::find(dvt, "spec"));
        }
      }
    }
    const json::Value* dv = cluster_.find(ObjectKind::data_volume, namespace_, name);
    if (dv == nullptr) {
      // A garbage-collected DataVolume leaves its PVC behind under the same name.
      return from_pvc(name, namespace_);
    }
    if (Outcome labelled = from_labels(*dv); labelled.inferred) {
      return labelled;
    }
    return from_data_volume_spec(json::find(*dv, "spec"));
  }

  Outcome from_data_volume_spec(const json::Value* spec) const {
    if (spec != nullptr) {
      if (const json::Value* source = json::find_object(*spec, "source")) {
        if (const json::Value* pvc = json::find_object(*source, "pvc")) {
          return from_pvc(json::find_string(*pvc, "name"), json::find_string(*pvc, "namespace"));
        }
        if (const json::Value* snapshot = json::find_object(*source, "snapshot"); snapshot != nullptr && snapshots()) {
          return from_snapshot(json::find_string(*snapshot, "name"), json::find_string(*snapshot, "namespace"));
        }
      }
      if (const json::Value* ref = json::find_object(*spec, "sourceRef")) {
        std::string_view kind = json::find_string(*ref, "kind");
        if (kind != "DataSource") {
          return Outcome::fail(
              "unable to infer defaults from DataVolumeSourceRef as Kind " + std::string(kind) + " is not supported",
              true);
        }
        const std::string_view namespace_name =
            json::has(*ref, "namespace") ? json::find_string(*ref, "namespace") : namespace_;
        return from_data_source(json::find_string(*ref, "name"), namespace_name);
      }
    }
    return Outcome::fail("unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported", true);
  }

  Outcome from_data_source(std::string_view name, std::string_view namespace_name) const {
    const json::Value* source = nullptr;
    if (Outcome missing = lookup(ObjectKind::data_source, name, namespace_name, source); missing.failure) {
      return missing;
    }
    if (Outcome labelled = from_labels(*source); labelled.inferred) {
      return labelled;
    }
    // A nested DataSource (spec.source.dataSource) is not followed, as in KubeVirt.
    if (const json::Value* inner = json::find_path(*source, {"spec", "source"}); inner != nullptr) {
      if (const json::Value* pvc = json::find_object(*inner, "pvc")) {
        return from_pvc(json::find_string(*pvc, "name"), json::find_string(*pvc, "namespace"));
      }
      if (const json::Value* snapshot = json::find_object(*inner, "snapshot"); snapshot != nullptr && snapshots()) {
        return from_snapshot(json::find_string(*snapshot, "name"), json::find_string(*snapshot, "namespace"));
      }
    }
    if (!snapshots()) {
      return Outcome::fail("unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC", true);
    }
    return Outcome::fail(
        "unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC or DataVolumeSourceSnapshot",
        true);
  }

  // VolumeSnapshot sources are inferred from after v1.8 (PR #18337); v1.8 (volume.go at v1.8.2)
  // follows PVC sources only.
  [[nodiscard]] bool snapshots() const { return cluster_.config().release > Release::v1_8; }

  std::string_view name_label_;
  std::string_view kind_label_;
  const json::Value& vm_;
  std::string_view namespace_;
  const ClusterView& cluster_;
};

// One matcher (handler.go Instancetype / Preference).
std::optional<std::string> infer_one(std::string_view matcher_key, std::string_view name_label,
                                     std::string_view kind_label, bool clears_memory, json::Value& vm,
                                     std::string_view namespace_name, const ClusterView& cluster,
                                     json::Allocator& allocator) {
  json::Value* spec = json::find(vm, "spec");
  json::Value* matcher = spec != nullptr ? json::find(*spec, matcher_key) : nullptr;
  if (matcher == nullptr || !matcher->IsObject()) {
    return std::nullopt;
  }
  const std::string volume(json::find_string(*matcher, "inferFromVolume"));
  if (volume.empty()) {
    return std::nullopt;
  }
  const bool ignore_failure = json::find_string(*matcher, "inferFromVolumeFailurePolicy") == "Ignore";
  const VolumeInference inference(name_label, kind_label, vm, namespace_name, cluster);
  Outcome outcome = inference.from_volumes(volume);
  if (outcome.failure) {
    if (outcome.failure->ignorable && ignore_failure) {
      json::erase(*spec, matcher_key);
      return std::nullopt;
    }
    return outcome.failure->message;
  }
  if (ignore_failure && clears_memory) {
    // So the user's fallback memory cannot conflict with the inferred instancetype.
    if (json::Value* domain = json::find_path(*spec, {"template", "spec", "domain"}); domain != nullptr) {
      json::erase(*domain, "memory");
    }
  }
  // Go's matcher has name and kind `omitempty`: a label with an empty value leaves `{}`.
  json::Value replacement(rapidjson::kObjectType);
  if (!outcome.inferred->name.empty()) {
    json::set_string(replacement, "name", outcome.inferred->name, allocator);
  }
  if (!outcome.inferred->kind.empty()) {
    json::set_string(replacement, "kind", outcome.inferred->kind, allocator);
  }
  *json::find(*spec, matcher_key) = std::move(replacement);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> infer_matchers(json::Value& vm, std::string_view namespace_name, const ClusterView& cluster,
                                          json::Allocator& allocator) {
  if (auto error = infer_one("instancetype", default_instancetype_label, default_instancetype_kind_label, true, vm,
                             namespace_name, cluster, allocator)) {
    return error;
  }
  return infer_one("preference", default_preference_label, default_preference_kind_label, false, vm, namespace_name,
                   cluster, allocator);
}

}  // namespace vmgate::admission::infer
