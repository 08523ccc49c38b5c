// Tests of the per-architecture VMI defaults (pkg/defaults/amd64.go, arm64.go, s390x.go): disk
// buses, watchdog actions, and arm64's EFI and host-passthrough (defaults_test.go "Arm64 bootloader").
#include <gtest/gtest.h>

#include <string>

#include "support/json_test_support.hpp"
#include "vmgate/admission/defaults/vmi.hpp"

// After json.hpp, which must define RAPIDJSON_ASSERT before any RapidJSON header.
#include <rapidjson/pointer.h>

namespace vmgate::admission::defaults {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::text;

json::Document defaulted(std::string_view spec_text, Release release = Release::main) {
  json::Document spec = parse(spec_text);
  set_arch_defaults(spec, spec.GetAllocator(), release);
  return spec;
}

std::string with_disks(std::string_view arch) {
  return R"({"architecture": ")" + std::string(arch) + R"(", "domain": {"devices": {"disks": [
      {"name": "a", "disk": {}}, {"name": "b", "cdrom": {"readonly": true}}, {"name": "c", "lun": {}},
      {"name": "d", "disk": {"bus": "scsi"}}, {"name": "e"}]}}})";
}

TEST(DefaultsArch, Amd64DisksDefaultToSata) {
  const json::Document spec = defaulted(with_disks("amd64"));
  EXPECT_EQ(text(spec, "/domain/devices/disks"),
            R"([{"name":"a","disk":{"bus":"sata"}},{"name":"b","cdrom":{"readonly":true,"bus":"sata"}},)"
            R"({"name":"c","lun":{"bus":"sata"}},{"name":"d","disk":{"bus":"scsi"}},{"name":"e"}])");
}

TEST(DefaultsArch, EmptyOrUnknownArchitectureTakesTheAmd64Path) {
  EXPECT_EQ(text(defaulted(with_disks("")), "/domain/devices/disks/0/disk/bus"), "sata");
  EXPECT_EQ(text(defaulted(with_disks("ppc64le")), "/domain/devices/disks/0/disk/bus"), "sata");
}

TEST(DefaultsArch, Arm64AndS390xDisksDefaultToVirtio) {
  for (std::string_view arch : {"arm64", "s390x"}) {
    const json::Document spec = defaulted(with_disks(arch));
    EXPECT_EQ(text(spec, "/domain/devices/disks/0/disk/bus"), "virtio") << arch;
    EXPECT_EQ(text(spec, "/domain/devices/disks/1/cdrom/bus"), "virtio") << arch;
    EXPECT_EQ(text(spec, "/domain/devices/disks/2/lun/bus"), "virtio") << arch;
    EXPECT_EQ(text(spec, "/domain/devices/disks/3/disk/bus"), "scsi") << arch;
  }
}

TEST(DefaultsArch, Amd64Watchdog) {
  EXPECT_EQ(text(defaulted(R"({"architecture": "amd64", "domain": {"devices": {"watchdog": {"name": "w"}}}})"),
                 "/domain/devices/watchdog"),
            R"({"name":"w","i6300esb":{"action":"reset"}})");
  EXPECT_EQ(text(defaulted(R"({"architecture": "amd64", "domain": {"devices": {"watchdog": {"name": "w",
                 "i6300esb": {"action": "poweroff"}}}}})"),
                 "/domain/devices/watchdog/i6300esb/action"),
            "poweroff");
  EXPECT_EQ(text(defaulted(R"({"architecture": "amd64"})"), "/domain"), "<absent>");
}

TEST(DefaultsArch, S390xWatchdog) {
  // pkg/defaults/s390x.go SetS390xWatchdog
  EXPECT_EQ(text(defaulted(R"({"architecture": "s390x", "domain": {"devices": {"watchdog": {"name": "w"}}}})"),
                 "/domain/devices/watchdog"),
            R"({"name":"w","diag288":{"action":"reset"}})");
  EXPECT_EQ(text(defaulted(R"({"architecture": "s390x", "domain": {"devices": {"watchdog": {"name": "w",
                 "diag288": {"action": "shutdown"}}}}})"),
                 "/domain/devices/watchdog/diag288/action"),
            "shutdown");
}

TEST(DefaultsArch, Arm64GetsHostPassthroughUnlessAModelIsSet) {
  EXPECT_EQ(text(defaulted(R"({"architecture": "arm64"})"), "/domain/cpu/model"), "host-passthrough");
  EXPECT_EQ(
      text(defaulted(R"({"architecture": "arm64", "domain": {"cpu": {"model": "cortex-a57"}}})"), "/domain/cpu/model"),
      "cortex-a57");
  EXPECT_EQ(text(defaulted(R"({"architecture": "amd64"})"), "/domain/cpu"), "<absent>");
}

TEST(DefaultsArch, Arm64Bootloader) {
  // defaults_test.go "should correctly default SecureBoot"
  EXPECT_EQ(text(defaulted(R"({"architecture": "arm64"})"), "/domain/firmware"),
            R"({"bootloader":{"efi":{"secureBoot":false}}})");
  EXPECT_EQ(
      text(defaulted(
               R"({"architecture": "arm64", "domain": {"firmware": {"bootloader": {"efi": {"secureBoot": true}}}}})"),
           "/domain/firmware/bootloader"),
      R"({"efi":{"secureBoot":true}})");
  EXPECT_EQ(
      text(defaulted(
               R"({"architecture": "arm64", "domain": {"firmware": {"bootloader": {"efi": {"secureBoot": false}}}}})"),
           "/domain/firmware/bootloader"),
      R"({"efi":{"secureBoot":false}})");
  // A bootloader without EFI (here empty) is left alone: no EFI, no secureBoot.
  EXPECT_EQ(text(defaulted(R"({"architecture": "arm64", "domain": {"firmware": {"bootloader": {}}}})"),
                 "/domain/firmware/bootloader"),
            "{}");
  EXPECT_EQ(text(defaulted(R"({"architecture": "arm64", "domain": {"firmware": {"bootloader": {"bios": {}}}}})"),
                 "/domain/firmware/bootloader"),
            R"({"bios":{}})");
  EXPECT_EQ(text(defaulted(R"({"architecture": "arm64", "domain": {"firmware": {"bootloader": {"efi": {}}}}})"),
                 "/domain/firmware/bootloader"),
            R"({"efi":{"secureBoot":false}})");
  // A firmware without bootloader gets one, keeping its other fields.
  EXPECT_EQ(text(defaulted(R"({"architecture": "arm64", "domain": {"firmware": {"uuid": "u"}}})"), "/domain/firmware"),
            R"({"uuid":"u","bootloader":{"efi":{"secureBoot":false}}})");
}

// pkg/defaults/arm64.go at v1.8.2: secureBoot false only on the EFI bootloader it creates.
TEST(DefaultsArch, Arm64BootloaderAtV18LeavesAGivenEfiAlone) {
  EXPECT_EQ(text(defaulted(R"({"architecture": "arm64"})", Release::v1_8), "/domain/firmware"),
            R"({"bootloader":{"efi":{"secureBoot":false}}})");
  const json::Document given = defaulted(
      R"({"architecture": "arm64", "domain": {"firmware": {"bootloader": {"efi": {}}}, "devices": {"disks": [
          {"name": "a", "disk": {}}]}}})",
      Release::v1_8);
  EXPECT_EQ(text(given, "/domain/firmware/bootloader"), R"({"efi":{}})");
  EXPECT_EQ(text(given, "/domain/devices/disks/0/disk/bus"), "virtio");
  EXPECT_EQ(text(given, "/domain/cpu/model"), "host-passthrough");
}

TEST(DefaultsArch, OtherArchitecturesGetNoBootloader) {
  EXPECT_EQ(text(defaulted(R"({"architecture": "amd64"})"), "/domain/firmware"), "<absent>");
  EXPECT_EQ(text(defaulted(R"({"architecture": "s390x"})"), "/domain/firmware"), "<absent>");
}

}  // namespace
}  // namespace vmgate::admission::defaults
