// Tests of the input device, ioThreadsPolicy and host device rules (vmi-create-admitter.go
// validateInputDevices, validateIOThreadsPolicy, validateHostDevicesWithPassthroughEnabled).
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string inputs(std::string_view list, std::string_view path = "spec") {
  return describe(validate_inputs(parse(R"({"domain": {"devices": {"inputs": )" + std::string(list) + "}}}"),
                                  FieldPath(std::string(path))));
}

std::string io_threads(std::string_view domain) {
  return describe(validate_io_threads_policy(parse(R"({"domain": )" + std::string(domain) + "}"), FieldPath("spec")));
}

TEST(ValidationDevices, InputsVirtioOrUsbTablet) {
  EXPECT_EQ(inputs(R"([{"name": "a", "bus": "virtio", "type": "tablet"}, {"name": "b", "bus": "usb", "type": "tablet"},
                       {"name": "c", "type": "tablet"}])"),
            "");
  EXPECT_EQ(inputs("[]"), "");
}

TEST(ValidationDevices, InputBus) {
  EXPECT_EQ(inputs(R"([{"name": "a", "bus": "ps2", "type": "tablet"}])"),
            "FieldValueInvalid spec.domain.devices.inputs[0].bus: Input device can have only virtio or usb bus.\n");
}

TEST(ValidationDevices, InputType) {
  EXPECT_EQ(
      inputs(R"([{"name": "a", "bus": "usb", "type": "keyboard"}, {"name": "b", "bus": "ps2"}])", "spec.template.spec"),
      "FieldValueInvalid spec.template.spec.domain.devices.inputs[0].type: Input device can have only tablet type.\n"
      "FieldValueInvalid spec.template.spec.domain.devices.inputs[1].bus: Input device can have only virtio or usb "
      "bus.\n"
      "FieldValueInvalid spec.template.spec.domain.devices.inputs[1].type: Input device can have only tablet "
      "type.\n");
}

TEST(ValidationDevices, IoThreadsPolicies) {
  EXPECT_EQ(io_threads(R"({"ioThreadsPolicy": "shared"})"), "");
  EXPECT_EQ(io_threads(R"({"ioThreadsPolicy": "auto"})"), "");
  EXPECT_EQ(io_threads(R"({"ioThreadsPolicy": "supplementalPool", "ioThreads": {"supplementalPoolThreadCount": 4}})"),
            "");
  EXPECT_EQ(io_threads("{}"), "");
  EXPECT_EQ(io_threads(R"({"ioThreadsPolicy": null})"), "");
}

TEST(ValidationDevices, InvalidIoThreadsPolicy) {
  EXPECT_EQ(io_threads(R"({"ioThreadsPolicy": "dedicated"})"),
            "FieldValueInvalid spec.domain.ioThreadsPolicy: Invalid IOThreadsPolicy (dedicated)\n");
  EXPECT_EQ(io_threads(R"({"ioThreadsPolicy": ""})"),
            "FieldValueInvalid spec.domain.ioThreadsPolicy: Invalid IOThreadsPolicy ()\n");
}

TEST(ValidationDevices, SupplementalPoolNeedsAThreadCount) {
  // KubeVirt names the field ioThreads.count.
  for (std::string_view domain :
       {R"({"ioThreadsPolicy": "supplementalPool"})", R"({"ioThreadsPolicy": "supplementalPool", "ioThreads": {}})",
        R"({"ioThreadsPolicy": "supplementalPool", "ioThreads": {"supplementalPoolThreadCount": 0}})"}) {
    EXPECT_EQ(io_threads(domain),
              "FieldValueInvalid spec.domain.ioThreads.count: the number of iothreads needs to be set and positive for "
              "the dedicated policy\n")
        << domain;
  }
}

TEST(ValidationDevices, HostDevicesNeedTheFeatureGate) {
  constexpr std::string_view spec =
      R"({"domain": {"devices": {"hostDevices": [{"name": "gpu", "deviceName": "nvidia.com/A100"}]}}})";
  // KubeVirt's field is <spec>.HostDevices.
  EXPECT_EQ(describe(validate_host_devices(parse(spec), FieldPath("spec"), ClusterConfig{})),
            "FieldValueInvalid spec.HostDevices: Host Devices feature gate is not enabled in kubevirt-config\n");
  EXPECT_EQ(describe(validate_host_devices(parse(spec), FieldPath("spec.template.spec"), ClusterConfig{})),
            "FieldValueInvalid spec.template.spec.HostDevices: Host Devices feature gate is not enabled in "
            "kubevirt-config\n");
  ClusterConfig config;
  config.feature_gates = {"HostDevices"};
  EXPECT_TRUE(validate_host_devices(parse(spec), FieldPath("spec"), config).empty());
}

TEST(ValidationDevices, EmptyHostDeviceListCountsAsSet) {
  // Go tests `HostDevices != nil`: `[]` decodes to a non-nil slice.
  EXPECT_EQ(describe(validate_host_devices(parse(R"({"domain": {"devices": {"hostDevices": []}}})"), FieldPath("spec"),
                                           ClusterConfig{})),
            "FieldValueInvalid spec.HostDevices: Host Devices feature gate is not enabled in kubevirt-config\n");
  EXPECT_TRUE(validate_host_devices(parse(R"({"domain": {"devices": {"hostDevices": null}}})"), FieldPath("spec"),
                                    ClusterConfig{})
                  .empty());
  EXPECT_TRUE(
      validate_host_devices(parse(R"({"domain": {"devices": {}}})"), FieldPath("spec"), ClusterConfig{}).empty());
}

}  // namespace
}  // namespace vmgate::admission::validation
