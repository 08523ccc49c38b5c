// Tests of admission/src/preference/apply.cpp: the whole preference in KubeVirt's fixed order
// (pkg/instancetype/preference/apply/vmi.go). Additions are appended to their object, so the member
// order of the result shows the order the appliers ran in.
#include "vmgate/admission/preference/apply.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::preference {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

std::string canonical(std::string_view text) {
  return dump(parse(text));
}

// {"metadata":..., "spec":...} after preference::apply.
json::Document applied(std::string_view preference, std::string_view vmi) {
  const json::Document preference_doc = parse(preference);
  json::Document doc = parse(vmi);
  apply(preference_doc, *json::find(doc, "spec"), *json::find(doc, "metadata"), doc.GetAllocator());
  return doc;
}

constexpr std::string_view every_preference = R"({
  "annotations":{"preferred":"yes"},
  "preferredLaunchSecurity":{"sev":{}},
  "preferredArchitecture":"amd64",
  "preferredTerminationGracePeriodSeconds":30,
  "preferredSubdomain":"sub",
  "clock":{"preferredTimer":{"hpet":{}}},
  "machine":{"preferredMachineType":"q35"},
  "firmware":{"preferredUseBios":true},
  "features":{"preferredSmm":{}},
  "devices":{"preferredAutoattachSerialConsole":false},
  "cpu":{"preferredCPUFeatures":[{"name":"vmx"}]}
})";

TEST(PreferenceApply, RunsTheAppliersInKubeVirtsOrder) {
  const json::Document doc = applied(every_preference, R"({"metadata":{},"spec":{"domain":{}}})");
  EXPECT_EQ(dump(doc), canonical(R"({
    "metadata":{"annotations":{"preferred":"yes"}},
    "spec":{
      "domain":{
        "cpu":{"features":[{"name":"vmx"}]},
        "devices":{"autoattachSerialConsole":false},
        "features":{"smm":{}},
        "firmware":{"bootloader":{"bios":{}}},
        "machine":{"type":"q35"},
        "clock":{"timer":{"hpet":{}}},
        "launchSecurity":{"sev":{}}
      },
      "subdomain":"sub",
      "terminationGracePeriodSeconds":30,
      "architecture":"amd64"
    }})"));
}

TEST(PreferenceApply, UserValuesWinEverywhereExceptTheOverrides) {
  const json::Document doc = applied(R"({
      "annotations":{"a":"preferred","b":"preferred"},
      "preferredArchitecture":"arm64","preferredSubdomain":"sub","preferredTerminationGracePeriodSeconds":30,
      "machine":{"preferredMachineType":"virt"},
      "features":{"preferredAcpi":{"enabled":true},"preferredSmm":{"enabled":true}},
      "devices":{"preferredDisableHotplug":true,"preferredDiskBus":"virtio"}})",
                                     R"({"metadata":{"annotations":{"a":"mine"}},"spec":{
      "architecture":"amd64","subdomain":"mine","terminationGracePeriodSeconds":0,
      "domain":{"machine":{"type":"q35"},"features":{"acpi":{"enabled":false},"smm":{"enabled":false}},
                "devices":{"disableHotplug":false,"disks":[{"name":"d","disk":{"bus":"sata"}}]}}}})");
  EXPECT_EQ(dump(doc), canonical(R"({"metadata":{"annotations":{"a":"mine","b":"preferred"}},"spec":{
      "architecture":"amd64","subdomain":"mine","terminationGracePeriodSeconds":0,
      "domain":{"machine":{"type":"q35"},"features":{"acpi":{"enabled":true},"smm":{"enabled":false}},
                "devices":{"disableHotplug":true,"disks":[{"name":"d","disk":{"bus":"sata"}}]}}}})"));
}

TEST(PreferenceApply, EmptyPreferenceChangesNothing) {
  constexpr std::string_view vmi = R"({"metadata":{"labels":{"x":"y"}},"spec":{"domain":{"devices":{}}}})";
  EXPECT_EQ(dump(applied(R"({})", vmi)), canonical(vmi));
}

TEST(PreferenceApply, NonObjectPreferenceOrSpecIsIgnored) {
  constexpr std::string_view vmi = R"({"metadata":{},"spec":{"domain":{}}})";
  EXPECT_EQ(dump(applied(R"(null)", vmi)), canonical(vmi));
  EXPECT_EQ(dump(applied(R"([])", vmi)), canonical(vmi));
  EXPECT_EQ(dump(applied(every_preference, R"({"metadata":{},"spec":null})")),
            canonical(R"({"metadata":{},"spec":null})"));
}

TEST(PreferenceApply, ApplyingTwiceChangesNothingMore) {
  const json::Document once = applied(every_preference, R"({"metadata":{},"spec":{"domain":{}}})");
  const json::Document twice = applied(every_preference, dump(once));
  EXPECT_EQ(dump(twice), dump(once));
}

}  // namespace
}  // namespace vmgate::admission::preference
