// Tests of vmi-create-admitter.go validateVolumes.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view volumes, const ClusterConfig& config = {}) {
  return describe(validate_volumes(parse(R"({"volumes": )" + std::string(volumes) + "}"), FieldPath("spec"), config));
}

TEST(ValidationVolumes, UniqueNamesAndOneSourceEach) {
  EXPECT_EQ(
      check(R"([{"name": "a", "containerDisk": {"image": "i"}}, {"name": "b", "emptyDisk": {"capacity": "1Gi"}}])"),
      "");
  EXPECT_EQ(
      check(R"([{"name": "a", "containerDisk": {"image": "i"}}, {"name": "a", "containerDisk": {"image": "i"}}])"),
      "FieldValueInvalid spec.volumes[1].name: spec.volumes[1] and spec.volumes[0] must not have the same Name.\n");
  EXPECT_EQ(
      check(R"([{"name": "a", "containerDisk": {"image": "i"}, "emptyDisk": {"capacity": "1Gi"}}, {"name": "b"}])"),
      "FieldValueInvalid spec.volumes[0]: spec.volumes[0] must have exactly one source type set\n"
      "FieldValueInvalid spec.volumes[1]: spec.volumes[1] must have exactly one source type set\n");
  EXPECT_EQ(check(R"([{"name": "a", "dataVolume": {"name": ""}}])"),
            "FieldValueRequired spec.volumes[0].name: DataVolume 'name' must be set\n");
}

TEST(ValidationVolumes, CloudInitData) {
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitNoCloud": {"userDataBase64": "I2Nsb3VkLWNvbmZpZw=="}}])"), "");
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitNoCloud": {"userDataBase64": "#cloud-config"}}])"),
            "FieldValueInvalid spec.volumes[0].cloudInitNoCloud.userDataBase64: "
            "spec.volumes[0].cloudInitNoCloud.userDataBase64.cloudInitNoCloud.userDataBase64 is not a valid base64 "
            "value.\n");
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitNoCloud": {"userData": "x", "userDataBase64": "eA=="}}])"),
            "FieldValueInvalid spec.volumes[0].cloudInitNoCloud: spec.volumes[0].cloudInitNoCloud must have only one "
            "userdatasource set.\n");
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitConfigDrive": {"userData": ")" + std::string(2049, 'x') + R"("}}])"),
            "FieldValueInvalid spec.volumes[0].cloudInitConfigDrive: spec.volumes[0].cloudInitConfigDrive userdata "
            "exceeds 2048 byte limit. Should use UserDataSecretRef for larger data.\n");
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitNoCloud": {}}])"),
            "FieldValueInvalid spec.volumes[0].cloudInitNoCloud: spec.volumes[0].cloudInitNoCloud must have at least "
            "one userdatasource or one networkdatasource set.\n");
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitNoCloud": {"networkDataSecretRef": {"name": "s"}}}])"), "");
}

// schema.go: the user data Secret of both cloud-init sources is `secretRef` (UserDataSecretRef's
// json tag), the network data one `networkDataSecretRef`.
TEST(ValidationVolumes, CloudInitSecretRefs) {
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitNoCloud": {"secretRef": {"name": "s"}}}])"), "");
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitConfigDrive": {"secretRef": {"name": "s"}}}])"), "");
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitConfigDrive": {"networkDataSecretRef": {"name": "s"}}}])"), "");
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitNoCloud": {"secretRef": {"name": "s"}, "userData": "x"}}])"),
            "FieldValueInvalid spec.volumes[0].cloudInitNoCloud: spec.volumes[0].cloudInitNoCloud must have only one "
            "userdatasource set.\n");
  // A reference without a name is no source (validateVolumes checks Name != "").
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitConfigDrive": {"secretRef": {}}}])"),
            "FieldValueInvalid spec.volumes[0].cloudInitConfigDrive: spec.volumes[0].cloudInitConfigDrive must have "
            "at least one userdatasource or one networkdatasource set.\n");
  // The Go field's name is not a JSON key: it names no source.
  EXPECT_EQ(check(R"([{"name": "c", "cloudInitNoCloud": {"userDataSecretRef": {"name": "s"}}}])"),
            "FieldValueInvalid spec.volumes[0].cloudInitNoCloud: spec.volumes[0].cloudInitNoCloud must have at least "
            "one userdatasource or one networkdatasource set.\n");
}

TEST(ValidationVolumes, SourcesThatNeedANameOrAGate) {
  EXPECT_EQ(
      check(R"([{"name": "s", "secret": {}}, {"name": "m", "configMap": {}}, {"name": "a", "serviceAccount": {}}])"),
      "FieldValueInvalid spec.volumes[0].secret.secretName: spec.volumes[0].secret.secretName is a required "
      "field\n"
      "FieldValueInvalid spec.volumes[1].configMap.name: spec.volumes[1].configMap.name is a required field\n"
      "FieldValueInvalid spec.volumes[2].serviceAccount.serviceAccountName: "
      "spec.volumes[2].serviceAccount.serviceAccountName is a required field\n");
  EXPECT_EQ(check(R"([{"name": "h", "hostDisk": {"path": "/d.img", "type": "Disk", "capacity": "1Gi"}}])"),
            "FieldValueInvalid spec.volumes[0]: HostDisk feature gate is not enabled\n"
            "FieldValueInvalid spec.volumes[0].hostDisk.capacity: spec.volumes[0].hostDisk.capacity is allowed to pass "
            "only with spec.volumes[0].hostDisk.type equal to 'DiskOrCreate'\n");
  ClusterConfig gates;
  gates.feature_gates = {"HostDisk"};
  EXPECT_EQ(check(R"([{"name": "h", "hostDisk": {"type": "diskOrCreate"}}])", gates),
            "FieldValueNotFound spec.volumes[0].hostDisk.path: spec.volumes[0].hostDisk.path is required for hostDisk "
            "volume\n"
            "FieldValueInvalid spec.volumes[0].hostDisk.type: spec.volumes[0].hostDisk.type has invalid value "
            "'diskOrCreate', allowed are 'Disk' or 'DiskOrCreate'\n");
  EXPECT_EQ(check(R"([{"name": "a", "serviceAccount": {"serviceAccountName": "x"}},
                      {"name": "b", "serviceAccount": {"serviceAccountName": "y"}}])"),
            "FieldValueInvalid spec.volumes: spec.volumes must have max one serviceAccount volume set\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
