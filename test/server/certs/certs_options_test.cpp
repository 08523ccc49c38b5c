// `vmgate certs` options: the contract's command line, defaults and errors that name the option.
#include "vmgate/server/certs_options.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace vmgate::certs {
namespace {

Result<CertsOptions> parse(std::vector<std::string_view> args) {
  return parse_certs_options(args);
}

const std::vector<std::string_view> required{"--namespace", "vmgate-system", "--service",
                                             "vmgate",      "--secret",      "vmgate-tls"};

std::vector<std::string_view> with(std::vector<std::string_view> more) {
  std::vector<std::string_view> args = required;
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST(CertsOptions, Defaults) {
  Result<CertsOptions> options = parse(required);
  ASSERT_TRUE(options) << options.error().message;
  EXPECT_EQ(options->namespace_name, "vmgate-system");
  EXPECT_EQ(options->service, "vmgate");
  EXPECT_EQ(options->secret, "vmgate-tls");
  EXPECT_EQ(options->cluster_domain, "cluster.local");
  EXPECT_EQ(options->ca_duration, std::chrono::hours(8760));
  EXPECT_EQ(options->cert_duration, std::chrono::hours(2160));
  EXPECT_EQ(options->renew_before, std::chrono::hours(720));
  EXPECT_EQ(options->check_interval, std::chrono::minutes(1));
  EXPECT_FALSE(options->once);
  EXPECT_FALSE(options->force_renew);
  EXPECT_TRUE(options->mutating.empty());
}

TEST(CertsOptions, TheContractsCommandLine) {
  Result<CertsOptions> options = parse(with({"--mutating-webhook-configuration=vmgate",
                                             "--validating-webhook-configuration",
                                             "vmgate",
                                             "--validating-webhook-configuration",
                                             "other",
                                             "--cluster-domain",
                                             "example.org",
                                             "--ca-duration",
                                             "2h",
                                             "--cert-duration",
                                             "90m",
                                             "--renew-before",
                                             "30s",
                                             "--write-dir=/run/vmgate/tls",
                                             "--once",
                                             "--check-interval",
                                             "500ms",
                                             "--force-renew",
                                             "--kubeconfig",
                                             "/k",
                                             "--context",
                                             "c"}));
  ASSERT_TRUE(options) << options.error().message;
  EXPECT_EQ(options->mutating, (std::vector<std::string>{"vmgate"}));
  EXPECT_EQ(options->validating, (std::vector<std::string>{"vmgate", "other"}));
  EXPECT_EQ(options->cluster_domain, "example.org");
  EXPECT_EQ(options->ca_duration, std::chrono::hours(2));
  EXPECT_EQ(options->cert_duration, std::chrono::minutes(90));
  EXPECT_EQ(options->renew_before, std::chrono::seconds(30));
  EXPECT_EQ(options->write_dir, "/run/vmgate/tls");
  EXPECT_TRUE(options->once);
  EXPECT_EQ(options->check_interval, std::chrono::milliseconds(500));
  EXPECT_TRUE(options->force_renew);
  EXPECT_EQ(options->kubeconfig, "/k");
  EXPECT_EQ(options->context, "c");
}

TEST(CertsOptions, ErrorsNameTheOption) {
  const std::vector<std::pair<std::vector<std::string_view>, std::string>> cases{
      {{"--service", "vmgate", "--secret", "s"}, "--namespace is required"},
      {{"--namespace", "ns", "--secret", "s"}, "--service is required"},
      {{"--namespace", "ns", "--service", "vmgate"}, "--secret is required"},
      {with({"--ca-duration", "soon"}), "--ca-duration: "},
      {with({"--cert-duration", "0s"}), "--cert-duration must be longer than 0"},
      {with({"--renew-before", "3000h"}), "--renew-before must be shorter than --cert-duration"},
      {with({"--cert-duration", "9000h"}), "--cert-duration must not be longer than --ca-duration"},
      {with({"--cert-duration", "1h", "--ca-duration", "1h", "--renew-before", "1h"}),
       "--renew-before must be shorter than --cert-duration"},
      {with({"--check-interval", "-1s"}), "--check-interval: "},
      {with({"--service", "x"}), "--service given more than once"},
      {with({"--secret2", "x"}), "unknown option --secret2"},
      {with({"extra"}), "unexpected argument \"extra\" (certs takes only options)"},
      {with({"--write-dir"}), "--write-dir needs a value"},
      {with({"--write-dir="}), "--write-dir must not be empty"},
      {with({"--mutating-webhook-configuration", "Bad_Name"}), "--mutating-webhook-configuration: \"Bad_Name\""},
      {{"--namespace", "NS", "--service", "v", "--secret", "s"}, "--namespace: \"NS\" is not a namespace name"},
      {{"--namespace", "ns", "--service", "a.b", "--secret", "s"}, "--service: \"a.b\" is not a Service name"},
      {with({"--context", "c"}), "--context needs --kubeconfig"},
      {with({"--once=yes"}), "--once takes no value"},
  };
  for (const auto& [args, message] : cases) {
    Result<CertsOptions> options = parse(args);
    ASSERT_FALSE(options) << message;
    EXPECT_EQ(options.error().message.rfind(message, 0), 0U) << options.error().message;
  }
}

TEST(CertsOptions, HelpNeedsNothingElse) {
  Result<CertsOptions> options = parse({"--help"});
  ASSERT_TRUE(options);
  EXPECT_TRUE(options->help);
  const std::string usage = certs_usage();
  for (const char* option :
       {"--namespace", "--service", "--secret", "--mutating-webhook-configuration",
        "--validating-webhook-configuration", "--cluster-domain", "--ca-duration", "--cert-duration", "--renew-before",
        "--write-dir", "--once", "--check-interval", "--force-renew", "--kubeconfig", "--context"}) {
    EXPECT_NE(usage.find(option), std::string::npos) << option;
  }
}

}  // namespace
}  // namespace vmgate::certs
