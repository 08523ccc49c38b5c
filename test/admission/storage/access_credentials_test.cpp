// Tests of vmi-create-admitter.go validateAccessCredentials.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view credentials, std::string_view volumes = "[]") {
  return describe(validate_access_credentials(
      parse(R"({"accessCredentials": )" + std::string(credentials) + R"(, "volumes": )" + std::string(volumes) + "}"),
      FieldPath("spec")));
}

TEST(ValidationAccessCredentials, SshKeyWithItsCloudInitVolume) {
  const std::string_view no_cloud =
      R"([{"sshPublicKey": {"source": {"secret": {"secretName": "k"}}, "propagationMethod": {"noCloud": {}}}}])";
  EXPECT_EQ(check(no_cloud, R"([{"name": "ci", "cloudInitNoCloud": {"userData": "x"}}])"), "");
  EXPECT_EQ(check(no_cloud),
            "FieldValueInvalid spec.accessCredentials[0].sshPublicKey.propagationMethod: spec.accessCredentials[0] "
            "requires a noCloud volume to exist when the noCloud propagationMethod is in use.\n");
  EXPECT_EQ(
      check(
          R"([{"sshPublicKey": {"source": {"secret": {"secretName": "k"}}, "propagationMethod": {"configDrive": {}}}}])",
          R"([{"name": "ci", "cloudInitNoCloud": {"userData": "x"}}])"),
      "FieldValueInvalid spec.accessCredentials[0].sshPublicKey.propagationMethod: spec.accessCredentials[0] requires "
      "a configDrive volume to exist when the configDrive propagationMethod is in use.\n");
}

TEST(ValidationAccessCredentials, GuestAgentNeedsUsers) {
  EXPECT_EQ(check(R"([{"sshPublicKey": {"source": {"secret": {"secretName": "k"}},
                         "propagationMethod": {"qemuGuestAgent": {"users": ["fedora"]}}}}])"),
            "");
  EXPECT_EQ(check(R"([{"sshPublicKey": {"source": {"secret": {"secretName": "k"}},
                         "propagationMethod": {"qemuGuestAgent": {"users": []}}}}])"),
            "FieldValueInvalid spec.accessCredentials[0].sshPublicKey.propagationMethod.qemuGuestAgent.users: "
            "spec.accessCredentials[0] requires at least one user to be present in the users list\n");
}

TEST(ValidationAccessCredentials, ExactlyOneOfEach) {
  EXPECT_EQ(check(R"([{"sshPublicKey": {"source": {}, "propagationMethod": {}}}])"),
            "FieldValueInvalid spec.accessCredentials[0].sshPublicKey.source: spec.accessCredentials[0] must have "
            "exactly one source set\n"
            "FieldValueInvalid spec.accessCredentials[0].sshPublicKey.propagationMethod: spec.accessCredentials[0] "
            "must have exactly one propagationMethod set\n");
  EXPECT_EQ(check(R"([{"userPassword": {"source": {"secret": {"secretName": "p"}}}}])"),
            "FieldValueInvalid spec.accessCredentials[0].userPassword.propagationMethod: spec.accessCredentials[0] "
            "must have exactly one propagationMethod set\n");
  EXPECT_EQ(check(R"([{}])"),
            "FieldValueInvalid spec.accessCredentials[0]: spec.accessCredentials[0] must have "
            "exactly one access credential type set\n");
  EXPECT_EQ(check(R"([{"userPassword": {"source": {"secret": {"secretName": "p"}},
                         "propagationMethod": {"qemuGuestAgent": {}}},
                       "sshPublicKey": {"source": {"secret": {"secretName": "k"}},
                         "propagationMethod": {"qemuGuestAgent": {"users": ["u"]}}}}])"),
            "FieldValueInvalid spec.accessCredentials[0]: spec.accessCredentials[0] must have exactly one access "
            "credential type set\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
