#include "vmgate/server/serve_options.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace vmgate::serve {
namespace {

Result<ServeOptions> parse(std::vector<std::string_view> args, std::map<std::string, std::string> environment = {}) {
  return parse_serve_options(args, [environment = std::move(environment)](const char* name) -> const char* {
    const auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
  });
}

std::string error_of(std::vector<std::string_view> args) {
  Result<ServeOptions> parsed = parse(std::move(args));
  return parsed.ok() ? "<ok>" : parsed.error().message;
}

TEST(ServeOptions, Defaults) {
  Result<ServeOptions> options = parse({});
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->listen.str(), "0.0.0.0:8443");
  EXPECT_EQ(options->metrics_listen.str(), "0.0.0.0:8080");
  EXPECT_TRUE(options->tls_cert.empty());
  EXPECT_EQ(options->tls_profile, TlsProfile::intermediate);
  EXPECT_EQ(options->max_body_bytes, 8U << 20U);
  EXPECT_GT(options->idle_timeout, std::chrono::seconds{90});  // the apiserver keeps idle connections 90 s
  EXPECT_EQ(options->threads, 0U);
}

TEST(ServeOptions, EverythingSet) {
  Result<ServeOptions> options = parse({"--listen",
                                        "127.0.0.1:9443",
                                        "--metrics-listen=[::1]:9090",
                                        "--tls-cert",
                                        "c.pem",
                                        "--tls-key=k.pem",
                                        "--client-ca",
                                        "ca.pem",
                                        "--tls-profile",
                                        "modern",
                                        "--objects",
                                        "a",
                                        "--objects",
                                        "b",
                                        "--threads",
                                        "4",
                                        "--idle-timeout",
                                        "2m",
                                        "--shutdown-delay",
                                        "0s",
                                        "--grace-period",
                                        "1m30s",
                                        "--max-connections",
                                        "7",
                                        "--access-log",
                                        "false",
                                        "--kubevirt-namespace",
                                        "kv"});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->listen.str(), "127.0.0.1:9443");
  EXPECT_EQ(options->metrics_listen.str(), "[::1]:9090");
  EXPECT_EQ(options->tls_cert, "c.pem");
  EXPECT_EQ(options->tls_key, "k.pem");
  EXPECT_EQ(options->client_ca, "ca.pem");
  EXPECT_EQ(options->tls_profile, TlsProfile::modern);
  EXPECT_EQ(options->objects, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(options->threads, 4U);
  EXPECT_EQ(options->idle_timeout, std::chrono::minutes{2});
  EXPECT_EQ(options->shutdown_delay.count(), 0);
  EXPECT_EQ(options->grace_period, std::chrono::seconds{90});
  EXPECT_EQ(options->max_connections, 7U);
  EXPECT_FALSE(options->access_log);
  EXPECT_EQ(options->kubevirt_namespace, "kv");
}

TEST(ServeOptions, KubeVirtVersion) {
  Result<ServeOptions> defaults = parse({});
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_FALSE(defaults->release.has_value());
  Result<ServeOptions> main = parse({"--kubevirt-version=main"});
  ASSERT_TRUE(main.ok()) << main.error().message;
  EXPECT_EQ(main->release, admission::Release::main);
  EXPECT_EQ(error_of({"--kubevirt-version", "1.9"}),
            "--kubevirt-version: KubeVirt version \"1.9\" is not supported (supported: v1.7, v1.8, main)");
}

// No launcher identity is trusted with VMI status any more (vmgate-node reports it as
// kubevirt-handler): the option is gone, not ignored.
TEST(ServeOptions, NoLauncherServiceAccount) {
  EXPECT_EQ(error_of({"--launcher-service-account", "vm-launcher"}), "unknown option --launcher-service-account");
  EXPECT_EQ(serve_usage().find("--launcher-service-account"), std::string_view::npos);
}

TEST(ServeOptions, BenchmarkHarnessEnvironment) {
  Result<ServeOptions> options = parse({}, {{"PORT", "18443"}, {"TLS_CERT", "/c"}, {"TLS_KEY", "/k"}});
  ASSERT_TRUE(options.ok()) << options.error().message;
  EXPECT_EQ(options->listen.str(), "0.0.0.0:18443");
  EXPECT_EQ(options->tls_cert, "/c");
  EXPECT_EQ(options->tls_key, "/k");
  // Options win over the environment.
  Result<ServeOptions> explicit_options =
      parse({"--listen", "127.0.0.1:1", "--tls-cert", "a", "--tls-key", "b"}, {{"PORT", "2"}, {"TLS_CERT", "/c"}});
  ASSERT_TRUE(explicit_options.ok());
  EXPECT_EQ(explicit_options->listen.str(), "127.0.0.1:1");
  EXPECT_EQ(explicit_options->tls_cert, "a");
  EXPECT_EQ(parse({}, {{"PORT", "http"}}).error().message, "environment PORT=\"http\" is not a port number");
}

TEST(ServeOptions, ErrorsNameTheOption) {
  EXPECT_EQ(error_of({"--lisen", ":1"}), "unknown option --lisen");
  EXPECT_EQ(error_of({"--listen"}), "--listen needs a value");
  EXPECT_EQ(error_of({"--listen", ":1", "--listen", ":2"}), "--listen given more than once");
  EXPECT_EQ(error_of({"--listen", "8443"}), "--listen: \"8443\" is not ADDR:PORT");
  EXPECT_EQ(error_of({"--listen", ":70000"}), "--listen: \":70000\": the port must be a number from 0 to 65535");
  EXPECT_EQ(error_of({"--listen", "::1:80"}), "--listen: \"::1:80\": write an IPv6 address in brackets, as [::1]:8443");
  EXPECT_EQ(error_of({"--listen", "example.com:80"}),
            "--listen: \"example.com:80\": the address must be an IP address, not \"example.com\"");
  EXPECT_EQ(error_of({"--tls-cert", "c"}), "--tls-cert needs --tls-key");
  EXPECT_EQ(error_of({"--tls-key", "k"}), "--tls-key needs --tls-cert");
  EXPECT_EQ(error_of({"--client-ca", "ca"}),
            "--client-ca needs --tls-cert and --tls-key (a generated development certificate is for local use)");
  EXPECT_EQ(error_of({"--tls-profile", "old"}),
            "--tls-profile: \"old\" is not intermediate (TLS 1.2+) or modern (TLS 1.3)");
  EXPECT_EQ(error_of({"--idle-timeout", "10"}),
            "--idle-timeout: missing or unknown unit in duration \"10\" (valid units: ns, us, ms, s, m, h) (e.g. 10s, "
            "500ms, 2m)");
  EXPECT_EQ(error_of({"--header-timeout", "0s"}), "--header-timeout must be longer than 0");
  EXPECT_EQ(error_of({"--threads", "x"}), "--threads: \"x\" is not a number from 0 (one per CPU) to 1024");
  EXPECT_EQ(error_of({"--max-connections", "0"}), "--max-connections: \"0\" is not a positive number");
  EXPECT_EQ(error_of({"--access-log", "yes"}), "--access-log: \"yes\" is not true or false");
  EXPECT_EQ(error_of({"--help=1"}), "--help takes no value");
  EXPECT_EQ(error_of({"extra"}), "unexpected argument \"extra\" (serve takes only options)");
  EXPECT_EQ(error_of({"--kubeconfig", "k", "--objects", "d"}),
            "--kubeconfig and --objects are two sources of the cluster: give one");
  EXPECT_EQ(error_of({"--context", "c"}), "--context needs --kubeconfig");
  EXPECT_EQ(error_of({"--kubeconfig="}), "--kubeconfig must not be empty");
}

TEST(ServeOptions, MaxBodyMemory) {
  EXPECT_EQ(parse({}, {})->max_body_memory, std::size_t{512} << 20U);
  EXPECT_EQ(parse({"--max-body-memory", "64Mi"}, {})->max_body_memory, std::size_t{64} << 20U);
  EXPECT_EQ(parse({"--max-body-memory=2Gi"}, {})->max_body_memory, std::size_t{2} << 30U);
  EXPECT_EQ(parse({"--max-body-memory", "1000"}, {})->max_body_memory, 1000U);
  for (const char* bad : {"0", "1G", "Mi", "-1", "99999999999999999999Gi"}) {
    EXPECT_EQ(error_of({"--max-body-memory", bad}),
              "--max-body-memory: \"" + std::string(bad) + "\" is not a positive size (bytes, or with Ki, Mi or Gi)");
  }
}

TEST(ServeOptions, SingleDashArgumentsAndOperandsAreNotOptions) {
  EXPECT_EQ(error_of({"-h"}), "unexpected argument \"-h\" (serve takes only options)");
  EXPECT_EQ(error_of({"-"}), "unexpected argument \"-\" (serve takes only options)");
  EXPECT_EQ(error_of({"--", "--listen"}), "unexpected argument \"--listen\" (serve takes only options)");
}

TEST(ServeOptions, HelpNeedsNothingElse) {
  Result<ServeOptions> options = parse({"--help"});
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->help);
  EXPECT_NE(serve_usage().find("--tls-cert FILE"), std::string_view::npos);
}

}  // namespace
}  // namespace vmgate::serve
