// The Secret, webhook configuration, Service and EndpointSlice JSON of `vmgate certs`.
#include "vmgate/server/certs_objects.hpp"

#include <gtest/gtest.h>

#include "vmgate/common/base64.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/common/json_decode.hpp"

namespace vmgate::certs {
namespace {

TEST(CertsObjects, ReadsASecretsDataAndAnnotations) {
  const std::string body = R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","resourceVersion":"7",
    "annotations":{"vmgate.kubevirt.io/rotation-phase":"publishing","other":"x"}},
    "data":{"tls.crt":")" + common::base64_encode("PEM") +
                           R"("}})";
  Result<SecretObject> secret = read_secret(body, "Secret s");
  ASSERT_TRUE(secret) << secret.error().message;
  EXPECT_TRUE(secret->state.exists);
  EXPECT_EQ(secret->state.data.at("tls.crt"), "PEM");
  EXPECT_EQ(secret->state.annotations.at(annotation::phase), "publishing");
}

TEST(CertsObjects, AnEmptySecretHasNoData) {
  Result<SecretObject> secret = read_secret(R"({"kind":"Secret","metadata":{"name":"s"},"type":"Opaque"})", "s");
  ASSERT_TRUE(secret);
  EXPECT_TRUE(secret->state.data.empty());
}

TEST(CertsObjects, SecretErrorsNameTheField) {
  EXPECT_EQ(read_secret(R"({"kind":"Secret","data":{"ca.crt":"%%%"}})", "Secret s").error().message,
            "Secret s: data.ca.crt is not base64");
  EXPECT_EQ(read_secret(R"({"kind":"ConfigMap"})", "Secret s").error().message,
            "Secret s: not a Secret (kind \"ConfigMap\")");
  EXPECT_NE(read_secret("{", "Secret s").error().message.find("Secret s: not JSON"), std::string::npos);
}

TEST(CertsObjects, APutKeepsTheResourceVersionAndOtherFields) {
  const std::string original =
      R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"s","namespace":"ns","resourceVersion":"7",
      "labels":{"app":"vmgate"},"annotations":{"keep":"me","vmgate.kubevirt.io/rotation-phase":"publishing"},
      "managedFields":[{}]},"type":"Opaque","data":{"old":"b2xk"}})";
  Result<std::string> body =
      secret_body(original, "s", "ns", {{"tls.crt", "PEM"}}, {{annotation::phase, ""}, {annotation::started, "12"}});
  ASSERT_TRUE(body) << body.error().message;
  Result<json::Document, json::DecodeError> parsed = json::parse_json(*body);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(json::to_string(*json::find_path(*parsed, {"metadata", "resourceVersion"})), "\"7\"");
  EXPECT_EQ(json::to_string(*json::find_path(*parsed, {"metadata", "labels"})), R"({"app":"vmgate"})");
  EXPECT_EQ(json::to_string(*json::find_path(*parsed, {"metadata", "annotations"})),
            R"({"keep":"me","vmgate.kubevirt.io/rotation-started":"12"})");
  EXPECT_EQ(json::to_string(*json::find(*parsed, "data")), R"({"tls.crt":"UEVN"})");
  EXPECT_EQ(json::find_path(*parsed, {"metadata", "managedFields"}), nullptr);
}

TEST(CertsObjects, ACreateIsAnOpaqueSecret) {
  Result<std::string> body = secret_body("", "vmgate-tls", "vmgate-system", {{"ca.crt", "X"}}, {});
  ASSERT_TRUE(body);
  EXPECT_EQ(*body, R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"vmgate-tls","namespace":"vmgate-system",)"
                   R"("annotations":{}},"type":"Opaque","data":{"ca.crt":"WA=="}})");
}

const std::string configuration_json = R"({"kind":"MutatingWebhookConfiguration","metadata":{"name":"vmgate"},
  "webhooks":[{"name":"a.vmgate.kubevirt.io","clientConfig":{"url":"https://127.0.0.1:9443/a","caBundle":")" +
                                       common::base64_encode("CA-PEM") + R"("}},
              {"name":"b.vmgate.kubevirt.io","clientConfig":{"service":{"namespace":"vmgate-system","name":"vmgate",
               "path":"/b","port":8443}}}]})";

TEST(CertsObjects, ReadsAConfigurationsWebhooks) {
  Result<WebhookConfiguration> configuration =
      read_configuration(configuration_json, ConfigurationKind::mutating, "mutatingwebhookconfigurations/vmgate");
  ASSERT_TRUE(configuration) << configuration.error().message;
  EXPECT_EQ(configuration->name, "vmgate");
  ASSERT_EQ(configuration->webhooks.size(), 2U);
  EXPECT_EQ(configuration->webhooks[0].ca_bundle, "CA-PEM");
  EXPECT_EQ(configuration->webhooks[0].url, "https://127.0.0.1:9443/a");
  EXPECT_EQ(configuration->webhooks[1].ca_bundle, "");
  EXPECT_EQ(configuration->webhooks[1].service_name, "vmgate");
  EXPECT_EQ(configuration->webhooks[1].service_namespace, "vmgate-system");
  EXPECT_EQ(configuration->webhooks[1].service_port, 8443);
}

TEST(CertsObjects, ConfigurationErrorsNameTheField) {
  EXPECT_EQ(read_configuration(R"({"webhooks":{}})", ConfigurationKind::validating, "v/x").error().message,
            "v/x: webhooks is an object, not a list");
  EXPECT_EQ(
      read_configuration(R"({"webhooks":[{"clientConfig":{"caBundle":"***"}}]})", ConfigurationKind::validating, "v/x")
          .error()
          .message,
      "v/x: webhooks[0].clientConfig.caBundle is not base64");
}

TEST(CertsObjects, ThePatchTestsEachNameAndSetsOnlyTheCaBundles) {
  Result<WebhookConfiguration> configuration =
      read_configuration(configuration_json, ConfigurationKind::mutating, "m/vmgate");
  ASSERT_TRUE(configuration);
  const std::string patch = ca_bundle_patch(*configuration, "NEW");
  const std::string encoded = common::base64_encode("NEW");
  EXPECT_EQ(patch, R"([{"op":"test","path":"/webhooks/0/name","value":"a.vmgate.kubevirt.io"},)"
                   R"({"op":"add","path":"/webhooks/0/clientConfig/caBundle","value":")" +
                       encoded +
                       R"("},{"op":"test","path":"/webhooks/1/name","value":"b.vmgate.kubevirt.io"},)"
                       R"({"op":"add","path":"/webhooks/1/clientConfig/caBundle","value":")" +
                       encoded + R"("}])");
}

const std::string service_json = R"({"kind":"Service","metadata":{"name":"vmgate"},"spec":{"ports":[
  {"name":"metrics","port":8080,"targetPort":8080},{"name":"https","port":443,"targetPort":"https"}]}})";

TEST(CertsObjects, ReadyEndpointsFollowTheNamedPort) {
  const std::string slices = R"({"kind":"EndpointSliceList","items":[
    {"addressType":"IPv4","ports":[{"name":"metrics","port":8080},{"name":"https","port":8443}],
     "endpoints":[{"addresses":["10.0.0.1"],"conditions":{"ready":true}},
                  {"addresses":["10.0.0.2"],"conditions":{"ready":false}},
                  {"addresses":["10.0.0.3"]}]},
    {"addressType":"IPv6","ports":[{"name":"https","port":9443}],"endpoints":[{"addresses":["fd00::1"]}]},
    {"addressType":"IPv4","ports":[{"name":"other","port":1}],"endpoints":[{"addresses":["10.0.0.9"]}]}]})";
  Result<std::vector<std::string>> endpoints = ready_endpoints(service_json, slices, 443);
  ASSERT_TRUE(endpoints) << endpoints.error().message;
  EXPECT_EQ(*endpoints, (std::vector<std::string>{"10.0.0.1:8443", "10.0.0.3:8443", "[fd00::1]:9443"}));
}

TEST(CertsObjects, AServiceWithoutThePortIsAnError) {
  EXPECT_EQ(ready_endpoints(service_json, R"({"items":[]})", 9999).error().message, "Service vmgate has no port 9999");
  Result<std::vector<std::string>> none = ready_endpoints(service_json, R"({"items":[]})", 443);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace vmgate::certs
