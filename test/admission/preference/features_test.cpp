// Tests of admission/src/preference/features.cpp (KubeVirt pkg/instancetype/preference/apply/
// features.go; cases from features_test.go).
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
                                         json::Allocator& allocator) { apply_features(p, spec, allocator, release); },
                               preference, vmi_spec);
}

constexpr std::string_view full_hyperv = R"({
    "relaxed":{},"vapic":{},"spinlocks":{"enabled":true,"spinlocks":32},"vpindex":{},"runtime":{},"synic":{},
    "synictimer":{"enabled":true,"direct":{}},"reset":{},"vendorid":{"enabled":true,"vendorid":"1234"},
    "frequencies":{},"reenlightenment":{},"tlbflush":{},"ipi":{},"evmcs":{}})";

std::string full_preference() {
  return R"({"features":{"preferredAcpi":{},"preferredApic":{"enabled":true,"endOfInterrupt":false},
      "preferredHyperv":)" +
         std::string(full_hyperv) + R"(,"preferredKvm":{"hidden":true},"preferredPvspinlock":{},"preferredSmm":{}}})";
}

// features_test.go "should apply to VMI".
TEST(PreferenceFeatures, AppliesEveryFeatureToAVmiWithout) {
  const json::Document spec = applied(full_preference(), R"({"domain":{}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"features":{"acpi":{},"apic":{"enabled":true,"endOfInterrupt":false},
      "hyperv":)" + std::string(full_hyperv) +
                                    R"(,"kvm":{"hidden":true},"pvspinlock":{},"smm":{}}}})"));
}

// v1.7.0's tlbflush is a FeatureState: a preference's direct and extended are lost in decoding;
// a tlbflush the VMI has is kept as it is.
TEST(PreferenceFeatures, AtV17PreferredTlbflushKeepsOnlyEnabled) {
  constexpr std::string_view preference =
      R"({"features":{"preferredHyperv":{"tlbflush":{"enabled":true,"direct":{},"extended":{}}}}})";
  EXPECT_TRUE(json_equals(applied(preference, R"({"domain":{}})", Release::v1_7),
                          R"({"domain":{"features":{"hyperv":{"tlbflush":{"enabled":true}}}}})"));
  EXPECT_TRUE(
      json_equals(applied(preference, R"({"domain":{}})", Release::v1_8),
                  R"({"domain":{"features":{"hyperv":{"tlbflush":{"enabled":true,"direct":{},"extended":{}}}}}})"));
}

// features_test.go "should apply when some HyperV features already defined in the VMI".
TEST(PreferenceFeatures, HypervIsAppliedPerSubFeature) {
  const json::Document spec =
      applied(full_preference(), R"({"domain":{"features":{"hyperv":{"evmcs":{"enabled":false}}}}})");
  const json::Value* hyperv = json::find_path(spec, {"domain", "features", "hyperv"});
  ASSERT_NE(hyperv, nullptr);
  EXPECT_TRUE(json_equals(*json::find(*hyperv, "evmcs"), R"({"enabled":false})"));
  EXPECT_TRUE(json_equals(*json::find(*hyperv, "relaxed"), R"({})"));
  EXPECT_TRUE(json_equals(*json::find(*hyperv, "vendorid"), R"({"enabled":true,"vendorid":"1234"})"));
  EXPECT_EQ(hyperv->MemberCount(), 14U);
}

TEST(PreferenceFeatures, UserFeaturesAreKept) {
  const json::Document spec = applied(full_preference(), R"({"domain":{"features":{
      "apic":{"enabled":false},"kvm":{"hidden":false},"pvspinlock":{"enabled":false},"smm":{"enabled":false}}}})");
  const json::Value& features = *json::find_path(spec, {"domain", "features"});
  EXPECT_TRUE(json_equals(*json::find(features, "apic"), R"({"enabled":false})"));
  EXPECT_TRUE(json_equals(*json::find(features, "kvm"), R"({"hidden":false})"));
  EXPECT_TRUE(json_equals(*json::find(features, "pvspinlock"), R"({"enabled":false})"));
  EXPECT_TRUE(json_equals(*json::find(features, "smm"), R"({"enabled":false})"));
}

// OVERRIDES: features.acpi is a non-pointer FeatureState in KubeVirt, so the preference replaces it.
TEST(PreferenceFeatures, AcpiOverridesTheUserValue) {
  const json::Document spec = applied(R"({"features":{"preferredAcpi":{"enabled":true}}})",
                                      R"({"domain":{"features":{"acpi":{"enabled":false}}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"features":{"acpi":{"enabled":true}}}})"));
}

TEST(PreferenceFeatures, NoPreferredAcpiKeepsTheUserValue) {
  const json::Document spec =
      applied(R"({"features":{"preferredSmm":{}}})", R"({"domain":{"features":{"acpi":{"enabled":false}}}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"features":{"acpi":{"enabled":false},"smm":{}}}})"));
}

TEST(PreferenceFeatures, EmptyFeaturePreferencesStillCreateFeatures) {
  // features.go creates domain.features as soon as the preference has a features block.
  const json::Document spec = applied(R"({"features":{}})", R"({"domain":{}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{"features":{}}})"));
}

TEST(PreferenceFeatures, NoFeaturePreferencesLeaveTheSpecAlone) {
  const json::Document spec = applied(R"({"devices":{}})", R"({"domain":{}})");
  EXPECT_TRUE(json_equals(spec, R"({"domain":{}})"));
}

}  // namespace
}  // namespace vmgate::admission::preference
