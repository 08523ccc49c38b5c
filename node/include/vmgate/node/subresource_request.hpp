#pragma once
// The decisions of the node agent's subresource endpoint (docs/node.md, "The subresource
// endpoint"), virt-handler's port 8186 role: `vmgate serve` (the aggregated API server of
// `subresources.kubevirt.io`) asks this node to pause, unpause or open the console of a VMI whose
// launcher runs here. What is asked (the request line and the VMI uid header), whether the client
// certificate's name may ask, which launcher pod answers, and what the launcher's answer becomes
// in HTTP. Pure: no sockets, files, threads or clocks; thread-safe.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"
#include "vmgate/node/launcher_status.hpp"

namespace vmgate::node {

/// The header naming the VMI's uid; required (a VMI deleted and created again under the name
/// must not be paused through its predecessor's pod).
inline constexpr std::string_view vmi_uid_header = "X-Vmgate-Vmi-Uid";
/// The default --subresource-client-name: the subject CN of `vmgate serve`'s client certificate.
inline constexpr std::string_view default_subresource_client_name = "vmgate-subresources";
/// The WebSocket subprotocol KubeVirt's console speaks (virtctl, virt-api): binary frames, raw bytes.
inline constexpr std::string_view console_subprotocol = "plain.kubevirt.io";

enum class SubresourceAction { pause, unpause, console };

/// What a request asks for.
struct SubresourceTarget {
  SubresourceAction action = SubresourceAction::pause;
  std::string namespace_name;
  std::string name;
  std::string vmi_uid;
  bool operator==(const SubresourceTarget&) const = default;
};

/// An HTTP answer of the endpoint: the status and a JSON body (`{}`, `{"message":"…"}`).
struct SubresourceReply {
  unsigned status = 200;
  std::string body;
  bool operator==(const SubresourceReply&) const = default;
};

/// `{"message": message}` (JSON-escaped).
std::string message_body(std::string_view message);
/// A reply with status `status` and the body message_body(message).
SubresourceReply refusal(unsigned status, std::string_view message);

/// Reads a request: `PUT /v1/namespaces/{ns}/virtualmachineinstances/{name}/pause` or `/unpause`,
/// `GET …/console` as a WebSocket upgrade (`websocket_upgrade`), a query string ignored, with the
/// uid header `vmi_uid` (empty: absent). Refusals: 404 for another path or names that are not
/// object names, 405 for another method, 400 for a missing or malformed uid, or a console request
/// that is not a WebSocket upgrade.
Result<SubresourceTarget, SubresourceReply> parse_subresource_request(std::string_view method, std::string_view target,
                                                                      std::string_view vmi_uid, bool websocket_upgrade);

/// Whether a client certificate whose subject carries these common names may ask: exactly one CN,
/// equal to `allowed`. nullopt: allowed; else the 403 reply.
std::optional<SubresourceReply> refuse_client(std::span<const std::string> common_names, std::string_view allowed);

/// The launcher pod of `target` among the launcher pods of this node: in the target's namespace,
/// controlled by the VMI of that name and uid. Else the 404 reply
/// `{"message":"no launcher of VMI ns/name (uid …) on this node"}`.
Result<LauncherPod, SubresourceReply> select_launcher(std::span<const LauncherPod> pods,
                                                      const SubresourceTarget& target);

/// The HTTP answer for the launcher's answer line to pause or unpause (as read, up to EOF):
/// `ok` → 200 `{}`; `error <text>` → 409 with the text as message; anything else → 502.
SubresourceReply control_reply(std::string_view answer, const SubresourceTarget& target);

/// "ns/name", as messages name a VMI.
std::string vmi_key(const SubresourceTarget& target);

}  // namespace vmgate::node
