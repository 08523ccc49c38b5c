#include "vmgate/server/certs_objects.hpp"

#include <algorithm>

#include "vmgate/common/base64.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/common/json_decode.hpp"

namespace vmgate::certs {

namespace {

Result<json::Document> parse_object(std::string_view body, std::string_view what) {
  Result<json::Document, json::DecodeError> parsed = json::parse_json(body);
  if (!parsed) {
    return Error{std::string(what) + ": not JSON: " + parsed.error().message};
  }
  if (!parsed->IsObject()) {
    return Error{std::string(what) + ": not a JSON object"};
  }
  return std::move(parsed.value());
}

std::string json_string(std::string_view text) {
  json::Document document;
  const json::Value value = json::make_string(text, document.GetAllocator());
  return json::to_string(value);
}

}  // namespace

Result<SecretObject> read_secret(std::string_view body, std::string_view what) {
  Result<json::Document> document = parse_object(body, what);
  if (!document) {
    return document.error();
  }
  if (json::find_string(*document, "kind") != "Secret") {
    return Error{std::string(what) + ": not a Secret (kind \"" + std::string(json::find_string(*document, "kind")) +
                 "\")"};
  }
  SecretObject secret;
  secret.body = std::string(body);
  secret.state.exists = true;
  if (const json::Value* data = json::find_object(*document, "data")) {
    for (const auto& member : data->GetObject()) {
      const std::string name(json::as_view(member.name));
      if (!member.value.IsString()) {
        return Error{std::string(what) + ": data." + name + " is " + std::string(json::type_name(member.value)) +
                     ", not a base64 string"};
      }
      std::optional<std::string> decoded = common::base64_decode(json::as_view(member.value));
      if (!decoded) {
        return Error{std::string(what) + ": data." + name + " is not base64"};
      }
      secret.state.data[name] = std::move(*decoded);
    }
  }
  if (const json::Value* annotations = json::find_path(*document, {"metadata", "annotations"});
      annotations != nullptr && annotations->IsObject()) {
    for (const auto& member : annotations->GetObject()) {
      if (member.value.IsString()) {
        secret.state.annotations[std::string(json::as_view(member.name))] = std::string(json::as_view(member.value));
      }
    }
  }
  return secret;
}

Result<std::string> secret_body(std::string_view original, std::string_view name, std::string_view namespace_name,
                                const std::map<std::string, std::string>& data,
                                const std::map<std::string, std::string>& annotations) {
  json::Document document;
  json::Allocator& allocator = document.GetAllocator();
  if (original.empty()) {
    document.SetObject();
    json::set_string(document, "apiVersion", "v1", allocator);
    json::set_string(document, "kind", "Secret", allocator);
    json::Value& metadata = json::ensure_object(document, "metadata", allocator);
    json::set_string(metadata, "name", name, allocator);
    json::set_string(metadata, "namespace", namespace_name, allocator);
    json::set_string(document, "type", "Opaque", allocator);
  } else {
    Result<json::Document> parsed = parse_object(original, "Secret " + std::string(name));
    if (!parsed) {
      return parsed.error();
    }
    document.Swap(*parsed);
  }
  json::Allocator& alloc = document.GetAllocator();
  json::Value encoded(rapidjson::kObjectType);
  for (const auto& [key, value] : data) {
    encoded.AddMember(json::make_string(key, alloc), json::make_string(common::base64_encode(value), alloc), alloc);
  }
  json::set(document, "data", std::move(encoded), alloc);
  json::erase(document, "stringData");
  json::Value& metadata = json::ensure_object(document, "metadata", alloc);
  json::erase(metadata, "managedFields");
  json::Value& kept = json::ensure_object(metadata, "annotations", alloc);
  for (const auto& [key, value] : annotations) {
    if (value.empty()) {
      json::erase(kept, key);
    } else {
      json::set_string(kept, key, value, alloc);
    }
  }
  return json::to_string(document);
}

Result<WebhookConfiguration> read_configuration(std::string_view body, ConfigurationKind kind, std::string_view what) {
  Result<json::Document> document = parse_object(body, what);
  if (!document) {
    return document.error();
  }
  WebhookConfiguration configuration;
  configuration.kind = kind;
  if (const json::Value* metadata = json::find_object(*document, "metadata")) {
    configuration.name = std::string(json::find_string(*metadata, "name"));
  }
  const json::Value* webhooks = json::find(*document, "webhooks");
  if (webhooks == nullptr || webhooks->IsNull()) {
    return configuration;
  }
  if (!webhooks->IsArray()) {
    return Error{std::string(what) + ": webhooks is " + std::string(json::type_name(*webhooks)) + ", not a list"};
  }
  for (rapidjson::SizeType i = 0; i < webhooks->Size(); ++i) {
    const json::Value& entry = (*webhooks)[i];
    const std::string field = std::string(what) + ": webhooks[" + std::to_string(i) + "]";
    if (!entry.IsObject()) {
      return Error{field + " is not an object"};
    }
    Webhook webhook;
    webhook.name = std::string(json::find_string(entry, "name"));
    if (const json::Value* client = json::find_object(entry, "clientConfig")) {
      const std::string_view bundle = json::find_string(*client, "caBundle");
      if (!bundle.empty()) {
        std::optional<std::string> decoded = common::base64_decode(bundle);
        if (!decoded) {
          return Error{field + ".clientConfig.caBundle is not base64"};
        }
        webhook.ca_bundle = std::move(*decoded);
      }
      webhook.url = std::string(json::find_string(*client, "url"));
      if (const json::Value* service = json::find_object(*client, "service")) {
        webhook.service_namespace = std::string(json::find_string(*service, "namespace"));
        webhook.service_name = std::string(json::find_string(*service, "name"));
        if (const json::Value* port = json::find(*service, "port"); port != nullptr && port->IsUint()) {
          if (port->GetUint() == 0 || port->GetUint() > 65535) {
            return Error{field + ".clientConfig.service.port is not a port number"};
          }
          webhook.service_port = static_cast<std::uint16_t>(port->GetUint());
        }
      }
    }
    configuration.webhooks.push_back(std::move(webhook));
  }
  return configuration;
}

std::string ca_bundle_patch(const WebhookConfiguration& configuration, std::string_view bundle_pem) {
  const std::string encoded = json_string(common::base64_encode(bundle_pem));
  std::string patch = "[";
  for (std::size_t i = 0; i < configuration.webhooks.size(); ++i) {
    const std::string at = "/webhooks/" + std::to_string(i);
    if (i > 0) {
      patch += ",";
    }
    patch += R"({"op":"test","path":)" + json_string(at + "/name") + R"(,"value":)" +
             json_string(configuration.webhooks[i].name) + "},";
    patch += R"({"op":"add","path":)";
    patch += json_string(at + "/clientConfig/caBundle");
    patch += R"(,"value":)";
    patch += encoded;
    patch += "}";
  }
  return patch + "]";
}

Result<std::vector<std::string>> ready_endpoints(std::string_view service_body, std::string_view slices_body,
                                                 std::uint16_t port) {
  Result<json::Document> service = parse_object(service_body, "Service");
  if (!service) {
    return service.error();
  }
  const std::string service_name = [&] {
    const json::Value* metadata = json::find_object(*service, "metadata");
    return metadata != nullptr ? std::string(json::find_string(*metadata, "name")) : std::string();
  }();
  const json::Value* ports = json::find_path(*service, {"spec"});
  ports = ports != nullptr ? json::find_array(*ports, "ports") : nullptr;
  const json::Value* matched = nullptr;
  for (rapidjson::SizeType i = 0; ports != nullptr && i < ports->Size(); ++i) {
    const json::Value* number = json::find((*ports)[i], "port");
    if (number != nullptr && number->IsUint() && number->GetUint() == port) {
      matched = &(*ports)[i];
    }
  }
  if (matched == nullptr) {
    return Error{"Service " + service_name + " has no port " + std::to_string(port)};
  }
  const std::string port_name(json::find_string(*matched, "name"));
  Result<json::Document> slices = parse_object(slices_body, "EndpointSlice list");
  if (!slices) {
    return slices.error();
  }
  std::vector<std::string> endpoints;
  const json::Value* items = json::find_array(*slices, "items");
  for (rapidjson::SizeType i = 0; items != nullptr && i < items->Size(); ++i) {
    const json::Value& slice = (*items)[i];
    int number = -1;
    if (const json::Value* slice_ports = json::find_array(slice, "ports")) {
      for (const json::Value& entry : slice_ports->GetArray()) {
        const json::Value* value = json::find(entry, "port");
        if (json::find_string(entry, "name") == port_name && value != nullptr && value->IsInt()) {
          number = value->GetInt();
        }
      }
    }
    const json::Value* members = json::find_array(slice, "endpoints");
    if (number <= 0 || members == nullptr) {
      continue;
    }
    const bool v6 = json::find_string(slice, "addressType") == "IPv6";
    for (const json::Value& endpoint : members->GetArray()) {
      const json::Value* ready = json::find_path(endpoint, {"conditions"});
      ready = ready != nullptr ? json::find(*ready, "ready") : nullptr;
      if (ready != nullptr && ready->IsBool() && !ready->GetBool()) {
        continue;  // unset counts as ready (the API's rule)
      }
      if (const json::Value* addresses = json::find_array(endpoint, "addresses")) {
        for (const json::Value& address : addresses->GetArray()) {
          if (address.IsString()) {
            const std::string text(json::as_view(address));
            const std::string host = v6 ? "[" + text + "]" : text;
            const std::string endpoint_text = host + ":" + std::to_string(number);
            if (std::find(endpoints.begin(), endpoints.end(), endpoint_text) == endpoints.end()) {
              endpoints.push_back(endpoint_text);
            }
          }
        }
      }
    }
  }
  return endpoints;
}

}  // namespace vmgate::certs
