// Tests of vmi-create-admitter.go validateProbe and the pod-network requirement of HTTP/TCP probes.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view spec) {
  return describe(validate_probes(parse(spec), FieldPath("spec")));
}

TEST(ValidationProbes, ExactlyOneHandler) {
  EXPECT_EQ(check(R"({"networks": [{"name": "default", "pod": {}}], "readinessProbe": {"httpGet": {"port": 80}}})"),
            "");
  EXPECT_EQ(check(R"({"networks": [{"name": "default", "pod": {}}], "livenessProbe": {"httpGet": {}, "exec": {}}})"),
            "FieldValueInvalid spec.livenessProbe: spec.livenessProbe must have exactly one probe type set\n");
  EXPECT_EQ(check(R"({"networks": [{"name": "default", "pod": {}}], "readinessProbe": {"initialDelaySeconds": 5}})"),
            "FieldValueRequired spec.readinessProbe: either spec.readinessProbe.tcpSocket, spec.readinessProbe.exec or "
            "spec.readinessProbe.httpGet must be set if a spec.readinessProbe is specified\n");
}

TEST(ValidationProbes, HttpAndTcpNeedThePodNetwork) {
  EXPECT_EQ(check(R"({"networks": [{"name": "m", "multus": {"networkName": "n"}}],
                      "readinessProbe": {"httpGet": {}}, "livenessProbe": {"tcpSocket": {}}})"),
            "FieldValueInvalid spec.readinessProbe.httpGet: spec.readinessProbe.httpGet is only allowed if the Pod "
            "Network is attached\n"
            "FieldValueInvalid spec.livenessProbe.tcpSocket: spec.livenessProbe.tcpSocket is only allowed if the Pod "
            "Network is attached\n");
  EXPECT_EQ(check(R"({"readinessProbe": {"exec": {"command": ["true"]}}, "livenessProbe": {"guestAgentPing": {}}})"),
            "");
}

}  // namespace
}  // namespace vmgate::admission::validation
