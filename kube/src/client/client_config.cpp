// kubeconfig and in-cluster configuration (client_config.hpp).
#include "vmgate/kube/client_config.hpp"

#include <arpa/inet.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <tuple>

#include "vmgate/common/base64.hpp"
#include "vmgate/common/json_field.hpp"
#include "vmgate/kube/yaml_json.hpp"

namespace vmgate::kube {

namespace {

Result<std::string> read_whole_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return Error{path + ": cannot read: " + std::strerror(errno)};
  }
  std::ostringstream content;
  content << file.rdbuf();
  if (file.bad()) {
    return Error{path + ": cannot read"};
  }
  return content.str();
}

// One named entry of clusters/users/contexts, with the file that defined it.
struct Named {
  const json::Value* body = nullptr;  // the "cluster"/"user"/"context" member
  std::string file;
  std::string field;  // "users[2].user", for messages
};

struct ParsedFile {
  std::string path;
  std::vector<YamlDocument> documents;  // keeps the values alive
};

struct Merged {
  std::vector<ParsedFile> files;
  std::map<std::string, Named, std::less<>> clusters;
  std::map<std::string, Named, std::less<>> users;
  std::map<std::string, Named, std::less<>> contexts;
  std::string current_context;
};

std::string where(const std::string& file, std::string_view field) {
  return "kubeconfig " + file + ": " + std::string(field);
}

// A string member: absent or null gives "", another type an error naming the field.
Result<std::string> string_member(const json::Value& object, std::string_view key, const std::string& file,
                                  const std::string& field) {
  json::Field<std::string_view> value = json::read_string(object, key);
  if (!value) {
    return Error{where(file, field + "." + std::string(key)) + ": must be a string, got " +
                 std::string(value.error().found)};
  }
  return std::string(value->value_or(""));
}

Status collect(const json::Value& root, std::string_view list, std::string_view body_key, const std::string& file,
               std::map<std::string, Named, std::less<>>& into) {
  json::Field<const json::Value*> entries = json::read_array(root, list);
  if (!entries) {
    return Error{where(file, list) + ": must be a list, got " + std::string(entries.error().found)};
  }
  if (!entries->has_value()) {
    return Ok{};
  }
  std::size_t index = 0;
  for (const json::Value& entry : (**entries)->GetArray()) {
    const std::string field = std::string(list) + "[" + std::to_string(index++) + "]";
    if (!entry.IsObject()) {
      return Error{where(file, field) + ": must be an object, got " + std::string(json::type_name(entry))};
    }
    Result<std::string> name = string_member(entry, "name", file, field);
    if (!name) {
      return name.error();
    }
    if (name->empty()) {
      return Error{where(file, field + ".name") + ": required"};
    }
    json::Field<const json::Value*> body = json::read_object(entry, body_key);
    if (!body) {
      return Error{where(file, field + "." + std::string(body_key)) + ": must be an object, got " +
                   std::string(body.error().found)};
    }
    static const json::Value empty_object(rapidjson::kObjectType);
    // The first file that defines a name wins (kubectl's KUBECONFIG merge).
    into.try_emplace(*name, Named{body->value_or(&empty_object), file, field + "." + std::string(body_key)});
  }
  return Ok{};
}

Status merge_file(const std::string& path, Merged& merged) {
  Result<std::string> text = read_whole_file(path);
  if (!text) {
    return Error{"kubeconfig " + text.error().message};
  }
  Result<std::vector<YamlDocument>, YamlError> documents = yaml_to_json(*text);
  if (!documents) {
    return Error{"kubeconfig " + path + ":" + std::to_string(documents.error().line) + ":" +
                 std::to_string(documents.error().column) + ": " + documents.error().message};
  }
  merged.files.push_back(ParsedFile{path, std::move(documents.value())});
  const std::vector<YamlDocument>& parsed = merged.files.back().documents;
  if (parsed.empty() || parsed.front().document->IsNull()) {
    return Ok{};  // an empty file, as kubectl allows
  }
  if (parsed.size() > 1) {
    return Error{"kubeconfig " + path + ": holds " + std::to_string(parsed.size()) + " YAML documents, expected one"};
  }
  const json::Value& root = *parsed.front().document;
  if (!root.IsObject()) {
    return Error{"kubeconfig " + path + ": must be a mapping, got " + std::string(json::type_name(root))};
  }
  for (const auto& [list, body, into] :
       {std::tuple{"clusters", "cluster", &merged.clusters}, std::tuple{"users", "user", &merged.users},
        std::tuple{"contexts", "context", &merged.contexts}}) {
    if (Status collected = collect(root, list, body, path, *into); !collected) {
      return collected;
    }
  }
  Result<std::string> current = string_member(root, "current-context", path, "");
  if (!current) {
    return current.error();
  }
  if (merged.current_context.empty()) {
    merged.current_context = *current;
  }
  return Ok{};
}

std::string resolve(const std::string& reference, const std::string& kubeconfig) {
  const std::filesystem::path path(reference);
  if (path.is_absolute()) {
    return reference;
  }
  return (std::filesystem::path(kubeconfig).parent_path() / path).lexically_normal().string();
}

// "<x>-data" (base64) or "<x>" (a file): the PEM text, or "" when neither is set.
Result<std::string> pem_member(const Named& named, std::string_view file_key) {
  const std::string data_key = std::string(file_key) + "-data";
  Result<std::string> data = string_member(*named.body, data_key, named.file, named.field);
  if (!data) {
    return data.error();
  }
  if (!data->empty()) {
    std::optional<std::string> decoded = common::base64_decode(*data);
    if (!decoded) {
      return Error{where(named.file, named.field + "." + data_key) + ": not valid base64"};
    }
    return std::move(*decoded);
  }
  Result<std::string> file = string_member(*named.body, file_key, named.file, named.field);
  if (!file) {
    return file.error();
  }
  if (file->empty()) {
    return std::string();
  }
  Result<std::string> content = read_whole_file(resolve(*file, named.file));
  if (!content) {
    return Error{where(named.file, named.field + "." + std::string(file_key)) + ": " + content.error().message};
  }
  return content;
}

Status read_cluster(const Named& cluster, ClientConfig& config) {
  Result<std::string> server = string_member(*cluster.body, "server", cluster.file, cluster.field);
  if (!server) {
    return server.error();
  }
  if (server->empty()) {
    return Error{where(cluster.file, cluster.field + ".server") + ": required"};
  }
  if (Status parsed = parse_server_url(*server, config); !parsed) {
    return Error{where(cluster.file, cluster.field + ".server") + ": " + parsed.error().message};
  }
  Result<std::string> ca = pem_member(cluster, "certificate-authority");
  if (!ca) {
    return ca.error();
  }
  config.ca_pem = std::move(*ca);
  Result<std::string> server_name = string_member(*cluster.body, "tls-server-name", cluster.file, cluster.field);
  if (!server_name) {
    return server_name.error();
  }
  config.tls_server_name = std::move(*server_name);
  json::Field<bool> insecure = json::read_bool(*cluster.body, "insecure-skip-tls-verify");
  if (!insecure) {
    return Error{where(cluster.file, cluster.field + ".insecure-skip-tls-verify") + ": must be true or false, got " +
                 std::string(insecure.error().found)};
  }
  config.insecure_skip_tls_verify = insecure->value_or(false);
  if (config.insecure_skip_tls_verify) {
    if (!config.ca_pem.empty()) {
      // client-go refuses this combination too.
      return Error{where(cluster.file, cluster.field) +
                   ": insecure-skip-tls-verify and a certificate authority are mutually exclusive"};
    }
    config.warnings.push_back(where(cluster.file, cluster.field + ".insecure-skip-tls-verify") +
                              ": true: the API server's certificate is NOT verified");
  }
  if (json::has(*cluster.body, "proxy-url")) {
    return Error{where(cluster.file, cluster.field + ".proxy-url") + ": proxies are not supported"};
  }
  return Ok{};
}

Status read_user(const Named& user, ClientConfig& config) {
  for (std::string_view unsupported : {"exec", "auth-provider", "username", "password", "as", "as-groups"}) {
    if (json::has(*user.body, unsupported)) {
      return Error{where(user.file, user.field + "." + std::string(unsupported)) +
                   ": not supported by vmgate; use a client certificate or a bearer token (token, tokenFile)"};
    }
  }
  Result<std::string> certificate = pem_member(user, "client-certificate");
  if (!certificate) {
    return certificate.error();
  }
  Result<std::string> key = pem_member(user, "client-key");
  if (!key) {
    return key.error();
  }
  if (certificate->empty() != key->empty()) {
    return Error{where(user.file, user.field) + ": a client certificate needs its key, and a key its certificate"};
  }
  config.client_certificate_pem = std::move(*certificate);
  config.client_key_pem = std::move(*key);
  Result<std::string> token = string_member(*user.body, "token", user.file, user.field);
  if (!token) {
    return token.error();
  }
  config.bearer_token = std::move(*token);
  Result<std::string> token_file = string_member(*user.body, "tokenFile", user.file, user.field);
  if (!token_file) {
    return token_file.error();
  }
  if (!token_file->empty() && config.bearer_token.empty()) {
    config.token_file = resolve(*token_file, user.file);
    if (Result<std::string> readable = read_whole_file(config.token_file); !readable) {
      return Error{where(user.file, user.field + ".tokenFile") + ": " + readable.error().message};
    }
  }
  return Ok{};
}

std::vector<std::string> split_paths(std::string_view list) {
  std::vector<std::string> paths;
  while (!list.empty()) {
    const std::size_t colon = list.find(':');
    const std::string_view path = list.substr(0, colon);
    if (!path.empty()) {
      paths.emplace_back(path);
    }
    if (colon == std::string_view::npos) {
      break;
    }
    list.remove_prefix(colon + 1);
  }
  return paths;
}

}  // namespace

Status parse_server_url(std::string_view url, ClientConfig& config) {
  constexpr std::string_view scheme = "https://";
  if (url.substr(0, scheme.size()) != scheme) {
    return Error{"\"" + std::string(url) + "\": only https:// API servers are supported"};
  }
  std::string_view rest = url.substr(scheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return Error{"\"" + std::string(url) + "\": a server URL has no query or fragment"};
  }
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  while (!path.empty() && path.back() == '/') {
    path.remove_suffix(1);
  }
  if (authority.find('@') != std::string_view::npos) {
    return Error{"\"" + std::string(url) + "\": credentials in the URL are not supported"};
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Error{"\"" + std::string(url) + "\": unclosed [ in the host"};
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return Error{"\"" + std::string(url) + "\": unexpected text after the IPv6 address"};
      }
      port = after.substr(1);
    }
    in6_addr address{};
    if (::inet_pton(AF_INET6, std::string(host).c_str(), &address) != 1) {
      return Error{"\"" + std::string(url) + "\": \"" + std::string(host) + "\" is not an IPv6 address"};
    }
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) {
    return Error{"\"" + std::string(url) + "\": no host"};
  }
  std::uint16_t number = 443;
  if (!port.empty() || authority.back() == ':') {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (error != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535) {
      return Error{"\"" + std::string(url) + "\": the port must be a number from 1 to 65535"};
    }
    number = static_cast<std::uint16_t>(value);
  }
  config.server = std::string(url);
  config.host = std::string(host);
  config.port = number;
  config.base_path = std::string(path);
  return Ok{};
}

Result<ClientConfig> load_kubeconfig(std::string_view path, std::string_view context) {
  const std::vector<std::string> paths = split_paths(path);
  if (paths.empty()) {
    return Error{"kubeconfig: no file given"};
  }
  Merged merged;
  for (const std::string& file : paths) {
    if (Status read = merge_file(file, merged); !read) {
      return read.error();
    }
  }
  const std::string files = path.find(':') == std::string_view::npos ? paths.front() : std::string(path);
  std::string chosen(context);
  if (chosen.empty()) {
    chosen = merged.current_context;
    if (chosen.empty()) {
      return Error{"kubeconfig " + files + ": no current-context; give --context NAME"};
    }
  }
  const auto found = merged.contexts.find(chosen);
  if (found == merged.contexts.end()) {
    return Error{"kubeconfig " + files + ": no context named \"" + chosen + "\""};
  }
  const Named& named_context = found->second;
  ClientConfig config;
  Result<std::string> cluster_name =
      string_member(*named_context.body, "cluster", named_context.file, named_context.field);
  if (!cluster_name) {
    return cluster_name.error();
  }
  Result<std::string> user_name = string_member(*named_context.body, "user", named_context.file, named_context.field);
  if (!user_name) {
    return user_name.error();
  }
  Result<std::string> namespace_name =
      string_member(*named_context.body, "namespace", named_context.file, named_context.field);
  if (!namespace_name) {
    return namespace_name.error();
  }
  config.default_namespace = std::move(*namespace_name);
  const auto cluster = merged.clusters.find(*cluster_name);
  if (cluster == merged.clusters.end()) {
    return Error{where(named_context.file, named_context.field + ".cluster") + ": no cluster named \"" + *cluster_name +
                 "\""};
  }
  if (Status read = read_cluster(cluster->second, config); !read) {
    return read.error();
  }
  if (!user_name->empty()) {
    const auto user = merged.users.find(*user_name);
    if (user == merged.users.end()) {
      return Error{where(named_context.file, named_context.field + ".user") + ": no user named \"" + *user_name + "\""};
    }
    if (Status read = read_user(user->second, config); !read) {
      return read.error();
    }
  }
  config.origin = "kubeconfig " + files + ", context " + chosen;
  return config;
}

bool in_cluster(const Getenv& getenv, const InClusterFiles& files) {
  const char* host = getenv("KUBERNETES_SERVICE_HOST");
  const char* port = getenv("KUBERNETES_SERVICE_PORT");
  std::error_code error;
  return host != nullptr && *host != '\0' && port != nullptr && *port != '\0' &&
         std::filesystem::exists(files.token, error);
}

Result<ClientConfig> in_cluster_config(const Getenv& getenv, const InClusterFiles& files) {
  const char* host = getenv("KUBERNETES_SERVICE_HOST");
  const char* port = getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || *host == '\0' || port == nullptr || *port == '\0') {
    return Error{"in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set"};
  }
  const std::string host_text(host);
  const bool ipv6 = host_text.find(':') != std::string::npos;
  ClientConfig config;
  const std::string url = "https://" + (ipv6 ? "[" + host_text + "]" : host_text) + ":" + port;
  if (Status parsed = parse_server_url(url, config); !parsed) {
    return Error{"in-cluster: KUBERNETES_SERVICE_HOST/PORT: " + parsed.error().message};
  }
  Result<std::string> ca = read_whole_file(files.ca);
  if (!ca) {
    return Error{"in-cluster: service account CA " + ca.error().message};
  }
  config.ca_pem = std::move(*ca);
  if (Result<std::string> token = read_whole_file(files.token); !token) {
    return Error{"in-cluster: service account token " + token.error().message};
  }
  config.token_file = files.token;
  if (Result<std::string> namespace_name = read_whole_file(files.namespace_file); namespace_name) {
    config.default_namespace = *namespace_name;
    while (!config.default_namespace.empty() &&
           std::isspace(static_cast<unsigned char>(config.default_namespace.back()))) {
      config.default_namespace.pop_back();
    }
  }
  config.origin = "in-cluster service account";
  return config;
}

Result<ClientConfig> kubeconfig_or_in_cluster(std::string_view path, std::string_view context, std::string_view missing,
                                              const Getenv& getenv, const InClusterFiles& files) {
  if (!path.empty()) {
    return load_kubeconfig(path, context);
  }
  if (!in_cluster(getenv, files)) {
    return Error{std::string(missing)};
  }
  return in_cluster_config(getenv, files);
}

}  // namespace vmgate::kube
