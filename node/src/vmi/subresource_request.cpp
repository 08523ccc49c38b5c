// The subresource endpoint's decisions (subresource_request.hpp). Follows KubeVirt's virt-handler
// REST server (pkg/virt-handler/rest/console.go, lifecycle.go): PUT …/pause and …/unpause, the
// console as a WebSocket; virt-api reaches it with a client certificate (mTLS).
#include "vmgate/node/subresource_request.hpp"

#include <algorithm>
#include <vector>

#include "vmgate/admission/validation/dns1123.hpp"
#include "vmgate/common/json_text.hpp"

namespace vmgate::node {
namespace {

// A DNS subdomain (RFC 1123, apimachinery's check), the form of namespace and VMI names.
bool is_object_name(std::string_view text) {
  return admission::validation::dns1123_subdomain_errors(text).empty();
}

// A Kubernetes uid: a UUID in lower-case hex, 8-4-4-4-12.
bool is_uid(std::string_view text) {
  if (text.size() != 36) {
    return false;
  }
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

// Splits "/a/b/c" into its components; empty components make it unusable (nullopt).
std::optional<std::vector<std::string_view>> components(std::string_view path) {
  if (path.empty() || path.front() != '/') {
    return std::nullopt;
  }
  std::vector<std::string_view> parts;
  path.remove_prefix(1);
  while (true) {
    const std::size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (part.empty()) {
      return std::nullopt;
    }
    parts.push_back(part);
    if (slash == std::string_view::npos) {
      return parts;
    }
    path.remove_prefix(slash + 1);
  }
}

}  // namespace

std::string message_body(std::string_view message) {
  std::string body = R"({"message":)";
  json::append_quoted(body, message);
  return body + "}";
}

SubresourceReply refusal(unsigned status, std::string_view message) {
  return {status, message_body(message)};
}

std::string vmi_key(const SubresourceTarget& target) {
  return target.namespace_name + "/" + target.name;
}

Result<SubresourceTarget, SubresourceReply> parse_subresource_request(std::string_view method, std::string_view target,
                                                                      std::string_view vmi_uid,
                                                                      bool websocket_upgrade) {
  const std::string_view path = target.substr(0, target.find('?'));
  const std::optional<std::vector<std::string_view>> parts = components(path);
  if (!parts || parts->size() != 6 || (*parts)[0] != "v1" || (*parts)[1] != "namespaces" ||
      (*parts)[3] != "virtualmachineinstances" || !is_object_name((*parts)[2]) || !is_object_name((*parts)[4])) {
    return refusal(404,
                   "not found: the endpoint serves /v1/namespaces/{namespace}/virtualmachineinstances/{name}/"
                   "{pause,unpause,console}");
  }
  SubresourceTarget result;
  result.namespace_name = std::string((*parts)[2]);
  result.name = std::string((*parts)[4]);
  const std::string_view subresource = (*parts)[5];
  std::string_view wanted_method = "PUT";
  if (subresource == "pause") {
    result.action = SubresourceAction::pause;
  } else if (subresource == "unpause") {
    result.action = SubresourceAction::unpause;
  } else if (subresource == "console") {
    result.action = SubresourceAction::console;
    wanted_method = "GET";
  } else {
    return refusal(
        404, "not found: no subresource \"" + std::string(subresource.substr(0, 64)) + "\" (pause, unpause, console)");
  }
  if (method != wanted_method) {
    return refusal(405, std::string(subresource) + " takes " + std::string(wanted_method));
  }
  if (vmi_uid.empty()) {
    return refusal(400, "the header " + std::string(vmi_uid_header) + " is required");
  }
  if (!is_uid(vmi_uid)) {
    return refusal(400, "the header " + std::string(vmi_uid_header) + " is not a UUID");
  }
  result.vmi_uid = std::string(vmi_uid);
  if (result.action == SubresourceAction::console && !websocket_upgrade) {
    return refusal(400, "console is a WebSocket: the request must be an upgrade");
  }
  return result;
}

std::optional<SubresourceReply> refuse_client(std::span<const std::string> common_names, std::string_view allowed) {
  if (common_names.size() == 1 && common_names.front() == allowed) {
    return std::nullopt;
  }
  return refusal(403, "the client certificate's subject must be CN=" + std::string(allowed));
}

Result<LauncherPod, SubresourceReply> select_launcher(std::span<const LauncherPod> pods,
                                                      const SubresourceTarget& target) {
  for (const LauncherPod& pod : pods) {
    if (pod.namespace_name == target.namespace_name && pod.vmi_name == target.name && pod.vmi_uid == target.vmi_uid) {
      return pod;
    }
  }
  return refusal(404, "no launcher of VMI " + vmi_key(target) + " (uid " + target.vmi_uid + ") on this node");
}

SubresourceReply control_reply(std::string_view answer, const SubresourceTarget& target) {
  if (!answer.empty() && answer.back() == '\n') {
    answer.remove_suffix(1);
  }
  if (answer == "ok") {
    return {200, "{}"};
  }
  if (answer.starts_with("error ") && answer.find('\n') == std::string_view::npos) {
    return refusal(409, answer.substr(6));
  }
  return refusal(502, "the launcher of VMI " + vmi_key(target) + " gave no answer");
}

}  // namespace vmgate::node
