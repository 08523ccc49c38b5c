// The cluster objects of `--objects`, shared by `vmgate check` and `vmgate serve`.
#include "vmgate/kube/cluster_loader.hpp"

#include <optional>
#include <utility>

namespace vmgate::kube {

std::string skip_note(const ManifestObject& object) {
  const std::string_view kind = json::find_string(object.object(), "kind");
  std::string note = object.source + ": skipping ";
  if (kind.empty()) {
    return note + "an object without kind";
  }
  note += "kind " + std::string(kind);
  if (kind == "VirtualMachine" || kind == "VirtualMachineInstance") {
    const std::string_view api_version = json::find_string(object.object(), "apiVersion");
    note += " of apiVersion " + (api_version.empty() ? std::string("(none)") : std::string(api_version));
  }
  return note;
}

Result<LoadedCluster> load_cluster(const std::vector<std::string>& inputs, std::string_view default_namespace,
                                   const admission::Pipeline& pipeline, std::istream& standard_input) {
  Result<std::vector<ManifestObject>> objects = load_manifests(inputs, standard_input);
  if (!objects) {
    return objects.error();
  }
  LoadedCluster cluster;
  for (const ManifestObject& object : *objects) {
    const std::string_view kind = json::find_string(object.object(), "kind");
    const std::optional<admission::ObjectKind> held = admission::parse_object_kind(kind);
    if (!held || admission::kind_name(*held) != kind) {
      cluster.notes.push_back(skip_note(object));
      continue;
    }
    // A malformed instancetype or preference would make the rules read garbage: refuse it here,
    // naming the file and the field, as kubectl would refuse to create it.
    if (admission::ErrorList problems = pipeline.check_cluster_object(object.object()); !problems.empty()) {
      std::string message = object.source + ": invalid " + std::string(kind) + ":";
      for (const admission::FieldError& problem : problems) {
        message += " " + problem.message + ";";
      }
      message.pop_back();
      return Error{std::move(message)};
    }
    Result<admission::ObjectKind> added = cluster.store.add(object.object(), default_namespace);
    if (!added) {
      return Error{object.source + ": " + added.error().message};
    }
  }
  return cluster;
}

}  // namespace vmgate::kube
