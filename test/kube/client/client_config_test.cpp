#include "vmgate/kube/client_config.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "support/temporary_directory.hpp"
#include "vmgate/common/base64.hpp"

namespace vmgate::kube {
namespace {

using testing::TemporaryDirectory;
using testing::write_text;

std::string error_of(const Result<ClientConfig>& result) {
  return result ? std::string("(no error)") : result.error().message;
}

TEST(ParseServerUrl, SplitsHostPortAndPath) {
  ClientConfig config;
  ASSERT_TRUE(parse_server_url("https://127.0.0.1:6443", config));
  EXPECT_EQ(config.host, "127.0.0.1");
  EXPECT_EQ(config.port, 6443);
  EXPECT_EQ(config.base_path, "");
  ASSERT_TRUE(parse_server_url("https://api.example.com/k8s/clusters/c-1/", config));
  EXPECT_EQ(config.host, "api.example.com");
  EXPECT_EQ(config.port, 443);
  EXPECT_EQ(config.base_path, "/k8s/clusters/c-1");
  ASSERT_TRUE(parse_server_url("https://[::1]:8443", config));
  EXPECT_EQ(config.host, "::1");
  EXPECT_EQ(config.port, 8443);
}

TEST(ParseServerUrl, RefusesWhatItCannotUse) {
  ClientConfig config;
  for (const auto& [url, expected] : std::map<std::string, std::string>{
           {"http://127.0.0.1:8080", "only https:// API servers are supported"},
           {"https://:6443", "no host"},
           {"https://host:0", "the port must be a number from 1 to 65535"},
           {"https://host:70000", "the port must be a number from 1 to 65535"},
           {"https://host:x", "the port must be a number from 1 to 65535"},
           {"https://host:", "the port must be a number from 1 to 65535"},
           {"https://[::1", "unclosed ["},
           {"https://[zz]:1", "is not an IPv6 address"},
           {"https://host/?a=b", "no query or fragment"},
           {"https://user:pw@host", "credentials in the URL"},
       }) {
    const Status parsed = parse_server_url(url, config);
    ASSERT_FALSE(parsed) << url;
    EXPECT_NE(parsed.error().message.find(expected), std::string::npos) << url << ": " << parsed.error().message;
  }
}

class Kubeconfig : public ::testing::Test {
 protected:
  std::string write(std::string_view name, std::string_view text) {
    const auto path = directory_.path() / name;
    write_text(path, text);
    return path.string();
  }
  TemporaryDirectory directory_;
};

constexpr std::string_view two_contexts = R"(apiVersion: v1
kind: Config
current-context: admin
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: ca.pem
- name: other
  cluster:
    server: https://other.example:443
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: robot
  user:
    tokenFile: token
contexts:
- name: admin
  context: {cluster: local, user: admin, namespace: team-a}
- name: robot
  context: {cluster: other, user: robot}
)";

TEST_F(Kubeconfig, CurrentContextWithRelativeFilesAndInlineData) {
  write("ca.pem", "CA PEM");
  const std::string path = write("config", two_contexts);
  const Result<ClientConfig> config = load_kubeconfig(path, "");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->host, "127.0.0.1");
  EXPECT_EQ(config->port, 6443);
  EXPECT_EQ(config->ca_pem, "CA PEM");  // relative to the kubeconfig's directory
  EXPECT_EQ(config->client_certificate_pem, "CERT");
  EXPECT_EQ(config->client_key_pem, "KEY");
  EXPECT_EQ(config->default_namespace, "team-a");
  EXPECT_FALSE(config->insecure_skip_tls_verify);
  EXPECT_TRUE(config->warnings.empty());
  EXPECT_EQ(config->origin, "kubeconfig " + path + ", context admin");
}

TEST_F(Kubeconfig, ChosenContextTokenFileAndInsecureWarning) {
  write("ca.pem", "CA PEM");
  write("token", "secret\n");
  const std::string path = write("config", two_contexts);
  const Result<ClientConfig> config = load_kubeconfig(path, "robot");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->host, "other.example");
  EXPECT_EQ(config->token_file, (directory_.path() / "token").string());
  EXPECT_TRUE(config->insecure_skip_tls_verify);
  ASSERT_EQ(config->warnings.size(), 1U);
  EXPECT_NE(config->warnings[0].find("NOT verified"), std::string::npos);
}

TEST_F(Kubeconfig, MergedListFirstDefinitionWins) {
  const std::string first = write("first", R"(current-context: b
clusters: [{name: c, cluster: {server: "https://first:1"}}]
contexts: [{name: b, context: {cluster: c}}]
)");
  const std::string second = write("second", R"(current-context: other
clusters: [{name: c, cluster: {server: "https://second:2"}}]
)");
  const Result<ClientConfig> config = load_kubeconfig(first + ":" + second, "");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->host, "first");
}

TEST_F(Kubeconfig, ErrorsNameTheFileAndField) {
  const std::string missing = (directory_.path() / "absent").string();
  EXPECT_EQ(error_of(load_kubeconfig(missing, "")),
            "kubeconfig " + missing + ": cannot read: No such file or directory");
  const std::string bad_yaml = write("bad-yaml", "clusters: [\n");
  EXPECT_NE(error_of(load_kubeconfig(bad_yaml, "")).find("kubeconfig " + bad_yaml + ":"), std::string::npos);

  const auto refused = [this](std::string_view text, std::string_view context = "") {
    return error_of(load_kubeconfig(write("config", text), context));
  };
  const std::string file = (directory_.path() / "config").string();
  EXPECT_EQ(refused("clusters: []\n"), "kubeconfig " + file + ": no current-context; give --context NAME");
  EXPECT_EQ(refused("clusters: []\n", "x"), "kubeconfig " + file + ": no context named \"x\"");
  EXPECT_EQ(refused("contexts: [{name: x, context: {cluster: nope}}]\n", "x"),
            "kubeconfig " + file + ": contexts[0].context.cluster: no cluster named \"nope\"");
  EXPECT_EQ(refused("clusters: {}\n"), "kubeconfig " + file + ": clusters: must be a list, got an object");
  EXPECT_EQ(refused("clusters: [{cluster: {}}]\n"), "kubeconfig " + file + ": clusters[0].name: required");
  EXPECT_EQ(
      refused("current-context: x\nclusters: [{name: c, cluster: {}}]\ncontexts: [{name: x, context: {cluster: c}}]\n"),
      "kubeconfig " + file + ": clusters[0].cluster.server: required");
  EXPECT_EQ(
      refused("current-context: x\nclusters: [{name: c, cluster: {server: 'http://h'}}]\n"
              "contexts: [{name: x, context: {cluster: c}}]\n"),
      "kubeconfig " + file + ": clusters[0].cluster.server: \"http://h\": only https:// API servers are supported");
  EXPECT_EQ(refused("current-context: x\nclusters: [{name: c, cluster: {server: 'https://h', "
                    "certificate-authority-data: '!!'}}]\n"
                    "contexts: [{name: x, context: {cluster: c}}]\n"),
            "kubeconfig " + file + ": clusters[0].cluster.certificate-authority-data: not valid base64");
  EXPECT_EQ(refused("current-context: x\nclusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                    "users: [{name: u, user: {exec: {command: aws}}}]\n"
                    "contexts: [{name: x, context: {cluster: c, user: u}}]\n"),
            "kubeconfig " + file +
                ": users[0].user.exec: not supported by vmgate; use a client certificate or a bearer token (token, "
                "tokenFile)");
  EXPECT_EQ(refused("current-context: x\nclusters: [{name: c, cluster: {server: 'https://h'}}]\n"
                    "users: [{name: u, user: {client-certificate-data: Q0VSVA==}}]\n"
                    "contexts: [{name: x, context: {cluster: c, user: u}}]\n"),
            "kubeconfig " + file + ": users[0].user: a client certificate needs its key, and a key its certificate");
  EXPECT_EQ(
      refused("current-context: x\nclusters: [{name: c, cluster: {server: 'https://h', insecure-skip-tls-verify: "
              "yes-please}}]\n"
              "contexts: [{name: x, context: {cluster: c}}]\n"),
      "kubeconfig " + file + ": clusters[0].cluster.insecure-skip-tls-verify: must be true or false, got a string");
  EXPECT_EQ(
      refused(
          "current-context: x\nclusters: [{name: c, cluster: {server: 'https://h', certificate-authority: nope.pem}}]\n"
          "contexts: [{name: x, context: {cluster: c}}]\n"),
      "kubeconfig " + file + ": clusters[0].cluster.certificate-authority: " +
          (directory_.path() / "nope.pem").string() + ": cannot read: No such file or directory");
}

TEST(InCluster, FromTheServiceAccountFiles) {
  TemporaryDirectory directory;
  InClusterFiles files{(directory.path() / "token").string(), (directory.path() / "ca.crt").string(),
                       (directory.path() / "namespace").string()};
  std::map<std::string, std::string> environment{{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                                 {"KUBERNETES_SERVICE_PORT", "443"}};
  const Getenv getenv = [&environment](const char* name) -> const char* {
    const auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  };
  EXPECT_FALSE(in_cluster(getenv, files));  // no token yet
  write_text(files.token, "token\n");
  write_text(files.ca, "CA");
  write_text(files.namespace_file, "vmgate-system\n");
  EXPECT_TRUE(in_cluster(getenv, files));
  const Result<ClientConfig> config = in_cluster_config(getenv, files);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->server, "https://10.0.0.1:443");
  EXPECT_EQ(config->ca_pem, "CA");
  EXPECT_EQ(config->token_file, files.token);
  EXPECT_EQ(config->default_namespace, "vmgate-system");

  environment["KUBERNETES_SERVICE_HOST"] = "fd00::1";
  const Result<ClientConfig> ipv6 = in_cluster_config(getenv, files);
  ASSERT_TRUE(ipv6) << ipv6.error().message;
  EXPECT_EQ(ipv6->host, "fd00::1");

  environment.erase("KUBERNETES_SERVICE_PORT");
  EXPECT_FALSE(in_cluster(getenv, files));
  EXPECT_EQ(error_of(in_cluster_config(getenv, files)),
            "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
}

// The choice every command makes: a kubeconfig when given, else the pod's service account, else
// the command's own error.
TEST(KubeconfigOrInCluster, PathFirstThenThePodThenTheCommandsError) {
  TemporaryDirectory directory;
  InClusterFiles files{(directory.path() / "token").string(), (directory.path() / "ca.crt").string(),
                       (directory.path() / "namespace").string()};
  std::map<std::string, std::string> environment{{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                                 {"KUBERNETES_SERVICE_PORT", "443"}};
  const Getenv getenv = [&environment](const char* name) -> const char* {
    const auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  };
  EXPECT_EQ(error_of(kubeconfig_or_in_cluster("", "", "give --kubeconfig", getenv, files)), "give --kubeconfig");
  write_text(files.token, "token\n");
  write_text(files.ca, "CA");
  const Result<ClientConfig> pod = kubeconfig_or_in_cluster("", "", "give --kubeconfig", getenv, files);
  ASSERT_TRUE(pod) << pod.error().message;
  EXPECT_EQ(pod->server, "https://10.0.0.1:443");
  // A kubeconfig given wins over the pod, and its errors are its own.
  const std::string missing = (directory.path() / "missing.kubeconfig").string();
  const std::string error = error_of(kubeconfig_or_in_cluster(missing, "", "give --kubeconfig", getenv, files));
  EXPECT_NE(error.find(missing), std::string::npos) << error;
}

}  // namespace
}  // namespace vmgate::kube
