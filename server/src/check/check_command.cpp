// `vmgate check`: the offline front-end of the admission pipeline (docs/webhook.md, "vmgate check command line").
#include "vmgate/server/check_command.hpp"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/cluster_loader.hpp"
#include "vmgate/kube/watch_cache.hpp"
#include "vmgate/kube/manifest_loader.hpp"
#include "vmgate/server/request_time.hpp"

namespace vmgate::cli {

namespace {

using admission::Resource;

// kubevirt.io VirtualMachine / VirtualMachineInstance, of any version (served_version tells
// whether kube-apiserver would take it).
std::optional<Resource> checked_resource(const json::Value& object) {
  const std::string_view api_version = json::find_string(object, "apiVersion");
  const std::size_t slash = api_version.find('/');
  if (slash == std::string_view::npos || api_version.substr(0, slash) != "kubevirt.io") {
    return std::nullopt;
  }
  const std::string_view kind = json::find_string(object, "kind");
  if (kind == "VirtualMachine") {
    return Resource::virtual_machine;
  }
  if (kind == "VirtualMachineInstance") {
    return Resource::virtual_machine_instance;
  }
  return std::nullopt;
}

// The versions KubeVirt's CustomResourceDefinitions serve (staging/src/kubevirt.io/api/core/v1/
// register.go ApiSupportedVersions: v1 and the deprecated v1alpha3). kube-apiserver answers 404
// for any other before a webhook sees the object, and kubectl stops at its REST mapping
// (v1alpha1 and v1alpha2 manifests of old KubeVirt releases are still found in blog posts).
bool served_version(const json::Value& object) {
  const std::string_view api_version = json::find_string(object, "apiVersion");
  return api_version == "kubevirt.io/v1" || api_version == "kubevirt.io/v1alpha3";
}

// kubectl's words for a kind no served version matches (apimachinery pkg/api/meta/errors.go
// NoKindMatchError), as the verdict of kube-apiserver's 404.
admission::Outcome not_served(const json::Value& object) {
  admission::Outcome outcome;
  outcome.verdict.allowed = false;
  outcome.verdict.code = 404;
  outcome.verdict.reason = "NotFound";
  outcome.verdict.message = "no matches for kind \"" + std::string(json::find_string(object, "kind")) +
                            "\" in version \"" + std::string(json::find_string(object, "apiVersion")) + "\"";
  return outcome;
}

std::string namespace_of(const json::Value& object, const std::string& fallback) {
  const json::Value* metadata = json::find_object(object, "metadata");
  const std::string_view ns = metadata != nullptr ? json::find_string(*metadata, "namespace") : std::string_view{};
  return ns.empty() ? fallback : std::string(ns);
}

// kube-apiserver gives an object without metadata.namespace the request's namespace before any
// webhook sees it (apiserver pkg/endpoints/handlers create.go / update.go:
// EnsureObjectNamespaceMatchesRequestNamespace), so the admitted object carries it. Returns null
// when the object already has one (or metadata that is not an object, which validation reports).
std::optional<json::Document> with_request_namespace(const json::Value& object, const std::string& namespace_name) {
  const json::Value* metadata = json::find(object, "metadata");
  if (metadata != nullptr && (!metadata->IsObject() || !json::find_string(*metadata, "namespace").empty())) {
    return std::nullopt;
  }
  json::Document copy;
  copy.CopyFrom(object, copy.GetAllocator());
  json::set_string(json::ensure_object(copy, "metadata", copy.GetAllocator()), "namespace", namespace_name,
                   copy.GetAllocator());
  return copy;
}

std::string name_of(const json::Value& object) {
  const json::Value* metadata = json::find_object(object, "metadata");
  return metadata != nullptr ? std::string(json::find_string(*metadata, "name")) : std::string();
}

struct Target {
  const kube::ManifestObject* object = nullptr;
  Resource resource = Resource::virtual_machine;
  std::string kind;
  std::string namespace_name;
  std::string name;

  [[nodiscard]] std::string describe() const { return kind + " " + namespace_name + "/" + name; }
  [[nodiscard]] bool same_object(const Target& other) const {
    return resource == other.resource && namespace_name == other.namespace_name && name == other.name;
  }
};

Target make_target(const kube::ManifestObject& object, Resource resource, const std::string& default_namespace) {
  return Target{&object, resource, std::string(json::find_string(object.object(), "kind")),
                namespace_of(object.object(), default_namespace), name_of(object.object())};
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) {
    out += out.empty() ? "" : ", ";
    out += item;
  }
  return out;
}

// --objects files, or the objects of the cluster --kubeconfig names, listed once. With
// options.namespace_from_context, `default_namespace` becomes the context's namespace if it names one.
Result<kube::LoadedCluster> load_check_cluster(const CheckOptions& options, const admission::Pipeline& pipeline,
                                               std::istream& standard_input, std::string& default_namespace) {
  if (options.kubeconfig.empty()) {
    return kube::load_cluster(options.objects, options.namespace_name, pipeline, standard_input);
  }
  Result<kube::ClientConfig> config = kube::load_kubeconfig(options.kubeconfig, options.context);
  if (!config) {
    return config.error();
  }
  if (options.namespace_from_context && !config->default_namespace.empty()) {
    default_namespace = config->default_namespace;
  }
  kube::LoadedCluster cluster;
  cluster.notes = config->warnings;
  Result<kube::ListedCluster> listed = kube::list_cluster(*config, pipeline);
  if (!listed) {
    return Error{"--kubeconfig: " + listed.error().message};
  }
  cluster.store = std::move(listed->store);
  cluster.notes.insert(cluster.notes.end(), listed->notes.begin(), listed->notes.end());
  return cluster;
}

}  // namespace

Result<CheckRun> run_check(const CheckOptions& options, std::istream& standard_input) {
  CheckRun run;

  const admission::Pipeline pipeline(options.release);
  std::string default_namespace = options.namespace_name;
  Result<kube::LoadedCluster> cluster = load_check_cluster(options, pipeline, standard_input, default_namespace);
  if (!cluster) {
    return cluster.error();
  }
  const admission::ObjectStore& store = cluster->store;
  run.notes = std::move(cluster->notes);

  Result<kube::LoadedManifests> inputs = kube::load_manifests_keep_going(options.files, standard_input);
  if (!inputs) {
    return inputs.error();
  }
  for (const Error& error : inputs->unusable) {
    run.unusable.push_back(error.message);
  }
  std::vector<Target> targets;
  for (const kube::ManifestObject& object : inputs->objects) {
    if (std::optional<Resource> resource = checked_resource(object.object())) {
      targets.push_back(make_target(object, *resource, default_namespace));
    } else {
      run.notes.push_back(kube::skip_note(object));
    }
  }
  if (targets.empty()) {
    if (!run.unusable.empty()) {
      return run;  // the unusable files are what there is to report
    }
    return Error{"no VirtualMachine or VirtualMachineInstance found in " + join(options.files)};
  }

  std::vector<kube::ManifestObject> old_objects;
  std::optional<Target> old;
  if (!options.old_file.empty()) {
    Result<std::vector<kube::ManifestObject>> loaded = kube::load_manifests({options.old_file}, standard_input);
    if (!loaded) {
      return loaded.error();
    }
    old_objects = std::move(loaded.value());
    if (old_objects.size() != 1) {
      return Error{"--old " + options.old_file + ": expected exactly one object, found " +
                   std::to_string(old_objects.size())};
    }
    const std::optional<Resource> resource = checked_resource(old_objects.front().object());
    if (!resource) {
      return Error{"--old " + options.old_file + ": " + old_objects.front().source +
                   " is not a kubevirt.io VirtualMachine or VirtualMachineInstance"};
    }
    if (!served_version(old_objects.front().object())) {
      return Error{"--old " + options.old_file + ": " + old_objects.front().source + ": " +
                   not_served(old_objects.front().object()).verdict.message};
    }
    old = make_target(old_objects.front(), *resource, default_namespace);
    std::vector<std::string> unmatched;
    for (const Target& target : targets) {
      if (!target.same_object(*old)) {
        unmatched.push_back(target.object->source + " (" + target.describe() + ")");
      }
    }
    if (!unmatched.empty()) {
      return Error{"--old " + options.old_file + " holds " + old->describe() + "; no old object for " +
                   join(unmatched)};
    }
  }

  // The time a VMI CREATE records as its Pending transition: SOURCE_DATE_EPOCH when set, so that a
  // pipeline can make the output reproducible, else the clock.
  const char* epoch = std::getenv("SOURCE_DATE_EPOCH");
  std::optional<std::chrono::system_clock::time_point> fixed;
  if (epoch != nullptr) {
    fixed = webhook::source_date_epoch(epoch);
    if (!fixed) {
      return Error{"SOURCE_DATE_EPOCH must be a count of seconds since 1970, not '" + std::string(epoch) + "'"};
    }
  }
  const std::string now = webhook::metav1_time(fixed.value_or(std::chrono::system_clock::now()));
  for (const Target& target : targets) {
    if (!served_version(target.object->object())) {
      run.results.push_back(CheckResult{target.object->source, target.resource, target.kind, target.namespace_name,
                                        target.name, not_served(target.object->object())});
      continue;
    }
    admission::Request request;
    request.now = now;
    request.resource = target.resource;
    request.operation = options.operation;
    request.namespace_name = target.namespace_name;
    const std::optional<json::Document> object = with_request_namespace(*target.object->value, target.namespace_name);
    request.object = object ? &*object : target.object->value;
    std::optional<json::Document> old_object;
    if (old) {
      old_object = with_request_namespace(*old->object->value, old->namespace_name);
      request.old_object = old_object ? &*old_object : old->object->value;
    }
    run.results.push_back(CheckResult{target.object->source, target.resource, target.kind, target.namespace_name,
                                      target.name, pipeline.admit(request, store)});
  }
  return run;
}

int exit_status(const std::vector<CheckResult>& results) {
  for (const CheckResult& result : results) {
    if (!result.outcome.verdict.allowed) {
      return 1;
    }
  }
  return 0;
}

int exit_status(const CheckRun& run) {
  return run.unusable.empty() ? exit_status(run.results) : 2;
}

}  // namespace vmgate::cli
