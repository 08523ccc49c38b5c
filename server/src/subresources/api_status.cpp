// Kubernetes Status answers with apimachinery's wording (errors.NewConflict, NewNotFound, ...).
#include "vmgate/server/subresource_api.hpp"

namespace vmgate::subresources {

namespace {

constexpr std::string_view kubevirt_group = "kubevirt.io";

// schema.GroupResource.String(): "virtualmachine.kubevirt.io".
std::string qualified(std::string_view kind) {
  return std::string(kind) + "." + std::string(kubevirt_group);
}

ApiStatus about(int code, std::string_view reason, std::string message, std::string_view kind, std::string_view name) {
  return ApiStatus{
      code, std::string(reason), std::move(message), std::string(kind), std::string(name), std::string(kubevirt_group)};
}

}  // namespace

ApiStatus conflict(std::string_view kind, std::string_view name, std::string_view why) {
  return about(
      409, "Conflict",
      "Operation cannot be fulfilled on " + qualified(kind) + " \"" + std::string(name) + "\": " + std::string(why),
      kind, name);
}

ApiStatus not_found(std::string_view kind, std::string_view name) {
  return about(404, "NotFound", qualified(kind) + " \"" + std::string(name) + "\" not found", kind, name);
}

ApiStatus forbidden(std::string_view kind, std::string_view name, std::string_view why) {
  return about(403, "Forbidden", qualified(kind) + " \"" + std::string(name) + "\" is forbidden: " + std::string(why),
               kind, name);
}

ApiStatus bad_request(std::string_view message) {
  return ApiStatus{400, "BadRequest", std::string(message), "", "", ""};
}

ApiStatus internal_error(std::string_view message) {
  return ApiStatus{500, "InternalError", "Internal error occurred: " + std::string(message), "", "", ""};
}

ApiStatus passed_on(int code, std::string_view reason, std::string_view message) {
  return ApiStatus{code, std::string(reason), std::string(message), "", "", ""};
}

std::string status_json(const ApiStatus& status) {
  json::Document document(rapidjson::kObjectType);
  auto& a = document.GetAllocator();
  json::set_string(document, "kind", "Status", a);
  json::set_string(document, "apiVersion", "v1", a);
  json::set(document, "metadata", json::Value(rapidjson::kObjectType), a);
  json::set_string(document, "status", "Failure", a);
  json::set_string(document, "message", status.message, a);
  if (!status.reason.empty()) {
    json::set_string(document, "reason", status.reason, a);
  }
  if (!status.name.empty() || !status.kind.empty()) {
    json::Value details(rapidjson::kObjectType);
    json::set_string(details, "name", status.name, a);
    json::set_string(details, "group", status.group, a);
    json::set_string(details, "kind", status.kind, a);
    json::set(document, "details", std::move(details), a);
  }
  json::set(document, "code", json::Value(status.code), a);
  return json::to_string(document);
}

}  // namespace vmgate::subresources
