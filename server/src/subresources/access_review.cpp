// Who asks, from the aggregator's request headers, and the SubjectAccessReview that decides
// (virt-api's authorizer.go: the same headers, the same resource attributes).
#include "vmgate/common/ascii.hpp"
#include "vmgate/server/subresource_api.hpp"

namespace vmgate::subresources {

namespace {

using common::ascii_lower;
using common::equals_ignoring_ascii_case;

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  c = ascii_lower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

// url.PathUnescape of an extra's key; a malformed escape keeps the key as sent (as virt-api does).
std::string unescape_key(std::string_view key) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (key[i] != '%') {
      out.push_back(key[i]);
      continue;
    }
    if (i + 2 >= key.size() || hex_value(key[i + 1]) < 0 || hex_value(key[i + 2]) < 0) {
      return std::string(key);
    }
    out.push_back(static_cast<char>(hex_value(key[i + 1]) * 16 + hex_value(key[i + 2])));
    i += 2;
  }
  return out;
}

std::vector<std::string> values_of(const std::vector<HeaderField>& headers, std::string_view name) {
  std::vector<std::string> values;
  for (const auto& [field, value] : headers) {
    if (equals_ignoring_ascii_case(field, name)) {
      values.emplace_back(value);
    }
  }
  return values;
}

}  // namespace

Result<Identity> identity_from_headers(const std::vector<HeaderField>& headers, const HeaderNames& names) {
  Identity identity;
  bool have_user = false;
  for (const std::string& name : names.user) {
    if (std::vector<std::string> values = values_of(headers, name); !values.empty()) {
      identity.user = std::move(values.front());
      have_user = true;
      break;
    }
  }
  if (!have_user) {
    return Error{"a valid user header is required for authorization"};
  }
  bool have_groups = false;
  for (const std::string& name : names.group) {
    if (std::vector<std::string> values = values_of(headers, name); !values.empty()) {
      identity.groups = std::move(values);
      have_groups = true;
      break;
    }
  }
  if (!have_groups) {
    return Error{"a valid group header is required for authorization"};
  }
  for (const std::string& prefix : names.extra_prefix) {
    for (const auto& [field, value] : headers) {
      if (field.size() <= prefix.size() || !equals_ignoring_ascii_case(field.substr(0, prefix.size()), prefix)) {
        continue;
      }
      std::string lowered;
      for (char c : field.substr(prefix.size())) {
        lowered.push_back(ascii_lower(c));
      }
      std::string key = unescape_key(lowered);
      auto existing = identity.extra.begin();
      while (existing != identity.extra.end() && existing->first != key) {
        ++existing;
      }
      if (existing == identity.extra.end()) {
        identity.extra.emplace_back(std::move(key), std::vector<std::string>{});
        existing = std::prev(identity.extra.end());
      }
      existing->second.emplace_back(value);
    }
  }
  return identity;
}

std::string access_review_json(const Identity& identity, const ObjectRequest& request) {
  json::Document review(rapidjson::kObjectType);
  auto& a = review.GetAllocator();
  json::set_string(review, "apiVersion", "authorization.k8s.io/v1", a);
  json::set_string(review, "kind", "SubjectAccessReview", a);
  json::Value spec(rapidjson::kObjectType);
  json::set_string(spec, "user", identity.user, a);
  json::Value groups(rapidjson::kArrayType);
  for (const std::string& group : identity.groups) {
    groups.PushBack(json::make_string(group, a), a);
  }
  json::set(spec, "groups", std::move(groups), a);
  if (!identity.extra.empty()) {
    json::Value extra(rapidjson::kObjectType);
    for (const auto& [key, values] : identity.extra) {
      json::Value list(rapidjson::kArrayType);
      for (const std::string& value : values) {
        list.PushBack(json::make_string(value, a), a);
      }
      json::set(extra, key, std::move(list), a);
    }
    json::set(spec, "extra", std::move(extra), a);
  }
  json::Value attributes(rapidjson::kObjectType);
  json::set_string(attributes, "namespace", request.namespace_, a);
  json::set_string(attributes, "verb", request.verb, a);
  json::set_string(attributes, "group", api_group, a);
  json::set_string(attributes, "version", request.version, a);
  json::set_string(attributes, "resource", request.resource, a);
  json::set_string(attributes, "subresource", request.subresource, a);
  json::set_string(attributes, "name", request.name, a);
  json::set(spec, "resourceAttributes", std::move(attributes), a);
  json::set(review, "spec", std::move(spec), a);
  return json::to_string(review);
}

}  // namespace vmgate::subresources
