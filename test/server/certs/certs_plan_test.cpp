// The rotation planner on every transition: a simulated executor applies each step to an
// in-memory Secret and webhook configurations, and the safety invariant is checked after every
// step: every configuration trusts the CA of the serving pair in the Secret (once there is one),
// and the old CA stays until the probe says every endpoint serves the new certificate.
#include "vmgate/server/certs_plan.hpp"

#include <gtest/gtest.h>

#include "server/certs/certs_test_support.hpp"

namespace vmgate::certs {
namespace {

using testing::issue_pair;
using testing::unix_now;

const std::vector<std::string> service_names{"vmgate", "vmgate.vmgate-system", "vmgate.vmgate-system.svc",
                                             "vmgate.vmgate-system.svc.cluster.local"};

Webhook url_webhook(std::string name, std::string url) {
  Webhook webhook;
  webhook.name = std::move(name);
  webhook.url = std::move(url);
  return webhook;
}

struct World {
  std::int64_t now = unix_now();
  Settings settings;
  SecretState secret;
  std::vector<WebhookConfiguration> configurations;
  bool endpoints_serve_current = false;  // what the simulated probe answers
  std::vector<std::string> events;

  World() {
    settings.service = "vmgate";
    settings.namespace_name = "vmgate-system";
    secret.exists = true;
    configurations.push_back({ConfigurationKind::mutating,
                              "vmgate",
                              {url_webhook("m1", "https://127.0.0.1:8443/m1"), url_webhook("m2", "")}});
    configurations.back().webhooks[1].service_namespace = "vmgate-system";
    configurations.back().webhooks[1].service_name = "vmgate";
    configurations.push_back(
        {ConfigurationKind::validating, "vmgate", {url_webhook("v1", "https://127.0.0.1:8443/v1")}});
  }

  [[nodiscard]] SubjectNames names() const { return desired_names(settings, configurations); }

  [[nodiscard]] PlanInput input() const {
    PlanInput in;
    in.now = now;
    in.settings = settings;
    in.secret = secret;
    in.configurations = configurations;
    return in;
  }

  // One step as the executor does it: issue and probe answered, writes applied.
  Step step() {
    PlanInput in = input();
    Step next = plan(in);
    if (next.action == Action::issue) {
      in.fresh = issue_pair(next.names.dns, next.names.ip);
      next = plan(in);
    }
    if (next.action == Action::probe) {
      in.probe = std::vector<ProbeResult>{{"127.0.0.1:8443", endpoints_serve_current, "x"}};
      next = plan(in);
    }
    apply(next);
    events.push_back(next.event);
    return next;
  }

  void apply(const Step& step) {
    if (step.action == Action::write_secret) {
      secret.exists = true;
      secret.data = step.data;
      for (const auto& [name, value] : step.annotations) {
        if (value.empty()) {
          secret.annotations.erase(name);
        } else {
          secret.annotations[name] = value;
        }
      }
      if (step.starts_rotation) {
        settings.force_renew = false;
      }
    } else if (step.action == Action::patch_webhooks) {
      for (WebhookConfiguration& configuration : configurations) {
        if (std::find(step.outdated.begin(), step.outdated.end(), configuration_id(configuration)) !=
            step.outdated.end()) {
          for (Webhook& webhook : configuration.webhooks) {
            webhook.ca_bundle = step.bundle;
          }
        }
      }
    }
  }

  [[nodiscard]] std::string data(const char* name) const {
    const auto found = secret.data.find(name);
    return found == secret.data.end() ? std::string() : found->second;
  }

  // Steps until steady or wait (at most 20).
  Step settle() {
    for (int i = 0; i < 20; ++i) {
      const Step done = step();
      check_invariant();
      if (done.action == Action::steady || done.action == Action::wait) {
        return done;
      }
    }
    ADD_FAILURE() << "no steady state after 20 steps";
    return {};
  }

  // Once a configuration trusts anything, it trusts the CA of the serving pair in the Secret.
  void check_invariant() const {
    const std::string ca = data(key::ca_crt);
    for (const WebhookConfiguration& configuration : configurations) {
      for (const Webhook& webhook : configuration.webhooks) {
        if (!webhook.ca_bundle.empty() && !ca.empty() && ca.find("BEGIN") != std::string::npos &&
            secret.data.count(key::next_ca_crt) == 0) {
          EXPECT_NE(webhook.ca_bundle.find(ca), std::string::npos)
              << configuration_id(configuration) << "/" << webhook.name << " does not trust ca.crt";
        }
      }
    }
  }

  [[nodiscard]] std::size_t bundle_size(const std::string& bundle) const {
    Result<std::vector<Certificate>> parsed = parse_certificates(bundle, "bundle");
    return parsed ? parsed->size() : 0;
  }

  // A steady world with one CA everywhere.
  void make_steady() {
    endpoints_serve_current = true;
    ASSERT_EQ(settle().action, Action::steady);
    events.clear();
  }
};

TEST(CertsPlan, DesiredNamesAreTheServiceNamesAndTheUrlHosts) {
  World world;
  world.configurations[1].webhooks[0].url = "https://webhook.example.com:9443/v";
  world.configurations[0].webhooks.push_back(url_webhook("m3", "https://[::1]:8443/x"));
  const SubjectNames names = world.names();
  std::vector<std::string> dns = service_names;
  dns.emplace_back("webhook.example.com");
  EXPECT_EQ(names.dns, dns);
  EXPECT_EQ(names.ip, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(url_host("https://user@host:1/x"), "host");
  EXPECT_EQ(url_host("http://host/x"), "");
}

TEST(CertsPlan, AnEmptySecretIsFilledDirectlyWhenNothingIsTrustedYet) {
  World world;
  const Step first = world.step();
  EXPECT_EQ(first.action, Action::write_secret);
  EXPECT_EQ(first.event, "certificate issued");
  EXPECT_EQ(first.reason, "the Secret holds no serving pair");
  EXPECT_FALSE(first.create);
  EXPECT_EQ(world.data(key::ca_bundle), world.data(key::ca_crt));
  EXPECT_EQ(world.secret.data.count(key::next_ca_crt), 0U);
  const Step second = world.step();
  EXPECT_EQ(second.action, Action::patch_webhooks);
  EXPECT_EQ(second.outdated, (std::vector<std::string>{"mutating/vmgate", "validating/vmgate"}));
  EXPECT_EQ(second.bundle, world.data(key::ca_crt));
  EXPECT_EQ(world.step().action, Action::steady);

  Result<Certificate> leaf = parse_certificate(world.data(key::tls_crt), "tls.crt");
  ASSERT_TRUE(leaf);
  std::vector<std::string> dns = service_names;
  EXPECT_EQ(leaf->dns_names, dns);
  EXPECT_EQ(leaf->ip_addresses, (std::vector<std::string>{"127.0.0.1"}));
}

TEST(CertsPlan, AMissingSecretIsCreated) {
  World world;
  world.secret.exists = false;
  const Step step = world.step();
  EXPECT_EQ(step.action, Action::write_secret);
  EXPECT_TRUE(step.create);
  EXPECT_EQ(step.reason, "the Secret does not exist");
}

TEST(CertsPlan, SteadyWhenEverythingIsValid) {
  World world;
  world.make_steady();
  const Step step = plan(world.input());
  EXPECT_EQ(step.action, Action::steady);
  EXPECT_TRUE(step.problems.empty());
  EXPECT_NE(step.reason.find("tls.crt valid until"), std::string::npos);
}

TEST(CertsPlan, AForcedRenewalOverlapsTheCasAndDropsTheOldOnlyAfterTheProbe) {
  World world;
  world.make_steady();
  const std::string ca1 = world.data(key::ca_crt);
  const std::string leaf1 = world.data(key::tls_crt);
  world.settings.force_renew = true;
  world.endpoints_serve_current = false;

  // start: the new pair waits in next-*, the bundle holds both, the serving pair is unchanged.
  const Step start = world.step();
  ASSERT_EQ(start.action, Action::write_secret);
  EXPECT_EQ(start.event, "rotation started");
  EXPECT_EQ(start.reason, "--force-renew");
  EXPECT_TRUE(start.starts_rotation);
  EXPECT_EQ(world.data(key::ca_crt), ca1);
  EXPECT_EQ(world.data(key::tls_crt), leaf1);
  const std::string ca2 = world.data(key::next_ca_crt);
  ASSERT_FALSE(ca2.empty());
  EXPECT_EQ(world.data(key::ca_bundle), ca1 + ca2);
  EXPECT_EQ(world.secret.annotations[annotation::phase], "publishing");

  // publish: both configurations get {CA1, CA2}.
  const Step publish = world.step();
  ASSERT_EQ(publish.action, Action::patch_webhooks);
  EXPECT_EQ(publish.bundle, ca1 + ca2);
  EXPECT_EQ(publish.outdated.size(), 2U);
  EXPECT_TRUE(publish.settle);

  // switch: only now the serving pair becomes CA2's.
  const Step flip = world.step();
  ASSERT_EQ(flip.action, Action::write_secret);
  EXPECT_EQ(flip.event, "serving pair switched");
  EXPECT_EQ(world.data(key::ca_crt), ca2);
  EXPECT_EQ(world.secret.data.count(key::next_ca_crt), 0U);
  EXPECT_EQ(world.data(key::ca_bundle), ca1 + ca2);
  EXPECT_EQ(world.secret.annotations[annotation::phase], "retiring");

  // retire: the probe is asked for against CA2 alone; while an endpoint lags, wait.
  const Step ask = plan(world.input());
  ASSERT_EQ(ask.action, Action::probe);
  EXPECT_EQ(ask.probe_ca, ca2);
  const Step lagging = world.step();
  ASSERT_EQ(lagging.action, Action::wait);
  EXPECT_NE(lagging.reason.find("127.0.0.1:8443"), std::string::npos);
  EXPECT_EQ(world.configurations[0].webhooks[0].ca_bundle, ca1 + ca2);

  world.endpoints_serve_current = true;
  const Step retire = world.step();
  ASSERT_EQ(retire.action, Action::write_secret);
  EXPECT_EQ(retire.event, "old CA dropped");
  EXPECT_GE(retire.rotation_seconds, 0);
  EXPECT_EQ(world.data(key::ca_bundle), ca2);
  EXPECT_EQ(world.secret.annotations.count(annotation::phase), 0U);
  const Step last = world.step();
  ASSERT_EQ(last.action, Action::patch_webhooks);
  EXPECT_EQ(last.bundle, ca2);
  EXPECT_FALSE(last.settle);
  EXPECT_EQ(world.step().action, Action::steady);
}

TEST(CertsPlan, NoSwitchWhileOneConfigurationLacksTheNewCa) {
  World world;
  world.make_steady();
  world.settings.force_renew = true;
  world.step();  // start
  const std::string both = world.data(key::ca_bundle);
  // Only the mutating configuration got it (the validating PATCH was lost).
  for (Webhook& webhook : world.configurations[0].webhooks) {
    webhook.ca_bundle = both;
  }
  const Step step = plan(world.input());
  ASSERT_EQ(step.action, Action::patch_webhooks);
  EXPECT_EQ(step.outdated, (std::vector<std::string>{"validating/vmgate"}));
  // One webhook of a configuration lagging is enough to hold the switch.
  world.apply(step);
  world.configurations[0].webhooks[1].ca_bundle = "";
  EXPECT_EQ(plan(world.input()).outdated, (std::vector<std::string>{"mutating/vmgate"}));
}

TEST(CertsPlan, NoEndpointFoundWaits) {
  World world;
  world.make_steady();
  world.settings.force_renew = true;
  world.step();
  world.step();
  world.step();  // switched
  PlanInput in = world.input();
  in.probe = std::vector<ProbeResult>{};
  const Step step = plan(in);
  EXPECT_EQ(step.action, Action::wait);
  EXPECT_EQ(step.reason, "no serving endpoint found to probe");
}

TEST(CertsPlan, RenewalIsDueWithinRenewBefore) {
  World world;
  world.make_steady();
  Result<Certificate> leaf = parse_certificate(world.data(key::tls_crt), "tls.crt");
  ASSERT_TRUE(leaf);
  world.now = leaf->not_after - world.settings.renew_before - 10;
  EXPECT_EQ(plan(world.input()).action, Action::steady);
  world.now = leaf->not_after - world.settings.renew_before + 10;
  const Step step = plan(world.input());
  EXPECT_EQ(step.action, Action::issue);
  EXPECT_NE(step.reason.find("tls.crt expires at"), std::string::npos) << step.reason;
}

TEST(CertsPlan, ACaCloseToItsEndIsRenewed) {
  World world;
  // A leaf never outlives its CA, so a CA within --renew-before has its leaf within it too:
  // both are named.
  const FreshPair pair = issue_pair(world.names().dns, world.names().ip, 30 * 86400, 20 * 86400);
  world.secret.data = {{key::ca_crt, pair.ca_crt},
                       {key::ca_key, pair.ca_key},
                       {key::tls_crt, pair.tls_crt},
                       {key::tls_key, pair.tls_key},
                       {key::ca_bundle, pair.ca_crt}};
  world.settings.renew_before = 35 * 86400;
  const Step step = plan(world.input());
  ASSERT_EQ(step.action, Action::issue);
  EXPECT_NE(step.reason.find("ca.crt expires at"), std::string::npos) << step.reason;
  EXPECT_NE(step.reason.find("tls.crt expires at"), std::string::npos) << step.reason;
}

TEST(CertsPlan, ChangedNamesAreRenewed) {
  World world;
  world.make_steady();
  world.settings.cluster_domain = "example.org";
  const Step step = plan(world.input());
  ASSERT_EQ(step.action, Action::issue);
  EXPECT_NE(step.reason.find("subjectAltNames differ"), std::string::npos);
  EXPECT_NE(step.reason.find("vmgate.vmgate-system.svc.example.org"), std::string::npos);
}

// Hand edits: each named, each repaired by a fresh pair with the configurations' CA kept.
struct Edit {
  const char* name;
  void (*apply)(World&);
  const char* problem;
};

class CertsPlanRepair : public ::testing::TestWithParam<Edit> {};

TEST_P(CertsPlanRepair, IsNamedAndRepairedWithAnOverlap) {
  World world;
  world.make_steady();
  const std::string ca1 = world.data(key::ca_crt);
  GetParam().apply(world);
  const Step first = plan(world.input());
  ASSERT_EQ(first.action, Action::issue);
  bool named = false;
  for (const std::string& problem : first.problems) {
    named = named || problem.find(GetParam().problem) != std::string::npos;
  }
  EXPECT_TRUE(named) << "problems: " << ::testing::PrintToString(first.problems);
  EXPECT_NE(first.reason.find(GetParam().problem), std::string::npos) << first.reason;
  // The configurations still trust CA1, which the endpoints serve: it stays in the bundle.
  world.endpoints_serve_current = false;
  const Step start = world.step();
  ASSERT_EQ(start.action, Action::write_secret);
  EXPECT_EQ(start.event, "rotation started");
  EXPECT_EQ(world.data(key::ca_bundle).find(ca1), 0U);
  // CA1 and the new CA; and a valid ca.crt whose leaf is unusable (it may have signed an earlier
  // leaf still served) until the probe.
  EXPECT_GE(world.bundle_size(world.data(key::ca_bundle)), 2U);
  EXPECT_EQ(world.data(key::ca_bundle).substr(world.data(key::ca_bundle).size() - world.data(key::next_ca_crt).size()),
            world.data(key::next_ca_crt));
  EXPECT_EQ(world.settle().action, Action::wait);  // switched, waiting for the endpoints
  world.endpoints_serve_current = true;
  EXPECT_EQ(world.settle().action, Action::steady);
  EXPECT_EQ(world.data(key::ca_bundle), world.data(key::ca_crt));
  EXPECT_NE(world.data(key::ca_crt), ca1);
}

INSTANTIATE_TEST_SUITE_P(
    HandEdits, CertsPlanRepair,
    ::testing::Values(Edit{"BadPem", [](World& w) { w.secret.data[key::tls_crt] = "nonsense"; }, "tls.crt is not PEM"},
                      Edit{"BadCaPem",
                           [](World& w) {
                             w.secret.data[key::ca_crt] =
                                 "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
                           },
                           "ca.crt: PEM block 1 of 1 is not a readable certificate"},
                      Edit{"KeyOfAnotherCertificate",
                           [](World& w) { w.secret.data[key::tls_key] = issue_pair({"x"}).tls_key; },
                           "tls.key is not the key of the certificate tls.crt"},
                      Edit{"LeafNotSignedByCaCrt",
                           [](World& w) {
                             const FreshPair other = issue_pair({"x"});
                             w.secret.data[key::ca_crt] = other.ca_crt;
                             w.secret.data[key::ca_key] = other.ca_key;
                           },
                           "tls.crt is not signed by ca.crt"},
                      Edit{"MissingKey", [](World& w) { w.secret.data.erase(key::tls_key); }, "tls.key is missing"},
                      Edit{"CaKeyMismatch", [](World& w) { w.secret.data[key::ca_key] = issue_pair({"x"}).ca_key; },
                           "ca.key is not the key of the certificate ca.crt"},
                      Edit{"LeafIsTheCa", [](World& w) { w.secret.data[key::ca_crt] = w.secret.data[key::tls_crt]; },
                           "ca.crt is not a CA certificate"}),
    [](const ::testing::TestParamInfo<Edit>& param_info) { return std::string(param_info.param.name); });

TEST(CertsPlan, AnExpiredCaIsReplacedAtOnceWhenNothingValidIsTrusted) {
  World world;
  const FreshPair old = issue_pair(world.names().dns, world.names().ip, 60, 60);
  world.secret.data = {{key::ca_crt, old.ca_crt},
                       {key::ca_key, old.ca_key},
                       {key::tls_crt, old.tls_crt},
                       {key::tls_key, old.tls_key},
                       {key::ca_bundle, old.ca_crt}};
  for (WebhookConfiguration& configuration : world.configurations) {
    for (Webhook& webhook : configuration.webhooks) {
      webhook.ca_bundle = old.ca_crt;
    }
  }
  world.now += 120;  // both expired
  const Step first = plan(world.input());
  ASSERT_EQ(first.action, Action::issue);
  EXPECT_NE(first.reason.find("ca.crt expired at"), std::string::npos) << first.reason;
  const Step issued = world.step();
  EXPECT_EQ(issued.event, "certificate issued");  // no overlap: the expired CA verifies nothing
  EXPECT_EQ(world.data(key::ca_bundle), world.data(key::ca_crt));
  EXPECT_EQ(world.settle().action, Action::steady);
}

TEST(CertsPlan, AnUnusableNewPairIsDiscardedAndNamed) {
  World world;
  world.make_steady();
  world.secret.data[key::next_tls_crt] = "garbage";
  const Step step = world.step();
  ASSERT_EQ(step.action, Action::write_secret);
  EXPECT_EQ(step.event, "Secret repaired");
  EXPECT_EQ(world.secret.data.count(key::next_tls_crt), 0U);
  bool named = false;
  for (const std::string& problem : step.problems) {
    named = named || problem.find("next-tls.crt is not PEM") != std::string::npos;
  }
  EXPECT_TRUE(named) << ::testing::PrintToString(step.problems);
  EXPECT_EQ(world.settle().action, Action::steady);
}

TEST(CertsPlan, AnUnreadableBundleIsRepairedFromCaCrt) {
  World world;
  world.make_steady();
  world.secret.data[key::ca_bundle] = "garbage";
  const Step step = world.step();
  ASSERT_EQ(step.action, Action::write_secret);
  EXPECT_EQ(world.data(key::ca_bundle), world.data(key::ca_crt));
  EXPECT_EQ(step.problems, (std::vector<std::string>{"ca-bundle.crt is not PEM (no -----BEGIN line)"}));
  EXPECT_EQ(world.settle().action, Action::steady);
}

TEST(CertsPlan, ExpiredCasLeaveTheBundleAndAtMostAHandfulStay) {
  World world;
  world.make_steady();
  const std::string current = world.data(key::ca_crt);
  std::string bundle;
  for (int i = 0; i < 7; ++i) {
    bundle += issue_pair({"x"}).ca_crt;
  }
  const std::string expired = issue_pair({"x"}, {}, 30, 30).ca_crt;
  world.secret.data[key::ca_bundle] = expired + bundle + current;
  world.now += 60;
  const Step step = world.step();
  ASSERT_EQ(step.action, Action::write_secret);
  const std::string kept = world.data(key::ca_bundle);
  EXPECT_EQ(world.bundle_size(kept), world.settings.max_bundle);
  EXPECT_EQ(kept.find(expired), std::string::npos);
  EXPECT_NE(kept.find(current), std::string::npos);
  // Then published, probed, and reduced to the current CA.
  EXPECT_EQ(world.settle().action, Action::steady);
  EXPECT_EQ(world.data(key::ca_bundle), current);
}

TEST(CertsPlan, AForeignCaInAConfigurationIsReplacedByTheSecretsBundle) {
  World world;
  world.make_steady();
  world.configurations[1].webhooks[0].ca_bundle = issue_pair({"x"}).ca_crt;
  const Step step = world.step();
  ASSERT_EQ(step.action, Action::patch_webhooks);
  EXPECT_EQ(step.outdated, (std::vector<std::string>{"validating/vmgate"}));
  EXPECT_EQ(step.bundle, world.data(key::ca_crt));
}

TEST(CertsPlan, ASecretLostWhileServingKeepsTheConfigurationsCaUntilTheProbe) {
  World world;
  world.make_steady();
  const std::string ca1 = world.data(key::ca_crt);
  world.secret = SecretState{};  // deleted
  world.endpoints_serve_current = false;
  const Step create = world.step();
  ASSERT_EQ(create.action, Action::write_secret);
  EXPECT_TRUE(create.create);
  EXPECT_EQ(create.event, "rotation started");
  EXPECT_EQ(world.data(key::ca_bundle).find(ca1), 0U);
  EXPECT_EQ(world.settle().action, Action::wait);
  world.endpoints_serve_current = true;
  EXPECT_EQ(world.settle().action, Action::steady);
}

}  // namespace
}  // namespace vmgate::certs
