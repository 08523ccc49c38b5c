// `vmgate subresources`: the HTTPS server kube-apiserver's aggregator calls for
// subresources.kubevirt.io. A thread per connection (the requests are few and each waits on
// the Kubernetes API or a node agent); a console is relayed by that thread with asynchronous
// reads and writes on both WebSockets, one message in flight per direction (backpressure).
#include "vmgate/server/subresources_command.hpp"

#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/log_line.hpp"
#include "vmgate/kube/stop_signal.hpp"
#include "vmgate/server/subresource_api.hpp"
#include "vmgate/server/subresources_options.hpp"
#include "vmgate/server/tls.hpp"

namespace vmgate::subresources {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
using WebSocket = websocket::stream<TlsStream>;

constexpr auto api_deadline = std::chrono::seconds(10);
constexpr std::size_t max_request_body = std::size_t{64} << 10U;
constexpr std::string_view console_protocol = "plain.kubevirt.io";
constexpr std::string_view vmi_uid_header = "X-Vmgate-Vmi-Uid";

// A blocking socket's reads and writes give up after `timeout` (Beast's sync calls have no deadline).
void set_socket_timeouts(int fd, std::chrono::seconds timeout) {
  timeval value{};
  value.tv_sec = static_cast<time_t>(timeout.count());
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, sizeof value);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, sizeof value);
}

// What the aggregator's front proxy must be: its CA (a file), the names it may carry and the
// headers naming the user.
struct FrontProxy {
  std::string ca_file;
  std::vector<std::string> allowed_names;  // empty: any name the CA signed
  HeaderNames headers;
};

std::vector<std::string> string_list(std::string_view json_text) {
  std::vector<std::string> out;
  Result<json::Document, json::DecodeError> parsed = json::parse_json(json_text);
  if (parsed && parsed->IsArray()) {
    for (const json::Value& each : parsed->GetArray()) {
      if (each.IsString()) {
        out.emplace_back(json::as_view(each));
      }
    }
  }
  return out;
}

// The API server's ConfigMap kube-system/extension-apiserver-authentication.
Result<FrontProxy> front_proxy_from_cluster(kube::ApiConnection& api, const std::filesystem::path& directory) {
  Result<kube::HttpResponse, kube::TransportError> response =
      api.get("/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", api_deadline);
  if (!response) {
    return Error{"reading ConfigMap kube-system/extension-apiserver-authentication: " + response.error().message};
  }
  if (response->status != 200) {
    return Error{"reading ConfigMap kube-system/extension-apiserver-authentication: " +
                 std::to_string(response->status) + " " + kube::status_message(*response)};
  }
  Result<json::Document, json::DecodeError> config_map = json::parse_json(response->body);
  const json::Value* data = config_map ? json::find_object(*config_map, "data") : nullptr;
  if (data == nullptr || json::find_string(*data, "requestheader-client-ca-file").empty()) {
    return Error{
        "ConfigMap kube-system/extension-apiserver-authentication has no requestheader-client-ca-file: "
        "kube-apiserver runs without --requestheader-client-ca-file, so it cannot call aggregated APIs"};
  }
  FrontProxy proxy;
  proxy.ca_file = (directory / "requestheader-client-ca.crt").string();
  std::ofstream(proxy.ca_file) << json::find_string(*data, "requestheader-client-ca-file");
  proxy.allowed_names = string_list(json::find_string(*data, "requestheader-allowed-names"));
  if (auto users = string_list(json::find_string(*data, "requestheader-username-headers")); !users.empty()) {
    proxy.headers.user = std::move(users);
  }
  if (auto groups = string_list(json::find_string(*data, "requestheader-group-headers")); !groups.empty()) {
    proxy.headers.group = std::move(groups);
  }
  if (auto extra = string_list(json::find_string(*data, "requestheader-extra-headers-prefix")); !extra.empty()) {
    proxy.headers.extra_prefix = std::move(extra);
  }
  return proxy;
}

std::string common_name(X509* certificate) {
  X509_NAME* subject = X509_get_subject_name(certificate);
  const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index < 0) {
    return {};
  }
  ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
  const unsigned char* bytes = ASN1_STRING_get0_data(data);
  return std::string(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(ASN1_STRING_length(data)));
}

struct Answer {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
};

Answer status_answer(const ApiStatus& status) {
  return Answer{static_cast<unsigned>(status.code), "application/json", status_json(status)};
}

// What every connection shares; held by each connection's thread, so that it outlives a stop.
struct Context {
  SubresourcesOptions options;
  kube::ClientConfig api_config;
  FrontProxy front_proxy;
  std::shared_ptr<SSL_CTX> node_link_context;   // client side, verifies the node agents
  std::unique_ptr<asio::ssl::context> serving;  // the server side, verifies the front proxy
  std::unique_ptr<kube::LogSink> log_sink;

  void log(std::string_view level, std::string_view message, const kube::EventLog::Fields& fields = {}) const {
    kube::EventLog log(*log_sink);
    log(level, message, fields);
  }
};

std::string uid_of(const json::Value& object) {
  const json::Value* metadata = json::find_object(object, "metadata");
  return metadata == nullptr ? std::string() : std::string(json::find_string(*metadata, "uid"));
}

// The node agent on `node`: its pod IP, from the pods of --node-namespace matching --node-selector.
Result<std::string, ApiStatus> node_agent_address(const Context& context, kube::ApiConnection& api,
                                                  std::string_view node) {
  const std::string target = "/api/v1/namespaces/" + context.options.node_namespace +
                             "/pods?labelSelector=" + kube::query_escape(context.options.node_selector) +
                             "&fieldSelector=" + kube::query_escape("spec.nodeName=" + std::string(node));
  Result<kube::HttpResponse, kube::TransportError> response = api.get(target, api_deadline);
  if (!response || response->status != 200) {
    return internal_error("listing the node agents: " +
                          (response ? kube::status_message(*response) : response.error().message));
  }
  Result<json::Document, json::DecodeError> list = json::parse_json(response->body);
  const json::Value* items = list ? json::find_array(*list, "items") : nullptr;
  if (items != nullptr) {
    for (const json::Value& pod : items->GetArray()) {
      const json::Value* status = json::find_object(pod, "status");
      if (status != nullptr && json::find_string(*status, "phase") == "Running" &&
          !json::find_string(*status, "podIP").empty()) {
        return std::string(json::find_string(*status, "podIP"));
      }
    }
  }
  return internal_error("no running node agent on node " + std::string(node) + " (pods " +
                        context.options.node_selector + " in namespace " + context.options.node_namespace + ")");
}

// A TLS connection to a node agent, its certificate verified against --node-link-ca and
// --node-link-server-name, ours presented.
Result<std::unique_ptr<WebSocket>, ApiStatus> connect_node_agent(const Context& context, asio::io_context& io,
                                                                 const std::string& address) {
  asio::ssl::context ssl(SSL_CTX_up_ref(context.node_link_context.get()) == 1 ? context.node_link_context.get()
                                                                              : nullptr);
  auto stream = std::make_unique<WebSocket>(io, ssl);
  beast::error_code error;
  const asio::ip::address ip = asio::ip::make_address(address, error);
  if (error) {
    return internal_error("node agent address " + address + ": " + error.message());
  }
  beast::get_lowest_layer(*stream).expires_after(std::chrono::seconds(10));
  bool connected = false;
  beast::get_lowest_layer(*stream).async_connect(tcp::endpoint(ip, context.options.node_port),
                                                 [&](beast::error_code result) {
                                                   error = result;
                                                   connected = !result;
                                                 });
  io.run();
  io.restart();
  if (!connected) {
    return internal_error("connecting to the node agent at " + address + ": " + error.message());
  }
  beast::get_lowest_layer(*stream).expires_never();
  set_socket_timeouts(beast::get_lowest_layer(*stream).socket().native_handle(), std::chrono::seconds(10));
  SSL* handle = stream->next_layer().native_handle();
  // SSL_set_tlsext_host_name() without its C cast.
  SSL_ctrl(handle, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
           const_cast<char*>(context.options.node_link_server_name.c_str()));
  SSL_set1_host(handle, context.options.node_link_server_name.c_str());
  stream->next_layer().handshake(asio::ssl::stream_base::client, error);
  if (error) {
    return internal_error("TLS with the node agent at " + address + ": " + error.message());
  }
  return stream;
}

std::string node_agent_path(const ObjectRequest& request) {
  return "/v1/namespaces/" + request.namespace_ + "/virtualmachineinstances/" + request.name + "/" +
         request.subresource;
}

// PUT pause|unpause on the VMI's node agent: 200, or its message as virt-api's InternalError.
std::optional<ApiStatus> forward_to_node(const Context& context, kube::ApiConnection& api, const ObjectRequest& request,
                                         const json::Value& vmi) {
  const json::Value* status = json::find_object(vmi, "status");
  const std::string_view node = status == nullptr ? std::string_view() : json::find_string(*status, "nodeName");
  if (node.empty()) {
    return internal_error("VMI " + request.name + " is not on a node");
  }
  Result<std::string, ApiStatus> address = node_agent_address(context, api, node);
  if (!address) {
    return address.error();
  }
  asio::io_context io;
  Result<std::unique_ptr<WebSocket>, ApiStatus> stream = connect_node_agent(context, io, *address);
  if (!stream) {
    return stream.error();
  }
  http::request<http::string_body> put(http::verb::put, node_agent_path(request), 11);
  put.set(http::field::host, context.options.node_link_server_name);
  put.set(vmi_uid_header, uid_of(vmi));
  put.prepare_payload();
  beast::error_code error;
  http::write((*stream)->next_layer(), put, error);
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_request_body);
  if (!error) {
    http::read((*stream)->next_layer(), buffer, parser, error);
  }
  if (error) {
    return internal_error("the node agent on " + std::string(node) + ": " + error.message());
  }
  const auto& response = parser.get();
  if (response.result_int() == 200) {
    return std::nullopt;
  }
  Result<json::Document, json::DecodeError> body = json::parse_json(response.body());
  const std::string message =
      body && body->IsObject() ? std::string(json::find_string(*body, "message")) : response.body().substr(0, 200);
  return internal_error(message.empty() ? "the node agent answered " + std::to_string(response.result_int()) : message);
}

// GET an object: the document, nullptr-equivalent (a null Document) when 404, or the error.
Result<json::Document, ApiStatus> get_object(kube::ApiConnection& api, const std::string& target, std::string_view kind,
                                             std::string_view name, bool missing_is_null) {
  Result<kube::HttpResponse, kube::TransportError> response = api.get(target, api_deadline);
  if (!response) {
    return internal_error("unable to retrieve " + std::string(kind == "virtualmachine" ? "vm" : "vmi") + " [" +
                          std::string(name) + "]: " + response.error().message);
  }
  if (response->status == 404) {
    if (missing_is_null) {
      return json::Document();
    }
    return not_found(kind, name);
  }
  if (response->status != 200) {
    return internal_error("unable to retrieve " + std::string(kind == "virtualmachine" ? "vm" : "vmi") + " [" +
                          std::string(name) + "]: " + kube::status_message(*response));
  }
  Result<json::Document, json::DecodeError> parsed = json::parse_json(response->body);
  if (!parsed) {
    return internal_error("the API server's " + std::string(kind) + " is not JSON: " + parsed.error().message);
  }
  return std::move(parsed.value());
}

std::string object_path(std::string_view resource, const ObjectRequest& request) {
  return "/apis/kubevirt.io/v1/namespaces/" + request.namespace_ + "/" + std::string(resource) + "/" + request.name;
}

// The writes of a lifecycle plan, then its answer (202, or the error it ends with).
Answer apply_plan(const Context& context, kube::ApiConnection& api, const ObjectRequest& request,
                  const LifecyclePlan& plan, const json::Value* vmi) {
  const std::string dry_run = plan.dry_run ? "?dryRun=All" : "";
  for (const ApiWrite& write : plan.writes) {
    const std::string target = write.target == ApiWrite::Target::vmi ? object_path("virtualmachineinstances", request)
                               : write.target == ApiWrite::Target::vm_status
                                   ? object_path("virtualmachines", request) + "/status"
                                   : object_path("virtualmachines", request);
    Result<kube::HttpResponse, kube::TransportError> response =
        api.request("PATCH", target + dry_run, write.json_patch, "application/json-patch+json", api_deadline);
    if (!response) {
      return status_answer(internal_error(response.error().message));
    }
    if (response->status < 200 || response->status > 299) {
      const std::string message = kube::status_message(*response);
      if (message.find("jsonpatch test operation does not apply") != std::string::npos ||
          message.find("testing value") != std::string::npos) {
        return status_answer(conflict("virtualmachine", request.name, message));
      }
      return status_answer(internal_error(message));
    }
    context.log("info", "patched",
                {{"object", request.namespace_ + "/" + request.name},
                 {"subresource", request.subresource},
                 {"patch", write.json_patch}});
  }
  if (plan.error) {
    return status_answer(*plan.error);
  }
  if (plan.delete_launcher_pod && vmi != nullptr && !plan.dry_run) {
    const std::string uid = uid_of(*vmi);
    const std::string list = "/api/v1/namespaces/" + request.namespace_ + "/pods?labelSelector=" +
                             kube::query_escape("kubevirt.io=virt-launcher,kubevirt.io/created-by=" + uid) +
                             "&fieldSelector=" + kube::query_escape("status.phase==Running");
    Result<kube::HttpResponse, kube::TransportError> pods = api.get(list, api_deadline);
    if (!pods || pods->status != 200) {
      return status_answer(internal_error(pods ? kube::status_message(*pods) : pods.error().message));
    }
    Result<json::Document, json::DecodeError> parsed = json::parse_json(pods->body);
    const json::Value* items = parsed ? json::find_array(*parsed, "items") : nullptr;
    if (items != nullptr && !items->Empty()) {
      const std::string pod(json::find_string(*json::find_object((*items)[0], "metadata"), "name"));
      Result<kube::HttpResponse, kube::TransportError> deleted = api.request(
          "DELETE", "/api/v1/namespaces/" + request.namespace_ + "/pods/" + pod,
          R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":1})", "application/json", api_deadline);
      if (!deleted || (deleted->status != 200 && deleted->status != 202 && deleted->status != 404)) {
        return status_answer(internal_error(deleted ? kube::status_message(*deleted) : deleted.error().message));
      }
    }
  }
  return Answer{202, "application/json", ""};
}

// The SubjectAccessReview of the request: nullopt when allowed, else the reason.
std::optional<std::string> authorize(kube::ApiConnection& api, const Identity& identity, const ObjectRequest& request) {
  Result<kube::HttpResponse, kube::TransportError> response =
      api.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", access_review_json(identity, request),
                  "application/json", api_deadline);
  if (!response || response->status != 201) {
    return "internal server error";
  }
  Result<json::Document, json::DecodeError> review = json::parse_json(response->body);
  const json::Value* status = review ? json::find_object(*review, "status") : nullptr;
  const json::Value* allowed = status == nullptr ? nullptr : json::find(*status, "allowed");
  if (allowed != nullptr && allowed->IsBool() && allowed->GetBool()) {
    return std::nullopt;
  }
  return std::string(status == nullptr ? "" : json::find_string(*status, "reason"));
}

class Connection {
 public:
  // `socket` was accepted on `io`, which this connection's thread alone runs.
  Connection(std::shared_ptr<const Context> context, std::shared_ptr<asio::io_context> io, tcp::socket socket)
      : shared_(std::move(context)),
        context_(*shared_),
        io_(std::move(io)),
        stream_(std::make_unique<WebSocket>(std::move(socket), *context_.serving)) {}

  void serve() {
    auto& socket = beast::get_lowest_layer(*stream_).socket();
    set_socket_timeouts(socket.native_handle(), std::chrono::seconds(30));
    beast::error_code error;
    stream_->next_layer().handshake(asio::ssl::stream_base::server, error);
    if (error) {
      return;
    }
    for (;;) {
      beast::flat_buffer buffer;
      http::request_parser<http::string_body> parser;
      parser.body_limit(max_request_body);
      parser.header_limit(16U << 10U);
      http::read(stream_->next_layer(), buffer, parser, error);
      if (error) {
        return;
      }
      http::request<http::string_body> request = parser.release();
      const bool keep_alive = request.keep_alive();
      if (!handle(request)) {
        return;  // the connection became a console, or must close
      }
      if (!keep_alive) {
        break;
      }
    }
    stream_->next_layer().shutdown(error);
  }

 private:
  bool write(const http::request<http::string_body>& request, const Answer& answer) {
    http::response<http::string_body> response(static_cast<http::status>(answer.status), request.version());
    response.set(http::field::content_type, answer.content_type);
    response.keep_alive(request.keep_alive());
    response.body() = answer.body;
    response.prepare_payload();
    beast::error_code error;
    http::write(stream_->next_layer(), response, error);
    return !error;
  }

  bool handle(http::request<http::string_body>& request) {
    const std::string method(request.method_string());
    Result<Route, ApiStatus> routed = route(method, std::string_view(request.target()));
    if (!routed) {
      return write(request, status_answer(routed.error()));
    }
    if (const auto* discovery = std::get_if<Discovery>(&routed->what)) {
      const bool health = *discovery == Discovery::healthz;
      return write(request, Answer{200, health ? "text/plain" : "application/json",
                                   discovery_json(*discovery, routed->version)});
    }
    const ObjectRequest& object = std::get<ObjectRequest>(routed->what);
    // The aggregator's client certificate (verified in the handshake against its CA) and name.
    SSL* handle = stream_->next_layer().native_handle();
    X509* peer = SSL_get0_peer_certificate(handle);
    if (peer == nullptr || SSL_get_verify_result(handle) != X509_V_OK) {
      return write(request, Answer{401, "text/plain", "request is not authenticated"});
    }
    if (!context_.front_proxy.allowed_names.empty()) {
      const std::string name = common_name(peer);
      bool allowed = false;
      for (const std::string& each : context_.front_proxy.allowed_names) {
        allowed = allowed || each == name;
      }
      if (!allowed) {
        return write(request, Answer{401, "text/plain", "request is not authenticated"});
      }
    }
    std::vector<HeaderField> headers;
    for (const auto& field : request) {
      headers.emplace_back(std::string_view(field.name_string()), std::string_view(field.value()));
    }
    Result<Identity> identity = identity_from_headers(headers, context_.front_proxy.headers);
    if (!identity) {
      return write(request, Answer{401, "text/plain", identity.error().message});
    }
    Result<std::unique_ptr<kube::ApiConnection>> api = kube::ApiConnection::create(context_.api_config);
    if (!api) {
      return write(request, status_answer(internal_error(api.error().message)));
    }
    if (std::optional<std::string> denied = authorize(**api, *identity, object)) {
      context_.log("info", "denied",
                   {{"user", identity->user},
                    {"object", object.namespace_ + "/" + object.name},
                    {"subresource", object.subresource}});
      return write(request, Answer{401, "text/plain", *denied});
    }
    context_.log("info", "request",
                 {{"user", identity->user},
                  {"object", object.namespace_ + "/" + object.name},
                  {"resource", object.resource},
                  {"subresource", object.subresource}});
    const Action action = action_of(object);
    if (action == Action::not_served) {
      return write(request, status_answer(bad_request(
                                "vmgate does not serve " + object.resource + "/" + object.subresource +
                                ": it serves virtualmachines/start, stop, restart and virtualmachineinstances/pause, "
                                "unpause, console")));
    }
    Result<RequestOptions, ApiStatus> options = parse_options(action, request.body());
    if (!options) {
      return write(request, status_answer(options.error()));
    }
    if (action == Action::console) {
      return console(request, **api, object);
    }
    return write(request, lifecycle(**api, object, action, *options));
  }

  Answer lifecycle(kube::ApiConnection& api, const ObjectRequest& object, Action action,
                   const RequestOptions& options) {
    const std::string vm_path = object_path("virtualmachines", object);
    const std::string vmi_path = object_path("virtualmachineinstances", object);
    if (action == Action::start || action == Action::stop || action == Action::restart) {
      Result<json::Document, ApiStatus> vm = get_object(api, vm_path, "virtualmachine", object.name, false);
      if (!vm) {
        return status_answer(vm.error());
      }
      Result<json::Document, ApiStatus> vmi = get_object(api, vmi_path, "virtualmachineinstance", object.name, true);
      if (!vmi) {
        return status_answer(vmi.error());
      }
      const json::Value* current = vmi->IsNull() ? nullptr : &vmi.value();
      const LifecyclePlan plan = action == Action::start  ? plan_start(*vm, current, options)
                                 : action == Action::stop ? plan_stop(*vm, current, options)
                                                          : plan_restart(*vm, current, options);
      return apply_plan(context_, api, object, plan, current);
    }
    if (action == Action::unpause) {
      Result<json::Document, ApiStatus> vm = get_object(api, vm_path, "virtualmachine", object.name, true);
      if (!vm) {
        return status_answer(vm.error());
      }
      if (auto refused = check_unpause_vm(vm->IsNull() ? nullptr : &vm.value(), object.name)) {
        return status_answer(*refused);
      }
    }
    Result<json::Document, ApiStatus> vmi = get_object(api, vmi_path, "virtualmachineinstance", object.name, false);
    if (!vmi) {
      return status_answer(vmi.error());
    }
    if (auto refused = action == Action::pause ? check_pause(*vmi) : check_unpause(*vmi)) {
      return status_answer(*refused);
    }
    if (!options.dry_run.empty() && options.dry_run.front() == "All") {
      return Answer{200, "application/json", ""};
    }
    if (auto failed = forward_to_node(context_, api, object, *vmi)) {
      return status_answer(*failed);
    }
    context_.log("info", object.subresource == "pause" ? "paused" : "unpaused",
                 {{"object", object.namespace_ + "/" + object.name}});
    return Answer{200, "application/json", ""};
  }

  // The console: checks, the node agent's WebSocket, then ours, then the relay until either closes.
  bool console(const http::request<http::string_body>& request, kube::ApiConnection& api, const ObjectRequest& object) {
    Result<json::Document, ApiStatus> vmi =
        get_object(api, object_path("virtualmachineinstances", object), "virtualmachineinstance", object.name, false);
    if (!vmi) {
      return write(request, status_answer(vmi.error()));
    }
    if (auto refused = check_console(*vmi)) {
      return write(request, status_answer(*refused));
    }
    if (!websocket::is_upgrade(request)) {
      return write(request, status_answer(bad_request("the console is a WebSocket: the request must upgrade")));
    }
    const json::Value* status = json::find_object(*vmi, "status");
    const std::string_view node = status == nullptr ? std::string_view() : json::find_string(*status, "nodeName");
    Result<std::string, ApiStatus> address = node_agent_address(context_, api, node);
    if (!address) {
      return write(request, status_answer(address.error()));
    }
    Result<std::unique_ptr<WebSocket>, ApiStatus> node_stream = connect_node_agent(context_, *io_, *address);
    if (!node_stream) {
      return write(request, status_answer(node_stream.error()));
    }
    WebSocket& guest = **node_stream;
    const std::string uid = uid_of(*vmi);
    guest.set_option(websocket::stream_base::decorator([&uid](websocket::request_type& upgrade) {
      upgrade.set(vmi_uid_header, uid);
      upgrade.set(http::field::sec_websocket_protocol, console_protocol);
    }));
    beast::error_code error;
    websocket::response_type refused;
    guest.handshake(refused, context_.options.node_link_server_name, node_agent_path(object), error);
    if (error) {
      std::string why = refused.body().empty() ? error.message() : refused.body();
      if (Result<json::Document, json::DecodeError> body = json::parse_json(refused.body()); body && body->IsObject()) {
        why = std::string(json::find_string(*body, "message"));
      }
      return write(request, status_answer(internal_error("the node agent's console: " + why)));
    }
    const bool wants_protocol =
        std::string_view(request[http::field::sec_websocket_protocol]).find(console_protocol) != std::string_view::npos;
    stream_->set_option(websocket::stream_base::decorator([wants_protocol](websocket::response_type& response) {
      if (wants_protocol) {
        response.set(http::field::sec_websocket_protocol, console_protocol);
      }
    }));
    stream_->accept(request, error);
    if (error) {
      return false;
    }
    context_.log("info", "console open", {{"object", object.namespace_ + "/" + object.name}});
    relay(*stream_, guest);
    context_.log("info", "console closed", {{"object", object.namespace_ + "/" + object.name}});
    return false;
  }

  // Both directions at once on io_, one message in flight each way: a side that does not read
  // stops the other side's reads (backpressure). The first side to end closes the other.
  void relay(WebSocket& user, WebSocket& guest) {
    for (WebSocket* side : {&user, &guest}) {
      side->binary(true);
      side->read_message_max(std::size_t{1} << 20U);
      side->set_option(
          websocket::stream_base::timeout{std::chrono::seconds(30), websocket::stream_base::none(), false});
      set_socket_timeouts(beast::get_lowest_layer(*side).socket().native_handle(), std::chrono::seconds(0));
    }
    struct Pump : std::enable_shared_from_this<Pump> {
      WebSocket& from;
      WebSocket& to;
      std::shared_ptr<bool> done;
      beast::flat_buffer buffer;
      Pump(WebSocket& a, WebSocket& b, std::shared_ptr<bool> d) : from(a), to(b), done(std::move(d)) {}
      void read() {
        from.async_read(buffer, [self = shared_from_this()](beast::error_code error, std::size_t) {
          if (error) {
            self->finish();
            return;
          }
          self->to.binary(!self->from.got_text());
          self->to.async_write(self->buffer.data(), [self](beast::error_code written, std::size_t) {
            if (written) {
              self->finish();
              return;
            }
            self->buffer.consume(self->buffer.size());
            self->read();
          });
        });
      }
      void finish() {
        if (*done) {
          return;
        }
        *done = true;
        // The error_code overloads: a peer that already closed makes shutdown(2) fail (ENOTCONN),
        // and the throwing overload would end the process (a client's clean close did).
        beast::error_code ignored;
        beast::get_lowest_layer(to).socket().shutdown(tcp::socket::shutdown_both, ignored);
        beast::get_lowest_layer(from).socket().shutdown(tcp::socket::shutdown_both, ignored);
      }
    };
    auto done = std::make_shared<bool>(false);
    std::make_shared<Pump>(user, guest, done)->read();
    std::make_shared<Pump>(guest, user, done)->read();
    io_->restart();
    io_->run();
  }

  std::shared_ptr<const Context> shared_;
  const Context& context_;
  std::shared_ptr<asio::io_context> io_;
  std::unique_ptr<WebSocket> stream_;
};

}  // namespace

int run_subresources(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  Result<SubresourcesOptions> parsed = parse_subresources_options(args);
  if (!parsed) {
    err << "vmgate subresources: " << parsed.error().message << "\n";
    return 1;
  }
  SubresourcesOptions options = std::move(parsed.value());
  if (options.help) {
    out << subresources_usage();
    return 0;
  }
  if (options.node_namespace.empty()) {
    const char* pod_namespace = std::getenv("POD_NAMESPACE");
    if (pod_namespace == nullptr || *pod_namespace == '\0') {
      err << "vmgate subresources: --node-namespace is required outside a pod (POD_NAMESPACE is not set)\n";
      return 1;
    }
    options.node_namespace = pod_namespace;
  }
  Result<kube::ClientConfig> api_config =
      kube::kubeconfig_or_in_cluster(options.kubeconfig, options.context, "no Kubernetes API: give --kubeconfig");
  if (!api_config) {
    err << "vmgate subresources: " << api_config.error().message << "\n";
    return 1;
  }
  std::error_code ignored;
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("vmgate-subresources-" + std::to_string(getpid()));
  std::filesystem::create_directories(directory, ignored);
  FrontProxy front_proxy;
  if (!options.requestheader_client_ca.empty()) {
    front_proxy.ca_file = options.requestheader_client_ca;
  } else {
    Result<std::unique_ptr<kube::ApiConnection>> api = kube::ApiConnection::create(*api_config);
    if (!api) {
      err << "vmgate subresources: " << api.error().message << "\n";
      return 1;
    }
    Result<FrontProxy> read = front_proxy_from_cluster(**api, directory);
    if (!read) {
      err << "vmgate subresources: " << read.error().message << "\n";
      return 1;
    }
    front_proxy = std::move(read.value());
  }
  Result<serve::tls::ServerContext> serving = serve::tls::load_server_context(
      {options.tls_cert, options.tls_key, front_proxy.ca_file}, serve::TlsProfile::intermediate);
  if (!serving) {
    err << "vmgate subresources: " << serving.error().message << "\n";
    return 1;
  }
  // The node link's client side: TLS 1.2+, the node agents' CA, our certificate.
  std::shared_ptr<SSL_CTX> node_link(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  SSL_CTX_set_min_proto_version(node_link.get(), TLS1_2_VERSION);
  SSL_CTX_set_verify(node_link.get(), SSL_VERIFY_PEER, nullptr);
  if (SSL_CTX_load_verify_locations(node_link.get(), options.node_link_ca.c_str(), nullptr) != 1 ||
      SSL_CTX_use_certificate_chain_file(node_link.get(), options.node_link_cert.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(node_link.get(), options.node_link_key.c_str(), SSL_FILETYPE_PEM) != 1) {
    err << "vmgate subresources: cannot read the node link's files (" << options.node_link_cert << ", "
        << options.node_link_key << ", " << options.node_link_ca << ")\n";
    return 1;
  }
  auto shared = std::make_shared<Context>();
  shared->options = options;
  shared->api_config = *api_config;
  shared->front_proxy = front_proxy;
  shared->node_link_context = node_link;
  shared->serving = std::make_unique<asio::ssl::context>(
      SSL_CTX_up_ref(serving->context.get()) == 1 ? serving->context.get() : nullptr);
  shared->log_sink = std::make_unique<kube::LogSink>(STDERR_FILENO);
  const Context& context = *shared;

  asio::io_context accept_io;
  beast::error_code error;
  tcp::acceptor acceptor(accept_io);
  tcp::acceptor health(accept_io);
  const auto open = [&error](tcp::acceptor& listener, const serve::ListenAddress& address) {
    const tcp::endpoint endpoint(asio::ip::make_address(address.host, error), address.port);
    if (!error) {
      listener.open(endpoint.protocol(), error);
    }
    if (!error) {
      listener.set_option(asio::socket_base::reuse_address(true), error);
      listener.bind(endpoint, error);
    }
    if (!error) {
      listener.listen(asio::socket_base::max_listen_connections, error);
    }
    return !error;
  };
  if (!open(acceptor, options.listen)) {
    err << "vmgate subresources: cannot listen on " << options.listen.str() << ": " << error.message() << "\n";
    return 1;
  }
  if (!open(health, options.metrics_listen)) {
    err << "vmgate subresources: cannot listen on " << options.metrics_listen.str() << ": " << error.message() << "\n";
    return 1;
  }
  std::atomic<bool> stopping{false};
  kube::StopSignal stop([&] {
    stopping = true;
    // shutdown(2) wakes a thread blocked in accept(2); close(2) would not.
    ::shutdown(acceptor.native_handle(), SHUT_RDWR);
    ::shutdown(health.native_handle(), SHUT_RDWR);
  });
  context.log(
      "info", "serving subresources.kubevirt.io",
      {{"listen",
        acceptor.local_endpoint().address().to_string() + ":" + std::to_string(acceptor.local_endpoint().port())},
       {"health", health.local_endpoint().address().to_string() + ":" + std::to_string(health.local_endpoint().port())},
       {"nodeNamespace", options.node_namespace}});
  std::thread health_thread([&health, &stopping] {
    while (!stopping) {
      beast::error_code accepted;
      tcp::socket socket = health.accept(accepted);
      if (accepted) {
        continue;
      }
      set_socket_timeouts(socket.native_handle(), std::chrono::seconds(5));
      beast::flat_buffer buffer;
      http::request<http::empty_body> request;
      http::read(socket, buffer, request, accepted);
      if (accepted) {
        continue;
      }
      const bool known = request.target() == "/healthz" || request.target() == "/readyz";
      http::response<http::string_body> response(known ? http::status::ok : http::status::not_found, 11);
      response.set(http::field::content_type, "text/plain");
      response.body() = known ? "ok" : "not found";
      response.keep_alive(false);
      response.prepare_payload();
      http::write(socket, response, accepted);
    }
  });
  auto active = std::make_shared<std::atomic<std::size_t>>(0);
  while (!stopping) {
    auto io = std::make_shared<asio::io_context>();
    beast::error_code accepted;
    tcp::socket socket = acceptor.accept(*io, accepted);
    if (accepted) {
      continue;
    }
    if (active->load() >= options.max_connections) {
      socket.close(accepted);
      continue;
    }
    ++*active;
    std::thread([shared, io, socket = std::move(socket), active]() mutable {
      try {
        Connection connection(shared, io, std::move(socket));
        connection.serve();
      } catch (const std::exception& failure) {  // one connection's failure never ends the server
        shared->log("error", "connection failed", {{"error", failure.what()}});
      }
      --*active;
    }).detach();
  }
  health_thread.join();
  context.log("info", "stopping on signal");
  // Requests in flight get a moment; a console still open is cut as a pod stop would cut it.
  for (int waited = 0; waited < 50 && active->load() > 0; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::filesystem::remove_all(directory, ignored);
  return 0;
}

}  // namespace vmgate::subresources
