// Which request a path of subresources.kubevirt.io names, and the discovery documents
// (virt-api's routes in pkg/virt-api/api.go and its noAuthEndpoints).
#include <array>

#include "vmgate/admission/validation/dns1123.hpp"

#include "vmgate/server/subresource_api.hpp"

namespace vmgate::subresources {

namespace {

constexpr std::array<std::string_view, 2> versions{"v1", "v1alpha3"};

// The subresources virt-api routes, by resource and method; vmgate serves those action_of names.
struct Known {
  std::string_view resource;
  std::string_view subresource;
  std::string_view method;
};
constexpr std::array<Known, 37> known{{
    {"virtualmachines", "start", "PUT"},
    {"virtualmachines", "stop", "PUT"},
    {"virtualmachines", "restart", "PUT"},
    {"virtualmachines", "migrate", "PUT"},
    {"virtualmachines", "addvolume", "PUT"},
    {"virtualmachines", "removevolume", "PUT"},
    {"virtualmachines", "memorydump", "PUT"},
    {"virtualmachines", "removememorydump", "PUT"},
    {"virtualmachines", "evacuate/cancel", "PUT"},
    {"virtualmachines", "expand-spec", "GET"},
    {"virtualmachines", "objectgraph", "GET"},
    {"virtualmachines", "portforward", "GET"},
    {"virtualmachineinstances", "pause", "PUT"},
    {"virtualmachineinstances", "unpause", "PUT"},
    {"virtualmachineinstances", "freeze", "PUT"},
    {"virtualmachineinstances", "unfreeze", "PUT"},
    {"virtualmachineinstances", "reset", "PUT"},
    {"virtualmachineinstances", "softreboot", "PUT"},
    {"virtualmachineinstances", "addvolume", "PUT"},
    {"virtualmachineinstances", "removevolume", "PUT"},
    {"virtualmachineinstances", "backup", "PUT"},
    {"virtualmachineinstances", "redefine-checkpoint", "PUT"},
    {"virtualmachineinstances", "evacuate/cancel", "PUT"},
    {"virtualmachineinstances", "sev/setupsession", "PUT"},
    {"virtualmachineinstances", "sev/injectlaunchsecret", "PUT"},
    {"virtualmachineinstances", "console", "GET"},
    {"virtualmachineinstances", "vnc", "GET"},
    {"virtualmachineinstances", "vnc/screenshot", "GET"},
    {"virtualmachineinstances", "usbredir", "GET"},
    {"virtualmachineinstances", "portforward", "GET"},
    {"virtualmachineinstances", "vsock", "GET"},
    {"virtualmachineinstances", "guestosinfo", "GET"},
    {"virtualmachineinstances", "userlist", "GET"},
    {"virtualmachineinstances", "filesystemlist", "GET"},
    {"virtualmachineinstances", "objectgraph", "GET"},
    {"virtualmachineinstances", "sev/fetchcertchain", "GET"},
    {"virtualmachineinstances", "sev/querylaunchmeasurement", "GET"},
}};

bool is_version(std::string_view text) {
  for (std::string_view version : versions) {
    if (text == version) {
      return true;
    }
  }
  return false;
}

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> parts;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    parts.push_back(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
  }
  return parts;
}

ApiStatus not_found_path() {
  return ApiStatus{404, "NotFound", "the server could not find the requested resource", "", "", ""};
}

ApiStatus method_not_allowed(std::string_view method, std::string_view what) {
  return ApiStatus{405,
                   "MethodNotAllowed",
                   "the server does not allow method " + std::string(method) + " on " + std::string(what),
                   "",
                   "",
                   ""};
}

}  // namespace

Result<Route, ApiStatus> route(std::string_view method, std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  const bool reading = method == "GET" || method == "HEAD";
  if (path == "/healthz") {
    return Route{Discovery::healthz, ""};
  }
  if (path.size() < 2 || path.front() != '/' || path.back() == '/') {
    return not_found_path();
  }
  const std::vector<std::string_view> parts = split_path(path.substr(1));
  // apis / subresources.kubevirt.io / VERSION / namespaces / NS / RESOURCE / NAME / SUB[/SUB]
  if (parts.empty() || parts[0] != "apis" || (parts.size() >= 2 && parts[1] != api_group) ||
      (parts.size() >= 3 && !is_version(parts[2]))) {
    return not_found_path();
  }
  if (parts.size() <= 3 || (parts.size() == 4 && (parts[3] == "healthz" || parts[3] == "version"))) {
    if (!reading) {
      return method_not_allowed(method, path);
    }
    if (parts.size() == 4) {
      return Route{parts[3] == "healthz" ? Discovery::healthz : Discovery::version, std::string(parts[2])};
    }
    static constexpr std::array<Discovery, 3> by_depth{Discovery::apis, Discovery::group, Discovery::group_version};
    return Route{by_depth[parts.size() - 1], parts.size() == 3 ? std::string(parts[2]) : std::string()};
  }
  if (parts.size() < 8 || parts.size() > 10 || parts[3] != "namespaces") {
    return not_found_path();
  }
  ObjectRequest request;
  request.version = std::string(parts[2]);
  request.namespace_ = std::string(parts[4]);
  request.resource = std::string(parts[5]);
  request.name = std::string(parts[6]);
  if (request.resource != "virtualmachines" && request.resource != "virtualmachineinstances") {
    return not_found_path();
  }
  if (!admission::validation::dns1123_label_errors(request.namespace_).empty() ||
      !admission::validation::dns1123_subdomain_errors(request.name).empty()) {
    return bad_request("the namespace must be a DNS label and the name a DNS subdomain");
  }
  // portforward/PORT[/PROTOCOL] is the subresource "portforward"; vnc/screenshot and the like are two parts.
  std::string subresource(parts[7]);
  if (parts[7] != "portforward") {
    for (std::size_t i = 8; i < parts.size(); ++i) {
      subresource += "/";
      subresource += parts[i];
    }
  }
  const Known* found = nullptr;
  for (const Known& each : known) {
    if (each.resource == request.resource && each.subresource == subresource) {
      found = &each;
      break;
    }
  }
  if (found == nullptr) {
    return not_found_path();
  }
  const bool put = method == "PUT";
  if ((found->method == "PUT" && !put) || (found->method == "GET" && !reading)) {
    return method_not_allowed(method, request.resource + "/" + subresource);
  }
  request.subresource = std::move(subresource);
  request.verb = put ? "update" : "get";
  return Route{std::move(request), ""};
}

Action action_of(const ObjectRequest& request) {
  if (request.resource == "virtualmachines") {
    if (request.subresource == "start") {
      return Action::start;
    }
    if (request.subresource == "stop") {
      return Action::stop;
    }
    if (request.subresource == "restart") {
      return Action::restart;
    }
    return Action::not_served;
  }
  if (request.subresource == "pause") {
    return Action::pause;
  }
  if (request.subresource == "unpause") {
    return Action::unpause;
  }
  if (request.subresource == "console") {
    return Action::console;
  }
  return Action::not_served;
}

std::string discovery_json(Discovery discovery, std::string_view version) {
  json::Document document(rapidjson::kObjectType);
  auto& a = document.GetAllocator();
  // APIGroup's fields, into `group`.
  const auto fill_group = [&a](json::Value& group) {
    json::set_string(group, "name", api_group, a);
    json::Value listed(rapidjson::kArrayType);
    for (std::string_view each : versions) {
      json::Value entry(rapidjson::kObjectType);
      json::set_string(entry, "groupVersion", std::string(api_group) + "/" + std::string(each), a);
      json::set_string(entry, "version", each, a);
      listed.PushBack(entry, a);
    }
    json::set(group, "versions", std::move(listed), a);
    json::Value preferred(rapidjson::kObjectType);
    json::set_string(preferred, "groupVersion", std::string(api_group) + "/" + std::string(versions[0]), a);
    json::set_string(preferred, "version", versions[0], a);
    json::set(group, "preferredVersion", std::move(preferred), a);
  };
  switch (discovery) {
    case Discovery::healthz:
      return "ok";
    case Discovery::version:  // version.Info, as virt-api's
      json::set_string(document, "gitVersion", api_release, a);
      json::set_string(document, "gitCommit", "vmgate", a);
      json::set_string(document, "gitTreeState", "clean", a);
      json::set_string(document, "compiler", "vmgate", a);
      json::set_string(document, "platform", "linux/amd64", a);
      break;
    case Discovery::apis: {
      json::set_string(document, "kind", "APIGroupList", a);
      json::set_string(document, "apiVersion", "v1", a);
      json::Value groups(rapidjson::kArrayType);
      json::Value group(rapidjson::kObjectType);
      fill_group(group);
      groups.PushBack(group, a);
      json::set(document, "groups", std::move(groups), a);
      break;
    }
    case Discovery::group: {
      json::set_string(document, "kind", "APIGroup", a);
      json::set_string(document, "apiVersion", "v1", a);
      fill_group(document);
      break;
    }
    case Discovery::group_version: {
      json::set_string(document, "kind", "APIResourceList", a);
      json::set_string(document, "apiVersion", "v1", a);
      json::set_string(document, "groupVersion", std::string(api_group) + "/" + std::string(version), a);
      json::Value resources(rapidjson::kArrayType);
      for (const Known& each : known) {
        const std::string name = std::string(each.resource) + "/" + std::string(each.subresource);
        bool listed = false;
        for (const auto& existing : resources.GetArray()) {
          listed = listed || json::find_string(existing, "name") == name;
        }
        if (listed) {
          continue;
        }
        json::Value resource(rapidjson::kObjectType);
        json::set_string(resource, "name", name, a);
        json::set_string(resource, "singularName", "", a);
        json::set(resource, "namespaced", json::Value(true), a);
        json::set_string(resource, "kind", "", a);
        json::Value verbs(rapidjson::kArrayType);
        json::set(resource, "verbs", std::move(verbs), a);
        resources.PushBack(resource, a);
      }
      json::set(document, "resources", std::move(resources), a);
      break;
    }
  }
  return json::to_string(document);
}

}  // namespace vmgate::subresources
