// Tests of admission/src/preference/devices.cpp (KubeVirt pkg/instancetype/preference/apply/
// device.go, disk.go, interface.go; cases from device_test.go).
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/admission/preference/apply.hpp"

namespace vmgate::admission::preference {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::json_equals;

json::Document applied(std::string_view preference, std::string_view vmi_spec, Release release = Release::main) {
  return testing::applied_rule([release](const json::Value& p, json::Value& spec,
                                         json::Allocator& allocator) { apply_devices(p, spec, allocator, release); },
                               preference, vmi_spec);
}

const json::Value& devices_of(const json::Value& spec) {
  return *json::find_path(spec, {"domain", "devices"});
}

// device_test.go BeforeEach: what the user set stays, everything else comes from the preference.
TEST(PreferenceDevices, AppliesEveryUnsetFieldAndKeepsTheUsers) {
  const json::Document spec = applied(R"({"devices":{
      "preferredDiskDedicatedIoThread":true,"preferredDisableHotplug":true,"preferredUseVirtioTransitional":true,
      "preferredNetworkInterfaceMultiQueue":true,"preferredBlockMultiQueue":true,
      "preferredDiskBlockSize":{"custom":{"logical":4096,"physical":4096}},
      "preferredDiskCache":"writethrough","preferredDiskIO":"threads","preferredDiskBus":"virtio",
      "preferredCdromBus":"scsi","preferredLunBus":"sata","preferredInputBus":"virtio","preferredInputType":"tablet",
      "preferredInterfaceModel":"virtio","preferredSoundModel":"ac97","preferredRng":{},
      "preferredInterfaceMasquerade":{},"preferredPanicDeviceModel":"hyperv"}})",
                                      R"({"domain":{"devices":{
      "disks":[
        {"name":"d0","cache":"writeback","io":"native","blockSize":{"custom":{"logical":512,"physical":512}},
         "disk":{"bus":"scsi"}},
        {"name":"d1","disk":{}},
        {"name":"d2","cdrom":{"bus":"sata"}},
        {"name":"d3","cdrom":{}},
        {"name":"d4","lun":{"bus":"sata"}},
        {"name":"d5","lun":{}}],
      "inputs":[{"name":"i0","bus":"usb","type":"tablet"},{"name":"i1"}],
      "interfaces":[{"name":"primary","model":"e1000"},{"name":"secondary"}],
      "sound":{"name":"audio"},
      "panicDevices":[{}]}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"devices":{
      "disks":[
        {"name":"d0","cache":"writeback","io":"native","blockSize":{"custom":{"logical":512,"physical":512}},
         "disk":{"bus":"scsi"}},
        {"name":"d1","disk":{"bus":"virtio"},"blockSize":{"custom":{"logical":4096,"physical":4096}},
         "cache":"writethrough","io":"threads","dedicatedIOThread":true},
        {"name":"d2","cdrom":{"bus":"sata"}},
        {"name":"d3","cdrom":{"bus":"scsi"}},
        {"name":"d4","lun":{"bus":"sata"}},
        {"name":"d5","lun":{"bus":"sata"}}],
      "inputs":[{"name":"i0","bus":"usb","type":"tablet"},{"name":"i1","bus":"virtio","type":"tablet"}],
      "interfaces":[{"name":"primary","model":"e1000"},{"name":"secondary","model":"virtio"}],
      "sound":{"name":"audio","model":"ac97"},
      "panicDevices":[{"model":"hyperv"}],
      "useVirtioTransitional":true,"blockMultiQueue":true,"networkInterfaceMultiqueue":true,
      "disableHotplug":true,"rng":{}}}})"));
}

TEST(PreferenceDevices, DiskWithoutTargetGetsADiskTarget) {
  const json::Document spec = applied(R"({"devices":{"preferredDiskBus":"virtio","preferredCdromBus":"sata"}})",
                                      R"({"domain":{"devices":{"disks":[{"name":"rootdisk"}]}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"devices":{"disks":[{"name":"rootdisk","disk":{"bus":"virtio"}}]}}})"));
}

// CNV-9817.
TEST(PreferenceDevices, UserDiskBusIsKept) {
  const json::Document spec = applied(R"({"devices":{"preferredDiskBus":"virtio"}})",
                                      R"({"domain":{"devices":{"disks":[{"name":"d","disk":{"bus":"scsi"}}]}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"devices":{"disks":[{"name":"d","disk":{"bus":"scsi"}}]}}})"));
}

TEST(PreferenceDevices, UserDiskSettingsAreKept) {
  const json::Document spec = applied(
      R"({"devices":{"preferredDiskCache":"none","preferredDiskIO":"threads",
          "preferredDiskBlockSize":{"matchVolume":{"enabled":true}}}})",
      R"({"domain":{"devices":{"disks":[{"name":"d","disk":{},"cache":"writeback","io":"native",
          "blockSize":{"custom":{"logical":512,"physical":512}}}]}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"devices":{"disks":[{"name":"d","disk":{},"cache":"writeback",
      "io":"native","blockSize":{"custom":{"logical":512,"physical":512}}}]}}})"));
}

// The dedicated IO thread is judged on the bus after the preferred bus was applied, and only on virtio.
TEST(PreferenceDevices, DedicatedIoThreadOnlyOnVirtioDisks) {
  const json::Document spec =
      applied(R"({"devices":{"preferredDiskDedicatedIoThread":true,"preferredDiskBus":"virtio"}})",
              R"({"domain":{"devices":{"disks":[
          {"name":"a","disk":{}},{"name":"b","disk":{"bus":"sata"}},{"name":"c","disk":{"bus":"virtio"}},
          {"name":"d","disk":{"bus":"virtio"},"dedicatedIOThread":false},{"name":"e","cdrom":{}}]}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"devices":{"disks":[
      {"name":"a","disk":{"bus":"virtio"},"dedicatedIOThread":true},{"name":"b","disk":{"bus":"sata"}},
      {"name":"c","disk":{"bus":"virtio"},"dedicatedIOThread":true},
      {"name":"d","disk":{"bus":"virtio"},"dedicatedIOThread":false},{"name":"e","cdrom":{}}]}}})"));
}

TEST(PreferenceDevices, DedicatedIoThreadIgnoredWithoutVirtioBus) {
  // device_test.go "should be ignored when": no preferred bus, so no disk is virtio.
  for (std::string_view preference : {R"({"devices":{}})", R"({"devices":{"preferredDiskDedicatedIoThread":false}})",
                                      R"({"devices":{"preferredDiskDedicatedIoThread":true}})"}) {
    SCOPED_TRACE(preference);
    const json::Document spec = applied(
        preference, R"({"domain":{"devices":{"disks":[{"name":"a","disk":{}},{"name":"b","disk":{"bus":"scsi"}}]}}})");
    EXPECT_TRUE(
        json_equals(devices_of(spec), R"({"disks":[{"name":"a","disk":{}},{"name":"b","disk":{"bus":"scsi"}}]})"));
  }
}

TEST(PreferenceDevices, DedicatedIoThreadFalseIsAppliedToVirtio) {
  const json::Document spec = applied(R"({"devices":{"preferredDiskDedicatedIoThread":false}})",
                                      R"({"domain":{"devices":{"disks":[{"name":"a","disk":{"bus":"virtio"}}]}}})");
  EXPECT_TRUE(
      json_equals(devices_of(spec), R"({"disks":[{"name":"a","disk":{"bus":"virtio"},"dedicatedIOThread":false}]})"));
}

// interface.go: masquerade only on an interface without binding whose network is a pod network.
TEST(PreferenceDevices, MasqueradeOnPodNetworkInterface) {
  const json::Document spec = applied(R"({"devices":{"preferredInterfaceMasquerade":{}}})",
                                      R"({"domain":{"devices":{"interfaces":[{"name":"primary"},{"name":"secondary"}]}},
          "networks":[{"name":"primary","pod":{}},{"name":"secondary","multus":{"networkName":"net"}}]})");
  EXPECT_TRUE(
      json_equals(devices_of(spec), R"({"interfaces":[{"name":"primary","masquerade":{}},{"name":"secondary"}]})"));
}

TEST(PreferenceDevices, MasqueradeNotOnInterfaceWithAnotherBinding) {
  for (std::string_view binding :
       {R"("sriov":{})", R"("bridge":{})", R"("masquerade":{"x":1})", R"("slirp":{})", R"("macvtap":{})",
        R"("passt":{})", R"("passtBinding":{})", R"("binding":{"name":"plugin"})"}) {
    SCOPED_TRACE(binding);
    const std::string iface = std::string(R"({"name":"primary",)") + std::string(binding) + "}";
    const json::Document spec =
        applied(R"({"devices":{"preferredInterfaceMasquerade":{}}})",
                R"({"domain":{"devices":{"interfaces":[)" + iface + R"(]}},"networks":[{"name":"primary","pod":{}}]})");
    EXPECT_TRUE(json_equals(devices_of(spec), R"({"interfaces":[)" + iface + "]}"));
  }
}

TEST(PreferenceDevices, MasqueradeNotOnInterfaceOffThePodNetwork) {
  for (std::string_view networks : {R"([{"name":"primary"}])", R"([{"name":"other","pod":{}}])", R"([])"}) {
    SCOPED_TRACE(networks);
    const json::Document spec = applied(
        R"({"devices":{"preferredInterfaceMasquerade":{}}})",
        R"({"domain":{"devices":{"interfaces":[{"name":"primary"}]}},"networks":)" + std::string(networks) + "}");
    EXPECT_TRUE(json_equals(devices_of(spec), R"({"interfaces":[{"name":"primary"}]})"));
  }
}

TEST(PreferenceDevices, TpmOnlyWhenUnset) {
  struct Case {
    std::string_view vmi_tpm;  // "" = absent
    std::string_view preferred;
    std::string_view expected;
  };
  // device_test.go "PreferredTPM".
  for (const Case& c : {Case{"", R"({"persistent":true})", R"({"persistent":true})"},
                        Case{R"({"persistent":true})", R"({})", R"({"persistent":true})"},
                        Case{R"({"enabled":false})", R"({})", R"({"enabled":false})"},
                        Case{R"({"enabled":false})", R"({"enabled":true})", R"({"enabled":false})"}}) {
    SCOPED_TRACE(std::string(c.vmi_tpm) + " / " + std::string(c.preferred));
    const std::string devices = c.vmi_tpm.empty() ? "{}" : R"({"tpm":)" + std::string(c.vmi_tpm) + "}";
    const json::Document spec = applied(R"({"devices":{"preferredTPM":)" + std::string(c.preferred) + "}}",
                                        R"({"domain":{"devices":)" + devices + "}}");
    EXPECT_TRUE(json_equals(devices_of(spec), R"({"tpm":)" + std::string(c.expected) + "}"));
  }
}

TEST(PreferenceDevices, PanicDeviceModel) {
  struct Case {
    std::string_view preference;
    std::string_view vmi_devices;
    std::string_view expected;
  };
  // device_test.go "PreferredPanicDeviceModel".
  for (const Case& c : {
           Case{R"({"devices":{}})", R"({"panicDevices":[{"model":"hyperv"}]})",
                R"({"panicDevices":[{"model":"hyperv"}]})"},
           Case{R"({"devices":{"preferredPanicDeviceModel":"hyperv"}})", R"({"panicDevices":[]})",
                R"({"panicDevices":[{"model":"hyperv"}]})"},
           Case{R"({"devices":{"preferredPanicDeviceModel":"hyperv"}})", R"({})",
                R"({"panicDevices":[{"model":"hyperv"}]})"},
           Case{R"({"devices":{"preferredPanicDeviceModel":"isa"}})",
                R"({"panicDevices":[{"model":"hyperv"},{},{"model":""}]})",
                R"({"panicDevices":[{"model":"hyperv"},{"model":"isa"},{"model":""}]})"},
       }) {
    SCOPED_TRACE(std::string(c.preference) + " / " + std::string(c.vmi_devices));
    const json::Document spec = applied(c.preference, R"({"domain":{"devices":)" + std::string(c.vmi_devices) + "}}");
    EXPECT_TRUE(json_equals(devices_of(spec), c.expected));
  }
}

TEST(PreferenceDevices, VideoType) {
  struct Case {
    std::string_view preference;
    std::string_view vmi_devices;
    std::string_view expected;
  };
  // device_test.go "PreferredVideoType".
  for (const Case& c : {
           Case{R"({"devices":{"preferredVideoType":"virtio"}})", R"({"video":{}})", R"({"video":{"type":"virtio"}})"},
           Case{R"({"devices":{"preferredVideoType":"virtio"}})", R"({"video":{"type":"vga"}})",
                R"({"video":{"type":"vga"}})"},
           Case{R"({"devices":{"preferredVideoType":"virtio"}})", R"({})", R"({"video":{"type":"virtio"}})"},
           Case{R"({"devices":{}})", R"({"video":{}})", R"({"video":{}})"},
           Case{R"({"devices":{}})", R"({})", R"({})"},
       }) {
    SCOPED_TRACE(std::string(c.preference) + " / " + std::string(c.vmi_devices));
    const json::Document spec = applied(c.preference, R"({"domain":{"devices":)" + std::string(c.vmi_devices) + "}}");
    EXPECT_TRUE(json_equals(devices_of(spec), c.expected));
  }
}

// v1.8 (device.go at v1.8.2): no preferredVideoType, and the panic device model only fills the
// devices the VM has.
TEST(PreferenceDevices, AtV18NoVideoTypeAndNoPanicDeviceCreated) {
  struct Case {
    std::string_view preference;
    std::string_view vmi_devices;
    std::string_view expected;
  };
  for (const Case& c : {
           Case{R"({"devices":{"preferredVideoType":"virtio"}})", R"({})", R"({})"},
           Case{R"({"devices":{"preferredVideoType":"virtio"}})", R"({"video":{}})", R"({"video":{}})"},
           Case{R"({"devices":{"preferredPanicDeviceModel":"hyperv"}})", R"({})", R"({})"},
           Case{R"({"devices":{"preferredPanicDeviceModel":"hyperv"}})", R"({"panicDevices":[]})",
                R"({"panicDevices":[]})"},
           Case{R"({"devices":{"preferredPanicDeviceModel":"isa"}})", R"({"panicDevices":[{},{"model":"hyperv"}]})",
                R"({"panicDevices":[{"model":"isa"},{"model":"hyperv"}]})"},
       }) {
    SCOPED_TRACE(std::string(c.preference) + " / " + std::string(c.vmi_devices));
    const json::Document spec =
        applied(c.preference, R"({"domain":{"devices":)" + std::string(c.vmi_devices) + "}}", Release::v1_8);
    EXPECT_TRUE(json_equals(devices_of(spec), c.expected));
  }
}

TEST(PreferenceDevices, SoundModelOnlyOnAnExistingSoundDevice) {
  const json::Document without =
      applied(R"({"devices":{"preferredSoundModel":"ac97"}})", R"({"domain":{"devices":{}}})");
  EXPECT_TRUE(json_equals(devices_of(without), R"({})"));
  const json::Document with_model = applied(R"({"devices":{"preferredSoundModel":"ac97"}})",
                                            R"({"domain":{"devices":{"sound":{"name":"s","model":"ich9"}}}})");
  EXPECT_TRUE(json_equals(devices_of(with_model), R"({"sound":{"name":"s","model":"ich9"}})"));
}

TEST(PreferenceDevices, ScalarDeviceFlagsOnlyWhenUnset) {
  const json::Document spec = applied(
      R"({"devices":{"preferredUseVirtioTransitional":true,"preferredBlockMultiQueue":true,
          "preferredNetworkInterfaceMultiQueue":true,"preferredRng":{}}})",
      R"({"domain":{"devices":{"useVirtioTransitional":false,"blockMultiQueue":false,"networkInterfaceMultiqueue":false,
          "rng":{"x":1}}}})");
  EXPECT_TRUE(json_equals(devices_of(spec), R"({"useVirtioTransitional":false,"blockMultiQueue":false,
      "networkInterfaceMultiqueue":false,"rng":{"x":1}})"));
}

// OVERRIDES: disableHotplug is a plain bool in KubeVirt's VMI, so the preference always wins.
TEST(PreferenceDevices, DisableHotplugOverridesTheUserValue) {
  const json::Document to_false =
      applied(R"({"devices":{"preferredDisableHotplug":false}})", R"({"domain":{"devices":{"disableHotplug":true}}})");
  EXPECT_TRUE(json_equals(devices_of(to_false), R"({"disableHotplug":false})"));
  const json::Document to_true =
      applied(R"({"devices":{"preferredDisableHotplug":true}})", R"({"domain":{"devices":{"disableHotplug":false}}})");
  EXPECT_TRUE(json_equals(devices_of(to_true), R"({"disableHotplug":true})"));
  const json::Document unset = applied(R"({"devices":{}})", R"({"domain":{"devices":{"disableHotplug":true}}})");
  EXPECT_TRUE(json_equals(devices_of(unset), R"({"disableHotplug":true})"));
}

// preferredVirtualGPUOptions exists in the API but KubeVirt never applies it.
TEST(PreferenceDevices, VirtualGpuOptionsAreNeverApplied) {
  const json::Document spec = applied(R"({"devices":{"preferredVirtualGPUOptions":{"display":{"enabled":true}}}})",
                                      R"({"domain":{"devices":{"gpus":[{"name":"g","deviceName":"nvidia"}]}}})");
  EXPECT_TRUE(json_equals(devices_of(spec), R"({"gpus":[{"name":"g","deviceName":"nvidia"}]})"));
}

// device_test.go "PreferredAutoAttach should": every one of the five fields, through apply_devices
// and through apply_autoattach alone (the controller's early call).
TEST(PreferenceDevices, AutoattachOnlyWhenUnset) {
  struct Case {
    std::string_view preferred;  // "" = absent
    std::string_view vmi;        // "" = absent
    std::string_view expected;   // "" = absent
  };
  constexpr std::string_view fields[][2] = {
      {"preferredAutoattachGraphicsDevice", "autoattachGraphicsDevice"},
      {"preferredAutoattachMemBalloon", "autoattachMemBalloon"},
      {"preferredAutoattachPodInterface", "autoattachPodInterface"},
      {"preferredAutoattachSerialConsole", "autoattachSerialConsole"},
      {"preferredAutoattachInputDevice", "autoattachInputDevice"},
  };
  for (const auto& field : fields) {
    for (const Case& c :
         {Case{"true", "", "true"}, Case{"false", "", "false"}, Case{"", "", ""}, Case{"", "true", "true"},
          Case{"", "false", "false"}, Case{"true", "false", "false"}, Case{"false", "true", "true"}}) {
      const std::string preference =
          c.preferred.empty() ? R"({"devices":{}})"
                              : R"({"devices":{")" + std::string(field[0]) + R"(":)" + std::string(c.preferred) + "}}";
      const std::string vmi =
          c.vmi.empty() ? R"({"domain":{"devices":{}}})"
                        : R"({"domain":{"devices":{")" + std::string(field[1]) + R"(":)" + std::string(c.vmi) + "}}}";
      const std::string expected =
          c.expected.empty() ? "{}" : R"({")" + std::string(field[1]) + R"(":)" + std::string(c.expected) + "}";
      SCOPED_TRACE(preference + " on " + vmi);
      EXPECT_TRUE(json_equals(devices_of(applied(preference, vmi)), expected));

      const json::Document preference_doc = parse(preference);
      json::Document early = parse(vmi);
      apply_autoattach(preference_doc, early, early.GetAllocator());
      EXPECT_TRUE(json_equals(devices_of(early), expected));
    }
  }
}

TEST(PreferenceDevices, NoDevicePreferencesLeaveTheSpecAlone) {
  const json::Document spec = applied(R"({"features":{}})", R"({"domain":{"devices":{"disks":[{"name":"d"}]}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"devices":{"disks":[{"name":"d"}]}}})"));
}

}  // namespace
}  // namespace vmgate::admission::preference
