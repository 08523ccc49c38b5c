// Tests of the API object defaults (SetObjectDefaults_VirtualMachineInstance in
// staging/src/kubevirt.io/api/core/v1, preceded by s390x's ACPI default): firmware uuid, feature
// states, Hyper-V spinlocks, timers, disk targets, CD-ROM readonly/tray, inputs, probes.
#include <gtest/gtest.h>

#include <string>

#include "support/json_test_support.hpp"
#include "vmgate/admission/defaults/vm.hpp"
#include "vmgate/admission/defaults/vmi.hpp"

// After json.hpp, which must define RAPIDJSON_ASSERT before any RapidJSON header.
#include <rapidjson/pointer.h>

namespace vmgate::admission::defaults {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::text;

json::Document defaulted(std::string_view spec_text, std::string_view seed = "uid:1234") {
  json::Document spec = parse(spec_text);
  set_object_defaults(spec, seed, spec.GetAllocator());
  return spec;
}

TEST(DefaultsVmiObject, FirmwareUuidIsDerivedFromTheSeed) {
  EXPECT_EQ(text(defaulted("{}"), "/domain/firmware/uuid"), name_based_uuid("uid:1234#firmware-uuid"));
  EXPECT_NE(text(defaulted("{}", "uid:1"), "/domain/firmware/uuid"),
            text(defaulted("{}", "uid:2"), "/domain/firmware/uuid"));
  EXPECT_EQ(text(defaulted(R"({"domain": {"firmware": {"uuid": "given"}}})"), "/domain/firmware/uuid"), "given");
}

TEST(DefaultsVmiObject, AcpiIsEnabledByDefault) {
  EXPECT_EQ(text(defaulted("{}"), "/domain/features"), R"({"acpi":{"enabled":true}})");
  EXPECT_EQ(
      text(defaulted(R"({"domain": {"features": {"acpi": {"enabled": false}}}})"), "/domain/features/acpi/enabled"),
      "false");
}

TEST(DefaultsVmiObject, AcpiIsDisabledByDefaultOnS390x) {
  // pkg/defaults/s390x.go setS390xDefaultFeatures runs before the object defaults.
  EXPECT_EQ(text(defaulted(R"({"architecture": "s390x"})"), "/domain/features/acpi/enabled"), "false");
  EXPECT_EQ(text(defaulted(R"({"architecture": "s390x", "domain": {"features": {"acpi": {}}}})"),
                 "/domain/features/acpi/enabled"),
            "false");
  EXPECT_EQ(text(defaulted(R"({"architecture": "s390x", "domain": {"features": {"acpi": {"enabled": true}}}})"),
                 "/domain/features/acpi/enabled"),
            "true");
  EXPECT_EQ(text(defaulted(R"({"architecture": "arm64"})"), "/domain/features/acpi/enabled"), "true");
}

TEST(DefaultsVmiObject, PresentFeatureStatesAreEnabled) {
  const json::Document spec =
      defaulted(R"({"domain": {"features": {"smm": {}, "apic": {}, "pvspinlock": {"enabled": false}}}})");
  EXPECT_EQ(text(spec, "/domain/features/smm/enabled"), "true");
  EXPECT_EQ(text(spec, "/domain/features/apic/enabled"), "true");
  EXPECT_EQ(text(spec, "/domain/features/pvspinlock/enabled"), "false");
  // Absent features are not created.
  EXPECT_EQ(text(spec, "/domain/features/hyperv"), "<absent>");
  EXPECT_EQ(text(defaulted("{}"), "/domain/features/smm"), "<absent>");
}

TEST(DefaultsVmiObject, HypervFeatures) {
  const json::Document spec = defaulted(R"({"domain": {"features": {"hyperv": {
      "relaxed": {}, "vapic": {"enabled": false}, "spinlocks": {}, "synictimer": {"direct": {}},
      "tlbflush": {"direct": {}, "extended": {"enabled": false}}, "vendorid": {"vendorid": "KVMKVMKVM"}, "evmcs": {}}}}})");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/relaxed/enabled"), "true");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/vapic/enabled"), "false");
  // SetDefaults_FeatureSpinlocks: 4096 retries once enabled.
  EXPECT_EQ(text(spec, "/domain/features/hyperv/spinlocks"), R"({"enabled":true,"spinlocks":4096})");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/synictimer"), R"({"direct":{"enabled":true},"enabled":true})");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/tlbflush"),
            R"({"direct":{"enabled":true},"extended":{"enabled":false},"enabled":true})");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/vendorid"), R"({"vendorid":"KVMKVMKVM","enabled":true})");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/evmcs/enabled"), "true");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/ipi"), "<absent>");
}

TEST(DefaultsVmiObject, DisabledSpinlocksGetNoRetries) {
  const json::Document spec = defaulted(R"({"domain": {"features": {"hyperv": {"spinlocks": {"enabled": false}}}}})");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/spinlocks"), R"({"enabled":false})");
  const json::Document kept = defaulted(R"({"domain": {"features": {"hyperv": {"spinlocks": {"spinlocks": 8191}}}}})");
  EXPECT_EQ(text(kept, "/domain/features/hyperv/spinlocks"), R"({"spinlocks":8191,"enabled":true})");
}

TEST(DefaultsVmiObject, TimersArePresentUnlessSaidOtherwise) {
  // A timer's on/off member is "present" in JSON (the Go field is Enabled).
  const json::Document spec = defaulted(
      R"({"domain": {"clock": {"utc": {}, "timer": {"hpet": {"present": false}, "rtc": {"tickPolicy": "catchup"},
          "kvm": {}}}}})");
  EXPECT_EQ(text(spec, "/domain/clock/timer"),
            R"({"hpet":{"present":false},"rtc":{"tickPolicy":"catchup","present":true},"kvm":{"present":true}})");
}

TEST(DefaultsVmiObject, DiskTargets) {
  const json::Document spec = defaulted(R"({"domain": {"devices": {"disks": [
      {"name": "a"}, {"name": "b", "cdrom": {}}, {"name": "c", "cdrom": {"readonly": false, "tray": "open"}},
      {"name": "d", "lun": {}}, {"name": "e", "disk": {"bus": "virtio"}},
      {"name": "f", "disk": {}, "blockSize": {"matchVolume": {}}}]}}})");
  EXPECT_EQ(text(spec, "/domain/devices/disks/0"), R"({"name":"a","disk":{}})");
  EXPECT_EQ(text(spec, "/domain/devices/disks/1"), R"({"name":"b","cdrom":{"readonly":true,"tray":"closed"}})");
  EXPECT_EQ(text(spec, "/domain/devices/disks/2"), R"({"name":"c","cdrom":{"readonly":false,"tray":"open"}})");
  EXPECT_EQ(text(spec, "/domain/devices/disks/3"), R"({"name":"d","lun":{}})");
  EXPECT_EQ(text(spec, "/domain/devices/disks/4"), R"({"name":"e","disk":{"bus":"virtio"}})");
  EXPECT_EQ(text(spec, "/domain/devices/disks/5/blockSize"), R"({"matchVolume":{"enabled":true}})");
}

TEST(DefaultsVmiObject, InputsDefaultToUsbTablet) {
  // vmi-mutator_test.go "should set defaults for input devices"
  const json::Document spec = defaulted(R"({"domain": {"devices": {"inputs": [{"name": "default-0"},
      {"name": "other", "bus": "virtio", "type": "tablet"}]}}})");
  EXPECT_EQ(text(spec, "/domain/devices/inputs"),
            R"([{"name":"default-0","bus":"usb","type":"tablet"},{"name":"other","bus":"virtio","type":"tablet"}])");
}

TEST(DefaultsVmiObject, Probes) {
  const json::Document spec = defaulted(R"({"readinessProbe": {"httpGet": {"port": 80}, "periodSeconds": 5},
                                            "livenessProbe": {"timeoutSeconds": 0, "failureThreshold": 7}})");
  EXPECT_EQ(
      text(spec, "/readinessProbe"),
      R"({"httpGet":{"port":80},"periodSeconds":5,"timeoutSeconds":1,"successThreshold":1,"failureThreshold":3})");
  EXPECT_EQ(text(spec, "/livenessProbe"),
            R"({"timeoutSeconds":1,"failureThreshold":7,"periodSeconds":10,"successThreshold":1})");
  EXPECT_EQ(text(defaulted("{}"), "/readinessProbe"), "<absent>");
}

TEST(DefaultsVmiObject, GpuRamFbFeatureState) {
  const json::Document spec = defaulted(R"({"domain": {"devices": {"gpus": [
      {"name": "gpu1", "deviceName": "nvidia.com/GRID", "virtualGPUOptions": {"display": {"ramFB": {}}}},
      {"name": "gpu2", "deviceName": "nvidia.com/GRID"}]}}})");
  EXPECT_EQ(text(spec, "/domain/devices/gpus/0/virtualGPUOptions/display/ramFB/enabled"), "true");
  EXPECT_EQ(text(spec, "/domain/devices/gpus/1"), R"({"name":"gpu2","deviceName":"nvidia.com/GRID"})");
}

TEST(DefaultsVmiObject, DefaultingTwiceChangesNothing) {
  const json::Document once =
      defaulted(R"({"architecture": "s390x", "domain": {"devices": {"disks": [{"name": "a"}]}}})");
  json::Document twice;
  twice.CopyFrom(once, twice.GetAllocator());
  set_object_defaults(twice, "uid:1234", twice.GetAllocator());
  EXPECT_EQ(dump(twice), dump(once));
}

}  // namespace
}  // namespace vmgate::admission::defaults
