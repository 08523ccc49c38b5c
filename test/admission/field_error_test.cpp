// Tests of field_error.hpp: cause type names, field paths as Kubernetes prints them, and the
// verdicts of KubeVirt's ToAdmissionResponse (422 Invalid, at most 10 causes, then
// ", and N more validation errors") and ToAdmissionResponseError (400, message only).
#include "vmgate/admission/field_error.hpp"

#include <gtest/gtest.h>

#include <string>

namespace vmgate::admission {
namespace {

ErrorList numbered_causes(std::size_t count) {
  ErrorList causes;
  for (std::size_t i = 0; i < count; ++i) {
    causes.push_back({CauseType::field_value_invalid, "spec.f" + std::to_string(i), "m" + std::to_string(i)});
  }
  return causes;
}

TEST(VerdictCauseType, KubernetesNames) {
  EXPECT_EQ(to_string(CauseType::field_value_invalid), "FieldValueInvalid");
  EXPECT_EQ(to_string(CauseType::field_value_not_found), "FieldValueNotFound");
  EXPECT_EQ(to_string(CauseType::field_value_not_supported), "FieldValueNotSupported");
  EXPECT_EQ(to_string(CauseType::field_value_required), "FieldValueRequired");
  EXPECT_EQ(to_string(CauseType::field_value_duplicate), "FieldValueDuplicate");
  EXPECT_EQ(to_string(CauseType::field_value_forbidden), "FieldValueForbidden");
  EXPECT_EQ(to_string(CauseType::unexpected_server_response), "UnexpectedServerResponse");
}

TEST(VerdictFieldPath, PrintsLikeKubernetes) {
  const FieldPath spec("spec");
  EXPECT_EQ(spec.child("template").child("spec").str(), "spec.template.spec");
  EXPECT_EQ(spec.child("domain").child("devices").child("disks").index(3).child("name").str(),
            "spec.domain.devices.disks[3].name");
  EXPECT_EQ(spec.child("annotations").key("kubevirt.io/foo").str(), "spec.annotations[kubevirt.io/foo]");
  EXPECT_EQ(FieldPath().child("spec").str(), "spec");
  EXPECT_EQ(FieldPath().str(), "");
}

TEST(VerdictInvalid, JoinsCauseMessages) {
  const Verdict verdict = Verdict::invalid(
      {{CauseType::field_value_invalid, "spec.a", "first"}, {CauseType::field_value_required, "", "second"}});
  EXPECT_FALSE(verdict.allowed);
  EXPECT_EQ(verdict.code, 422);
  EXPECT_EQ(verdict.reason, "Invalid");
  EXPECT_EQ(verdict.message, "first, second");
  ASSERT_EQ(verdict.causes.size(), 2U);
  EXPECT_EQ(verdict.causes[1], (FieldError{CauseType::field_value_required, "", "second"}));
  EXPECT_TRUE(verdict.warnings.empty());
}

TEST(VerdictInvalid, TenCausesAreShownInFull) {
  const Verdict verdict = Verdict::invalid(numbered_causes(10));
  EXPECT_EQ(verdict.message, "m0, m1, m2, m3, m4, m5, m6, m7, m8, m9");
  EXPECT_EQ(verdict.causes.size(), 10U);
}

TEST(VerdictInvalid, MoreThanTenCausesAreCut) {
  const Verdict eleven = Verdict::invalid(numbered_causes(11));
  EXPECT_EQ(eleven.message, "m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, and 1 more validation errors");
  ASSERT_EQ(eleven.causes.size(), 10U);
  EXPECT_EQ(eleven.causes.back().field, "spec.f9");

  const Verdict many = Verdict::invalid(numbered_causes(25));
  EXPECT_EQ(many.message, "m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, and 15 more validation errors");
  EXPECT_EQ(many.causes.size(), 10U);
}

TEST(VerdictInvalid, SingleCause) {
  const Verdict verdict =
      Verdict::invalid({{CauseType::field_value_invalid, "spec.template", "missing virtual machine template."}});
  EXPECT_EQ(verdict.message, "missing virtual machine template.");
}

TEST(VerdictBadRequest, MessageOnly) {
  const Verdict verdict = Verdict::bad_request("slirp interface is deprecated as of v1.3");
  EXPECT_FALSE(verdict.allowed);
  EXPECT_EQ(verdict.code, 400);
  EXPECT_EQ(verdict.reason, "");
  EXPECT_EQ(verdict.message, "slirp interface is deprecated as of v1.3");
  EXPECT_TRUE(verdict.causes.empty());
}

TEST(VerdictAllow, AllowedWithNothingElse) {
  const Verdict verdict = Verdict::allow();
  EXPECT_TRUE(verdict.allowed);
  EXPECT_EQ(verdict.code, 200);
  EXPECT_EQ(verdict.message, "");
  EXPECT_TRUE(verdict.causes.empty());
}

}  // namespace
}  // namespace vmgate::admission
