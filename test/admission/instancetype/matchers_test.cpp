// Tests of admission/src/instancetype/matchers.cpp: matcher shape and update rules of the VM
// mutating webhook (KubeVirt pkg/instancetype/webhooks/vm/mutator.go; cases from
// pkg/virt-api/webhooks/mutating-webhook/mutators/vm-mutator_test.go).
#include "vmgate/admission/instancetype/matchers.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::instancetype {
namespace {

using vmgate::testing::parse;

ErrorList validate(std::string_view vm) {
  return validate_matchers(parse(vm));
}

ErrorList validate_update(std::string_view vm, std::string_view old_vm) {
  return validate_matcher_update(parse(vm), parse(old_vm));
}

struct Case {
  std::string name;
  std::string_view vm;
  CauseType type;
  std::string field;
  std::string message;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.name;
}

class InstancetypeMatchersInvalid : public ::testing::TestWithParam<Case> {};

// vm-mutator_test.go "should fail if": exactly one cause each.
TEST_P(InstancetypeMatchersInvalid, OneCause) {
  const Case& c = GetParam();
  const ErrorList causes = validate(c.vm);
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].type, c.type);
  EXPECT_EQ(causes[0].field, c.field);
  EXPECT_EQ(causes[0].message, c.message);
}

INSTANTIATE_TEST_SUITE_P(
    InstancetypeMatchers, InstancetypeMatchersInvalid,
    ::testing::Values(
        Case{"InstancetypeWithoutNameOrInference", R"({"spec":{"instancetype":{}}})", CauseType::field_value_not_found,
             "spec.instancetype", "Either Name or InferFromVolume should be provided within the InstancetypeMatcher"},
        Case{"InstancetypeNameAndInference", R"({"spec":{"instancetype":{"name":"foo","inferFromVolume":"bar"}}})",
             CauseType::field_value_not_supported, "spec.instancetype.name",
             "Name already set, should be cleared before setting inferFromVolume"},
        Case{"InstancetypeKindAndInference", R"({"spec":{"instancetype":{"kind":"foo","inferFromVolume":"bar"}}})",
             CauseType::field_value_not_supported, "spec.instancetype.kind",
             "Kind already set, should be cleared before setting inferFromVolume"},
        Case{"InstancetypeInvalidPolicy",
             R"({"spec":{"instancetype":{"inferFromVolume":"bar","inferFromVolumeFailurePolicy":"not-valid"}}})",
             CauseType::field_value_invalid, "spec.instancetype.inferFromVolumeFailurePolicy",
             "Invalid value 'not-valid' for InferFromVolumeFailurePolicy"},
        Case{"PreferenceWithoutNameOrInference", R"({"spec":{"preference":{}}})", CauseType::field_value_not_found,
             "spec.preference", "Either Name or InferFromVolume should be provided within the PreferenceMatcher"},
        Case{"PreferenceNameAndInference", R"({"spec":{"preference":{"name":"foo","inferFromVolume":"bar"}}})",
             CauseType::field_value_not_supported, "spec.preference.name",
             "Name already set, should be cleared before setting inferFromVolume"},
        Case{"PreferenceKindAndInference", R"({"spec":{"preference":{"kind":"foo","inferFromVolume":"bar"}}})",
             CauseType::field_value_not_supported, "spec.preference.kind",
             "Kind already set, should be cleared before setting inferFromVolume"},
        Case{"PreferenceInvalidPolicy",
             R"({"spec":{"preference":{"inferFromVolume":"bar","inferFromVolumeFailurePolicy":"not-valid"}}})",
             CauseType::field_value_invalid, "spec.preference.inferFromVolumeFailurePolicy",
             "Invalid value 'not-valid' for InferFromVolumeFailurePolicy"},
        // A policy that is case-wrong is just as invalid.
        Case{"PolicyIsCaseSensitive",
             R"({"spec":{"instancetype":{"name":"x","inferFromVolumeFailurePolicy":"ignore"}}})",
             CauseType::field_value_invalid, "spec.instancetype.inferFromVolumeFailurePolicy",
             "Invalid value 'ignore' for InferFromVolumeFailurePolicy"}),
    [](const ::testing::TestParamInfo<Case>& case_info) { return case_info.param.name; });

TEST(InstancetypeMatchersValid, AcceptedMatchers) {
  // vm-mutator_test.go "should admit valid values to InferFromVolumePolicy", and plain matchers.
  for (std::string_view vm : {
           R"({"spec":{}})",
           R"({"spec":{"instancetype":{"name":"bar","inferFromVolumeFailurePolicy":"Ignore"}}})",
           R"({"spec":{"instancetype":{"name":"bar","inferFromVolumeFailurePolicy":"Reject"}}})",
           R"({"spec":{"preference":{"name":"bar","inferFromVolumeFailurePolicy":"Ignore"}}})",
           R"({"spec":{"preference":{"name":"bar","inferFromVolumeFailurePolicy":"Reject"}}})",
           R"({"spec":{"instancetype":{"name":"u1.small","kind":"VirtualMachineClusterInstancetype","revisionName":"r"},
               "preference":{"inferFromVolume":"root","inferFromVolumeFailurePolicy":"Ignore"}}})",
           R"({"spec":{"instancetype":null,"preference":null}})",
       }) {
    SCOPED_TRACE(vm);
    const ErrorList causes = validate(vm);
    EXPECT_TRUE(causes.empty()) << causes.front().message;
  }
}

TEST(InstancetypeMatchersValid, AllCausesOfOneMatcherAreReported) {
  const ErrorList causes = validate(
      R"({"spec":{"instancetype":{"name":"a","kind":"b","inferFromVolume":"c","inferFromVolumeFailurePolicy":"d"}}})");
  ASSERT_EQ(causes.size(), 3U);
  EXPECT_EQ(causes[0].field, "spec.instancetype.name");
  EXPECT_EQ(causes[1].field, "spec.instancetype.kind");
  EXPECT_EQ(causes[2].field, "spec.instancetype.inferFromVolumeFailurePolicy");
}

// mutator.go answers the instancetype matcher's causes before looking at the preference.
TEST(InstancetypeMatchersValid, InstancetypeCausesComeAlone) {
  const ErrorList causes = validate(R"({"spec":{"instancetype":{},"preference":{}}})");
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].field, "spec.instancetype");
  const ErrorList preference_only = validate(R"({"spec":{"instancetype":{"name":"x"},"preference":{}}})");
  ASSERT_EQ(preference_only.size(), 1U);
  EXPECT_EQ(preference_only[0].field, "spec.preference");
}

// ---- UPDATE (vm-mutator_test.go "of InstancetypeMatcher" / "of PreferenceMatcher") ----

struct UpdateCase {
  std::string name;
  std::string_view old_matcher;  // "" = none
  std::string_view new_matcher;  // "" = none
  bool rejected;
};

void PrintTo(const UpdateCase& c, std::ostream* out) {
  *out << c.name;
}

class InstancetypeMatchersUpdate : public ::testing::TestWithParam<UpdateCase> {};

std::string vm_with(std::string_view key, std::string_view matcher) {
  return matcher.empty() ? R"({"spec":{}})"
                         : R"({"spec":{")" + std::string(key) + R"(":)" + std::string(matcher) + "}}";
}

TEST_P(InstancetypeMatchersUpdate, Instancetype) {
  const UpdateCase& c = GetParam();
  const ErrorList causes =
      validate_update(vm_with("instancetype", c.new_matcher), vm_with("instancetype", c.old_matcher));
  if (!c.rejected) {
    EXPECT_TRUE(causes.empty()) << causes.front().message;
    return;
  }
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].type, CauseType::field_value_invalid);
  EXPECT_EQ(causes[0].field, "spec.instancetype.revisionName");
  EXPECT_EQ(causes[0].message, "the Matcher Name has been updated without updating the RevisionName");
}

TEST_P(InstancetypeMatchersUpdate, Preference) {
  const UpdateCase& c = GetParam();
  const ErrorList causes = validate_update(vm_with("preference", c.new_matcher), vm_with("preference", c.old_matcher));
  if (!c.rejected) {
    EXPECT_TRUE(causes.empty()) << causes.front().message;
    return;
  }
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].type, CauseType::field_value_invalid);
  EXPECT_EQ(causes[0].field, "spec.preference.revisionName");
  EXPECT_EQ(causes[0].message, "the Matcher Name has been updated without updating the RevisionName");
}

INSTANTIATE_TEST_SUITE_P(
    InstancetypeMatchers, InstancetypeMatchersUpdate,
    ::testing::Values(
        UpdateCase{"WithoutChanges", R"({"name":"foo","revisionName":"cr","kind":"virtualmachineclusterinstancetype"})",
                   R"({"name":"foo","revisionName":"cr","kind":"virtualmachineclusterinstancetype"})", false},
        UpdateCase{"NameAndClearedRevisionName", R"({"name":"foo","revisionName":"cr"})", R"({"name":"bar"})", false},
        UpdateCase{"NameAndRevisionName", R"({"name":"foo","revisionName":"cr"})",
                   R"({"name":"bar","revisionName":"bar"})", false},
        UpdateCase{"RevisionNameOnly", R"({"name":"foo","revisionName":"cr"})",
                   R"({"name":"foo","revisionName":"foo"})", false},
        UpdateCase{"IntroducingMatcher", "", R"({"name":"foo","revisionName":"foo"})", false},
        UpdateCase{"RemovingMatcher", R"({"name":"foo","revisionName":"cr"})", "", false},
        UpdateCase{"OldWithoutRevisionName", R"({"name":"foo"})", R"({"name":"bar"})", false},
        UpdateCase{"NameWithoutClearingRevisionName", R"({"name":"foo","revisionName":"cr"})",
                   R"({"name":"bar","revisionName":"cr"})", true},
        UpdateCase{"KindChangeKeepsNameAndRevision", R"({"name":"foo","revisionName":"cr"})",
                   R"({"name":"foo","kind":"VirtualMachineInstancetype","revisionName":"cr"})", false}),
    [](const ::testing::TestParamInfo<UpdateCase>& case_info) { return case_info.param.name; });

TEST(InstancetypeMatchersValid, UpdateReportsTheInstancetypeFirst) {
  const ErrorList causes = validate_update(
      R"({"spec":{"instancetype":{"name":"b","revisionName":"r"},"preference":{"name":"b","revisionName":"p"}}})",
      R"({"spec":{"instancetype":{"name":"a","revisionName":"r"},"preference":{"name":"a","revisionName":"p"}}})");
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].field, "spec.instancetype.revisionName");
}

}  // namespace
}  // namespace vmgate::admission::instancetype
