// The option bodies of the lifecycle requests (StartOptions, StopOptions, RestartOptions,
// PauseOptions, UnpauseOptions in kubevirt.io/api core/v1), read as virt-api's decodeBody reads
// them: JSON or YAML, an empty body is no options, a field of the wrong type is a 400.
#include "vmgate/kube/yaml_json.hpp"
#include "vmgate/server/subresource_api.hpp"

namespace vmgate::subresources {

namespace {

ApiStatus unmarshal_error(std::string_view why) {
  return bad_request("Can not unmarshal Request body to struct, error: " + std::string(why));
}

// encoding/json's name of a JSON value's type in an UnmarshalTypeError.
std::string_view go_json_type(const json::Value& value) {
  return value.IsString()   ? "string"
         : value.IsNumber() ? "number"
         : value.IsBool()   ? "bool"
         : value.IsArray()  ? "array"
         : value.IsObject() ? "object"
                            : "null";
}

}  // namespace

Result<RequestOptions, ApiStatus> parse_options(Action action, std::string_view body) {
  RequestOptions options;
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return options;
  }
  kube::YamlLimits limits;
  limits.max_depth = 16;
  limits.max_document_bytes = std::size_t{64} << 10U;
  limits.max_stream_bytes = limits.max_document_bytes;
  auto documents = kube::yaml_to_json(body, limits);
  if (!documents) {
    return unmarshal_error(documents.error().message + " (line " + std::to_string(documents.error().line) + ")");
  }
  if (documents->empty() || documents->front().document->IsNull()) {
    return options;
  }
  const json::Value& object = *documents->front().document;
  if (!object.IsObject()) {
    return unmarshal_error("json: cannot unmarshal " + std::string(go_json_type(object)) + " into Go value");
  }
  const std::string_view type = action == Action::start     ? "StartOptions"
                                : action == Action::stop    ? "StopOptions"
                                : action == Action::restart ? "RestartOptions"
                                : action == Action::pause   ? "PauseOptions"
                                                            : "UnpauseOptions";
  const auto wrong_type = [type](std::string_view field, std::string_view got, std::string_view want) {
    return unmarshal_error("json: cannot unmarshal " + std::string(got) + " into Go struct field " + std::string(type) +
                           "." + std::string(field) + " of type " + std::string(want));
  };
  if (const json::Value* dry_run = json::find(object, "dryRun"); dry_run != nullptr && !dry_run->IsNull()) {
    if (!dry_run->IsArray()) {
      return wrong_type("dryRun", go_json_type(*dry_run), "[]string");
    }
    for (const json::Value& each : dry_run->GetArray()) {
      if (!each.IsString()) {
        return wrong_type("dryRun", go_json_type(each), "string");
      }
      options.dry_run.emplace_back(json::as_view(each));
    }
  }
  if (action == Action::start) {
    if (const json::Value* paused = json::find(object, "paused"); paused != nullptr && !paused->IsNull()) {
      if (!paused->IsBool()) {
        return wrong_type("paused", go_json_type(*paused), "bool");
      }
      options.paused = paused->GetBool();
    }
  }
  const std::string_view grace_field = action == Action::stop      ? "gracePeriod"
                                       : action == Action::restart ? "gracePeriodSeconds"
                                                                   : "";
  if (!grace_field.empty()) {
    if (const json::Value* grace = json::find(object, grace_field); grace != nullptr && !grace->IsNull()) {
      if (!grace->IsInt64()) {
        return wrong_type(grace_field, go_json_type(*grace), "int64");
      }
      options.grace_period = grace->GetInt64();
    }
  }
  // RestartVMRequestHandler checks these before it reads the VM.
  if (action == Action::restart && options.grace_period && *options.grace_period > 0) {
    return bad_request("For force restart, only gracePeriod=0 is supported for now");
  }
  if (action == Action::restart && options.grace_period && *options.grace_period < 0) {
    return bad_request("gracePeriod has to be greater or equal to 0");
  }
  return options;
}

}  // namespace vmgate::subresources
