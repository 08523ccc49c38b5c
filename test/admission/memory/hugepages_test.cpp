// Tests of validateHugepagesMemoryRequests (vmi-create-admitter.go), with the cases of
// vmi-create-admitter_test.go: the page size must parse; the VM memory (requests.memory, else
// memory.guest, else limits.memory) must be at least one page and a multiple of it; the messages
// and the field always name resources.requests.memory, printing '0' when it is unset.
#include "vmgate/admission/memory/hugepages.hpp"

#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"

namespace vmgate::admission::hugepages {
namespace {

using vmgate::testing::parse;

using vmgate::testing::describe;

std::string check(std::string_view domain, std::string_view path = "spec") {
  return describe(validate(parse(R"({"domain": )" + std::string(domain) + "}"), FieldPath(std::string(path))));
}

TEST(HugepagesValidate, UnparseablePageSize) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "64Mi"}}, "memory": {"hugepages": {"pageSize": "2ab"}}})"),
            "FieldValueInvalid spec.domain.memory.hugepages.pageSize: spec.domain.memory.hugepages.pageSize '2ab': "
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n");
  // An empty page size does not parse either.
  EXPECT_EQ(check(R"({"memory": {"hugepages": {}}})"),
            "FieldValueInvalid spec.domain.memory.hugepages.pageSize: spec.domain.memory.hugepages.pageSize '': "
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n");
}

// v1.7.0 names the page size spec.domain.hugepages.size, in the messages and the format error's field.
TEST(HugepagesValidate, AtV17ThePageSizeIsCalledHugepagesSize) {
  const auto v17 = [](std::string_view domain) {
    return describe(validate(parse(R"({"domain": )" + std::string(domain) + "}"), FieldPath("spec"), Release::v1_7));
  };
  EXPECT_EQ(v17(R"({"memory": {"hugepages": {"pageSize": "2ab"}}})"),
            "FieldValueInvalid spec.domain.hugepages.size: spec.domain.hugepages.size '2ab': "
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n");
  EXPECT_EQ(
      v17(R"({"resources": {"requests": {"memory": "64Mi"}}, "memory": {"hugepages": {"pageSize": "1Gi"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '64Mi' must "
      "be equal to or larger than page size spec.domain.hugepages.size '1Gi'\n");
  EXPECT_EQ(
      v17(R"({"resources": {"requests": {"memory": "3G"}}, "memory": {"hugepages": {"pageSize": "2Mi"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '3G' is not "
      "a multiple of the page size spec.domain.hugepages.size '2Mi'\n");
}

TEST(HugepagesValidate, PageLargerThanRequestedMemory) {
  EXPECT_EQ(
      check(R"({"resources": {"requests": {"memory": "64Mi"}}, "memory": {"hugepages": {"pageSize": "1Gi"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '64Mi' must "
      "be equal to or larger than page size spec.domain.memory.hugepages.pageSize '1Gi'\n");
}

TEST(HugepagesValidate, PageLargerThanGuestMemoryStillNamesRequestsWithZero) {
  // vmi-create-admitter_test.go "should reject greater hugepages.size than guest memory"
  EXPECT_EQ(
      check(R"({"memory": {"guest": "64Mi", "hugepages": {"pageSize": "1Gi"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '0' must be "
      "equal to or larger than page size spec.domain.memory.hugepages.pageSize '1Gi'\n");
}

TEST(HugepagesValidate, PageLargerThanMemoryLimit) {
  EXPECT_EQ(
      check(R"({"resources": {"limits": {"memory": "64Mi"}}, "memory": {"hugepages": {"pageSize": "1Gi"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '0' must be "
      "equal to or larger than page size spec.domain.memory.hugepages.pageSize '1Gi'\n");
}

TEST(HugepagesValidate, NotAMultipleOfThePageSize) {
  // The exact message of vmi-create-admitter_test.go, with base path "spec".
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "64Mi"}}, "memory": {"hugepages": {"pageSize": "10Mi"}}})"),
            "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '64Mi' is "
            "not a multiple of the page size spec.domain.memory.hugepages.pageSize '10Mi'\n");
  EXPECT_EQ(
      check(R"({"memory": {"guest": "65Mi", "hugepages": {"pageSize": "2Mi"}}})"),
      "FieldValueInvalid spec.domain.resources.requests.memory: spec.domain.resources.requests.memory '0' is not a "
      "multiple of the page size spec.domain.memory.hugepages.pageSize '2Mi'\n");
}

TEST(HugepagesValidate, VmPathPrefix) {
  EXPECT_EQ(
      check(R"({"resources": {"requests": {"memory": "65Mi"}}, "memory": {"hugepages": {"pageSize": "2Gi"}}})",
            "spec.template.spec"),
      "FieldValueInvalid spec.template.spec.domain.resources.requests.memory: spec.template.spec.domain.resources."
      "requests.memory '65Mi' must be equal to or larger than page size "
      "spec.template.spec.domain.memory.hugepages.pageSize '2Gi'\n");
}

TEST(HugepagesValidate, AcceptedSizes) {
  // "should accept correct memory and hugepages size values"
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "64Mi"}}, "memory": {"hugepages": {"pageSize": "2Mi"}}})"),
            "");
  // "should allow setting guest memory and hugepages"
  EXPECT_EQ(
      check(
          R"({"resources": {"requests": {"memory": "64Mi"}}, "memory": {"guest": "64Mi", "hugepages": {"pageSize": "2Mi"}}})"),
      "");
  // Guest memory equal to the page size.
  EXPECT_EQ(check(R"({"memory": {"guest": "1Gi", "hugepages": {"pageSize": "1Gi"}}})"), "");
  // No allow-list of page sizes: 10Mi pages are fine when memory is a multiple.
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "100Mi"}}, "memory": {"hugepages": {"pageSize": "10Mi"}}})"),
            "");
  // Different notations of the same sizes.
  EXPECT_EQ(
      check(R"({"resources": {"requests": {"memory": "1Gi"}}, "memory": {"hugepages": {"pageSize": "2097152"}}})"), "");
}

TEST(HugepagesValidate, RequestsComeBeforeGuestAndLimits) {
  // Only requests.memory is compared when set: a bad guest or limit does not matter here.
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "4Mi"}, "limits": {"memory": "3Mi"}},
                      "memory": {"guest": "3Mi", "hugepages": {"pageSize": "2Mi"}}})"),
            "");
  // Guest comes before limits.
  EXPECT_EQ(
      check(
          R"({"resources": {"limits": {"memory": "3Mi"}}, "memory": {"guest": "4Mi", "hugepages": {"pageSize": "2Mi"}}})"),
      "");
}

TEST(HugepagesValidate, NoMemoryAtAllIsAcceptedHere) {
  // Zero memory is a multiple of any page; the memory-mandatory rule lives elsewhere and is
  // satisfied by the page size, which the mutator also turns into memory.guest.
  EXPECT_EQ(check(R"({"memory": {"hugepages": {"pageSize": "1Gi"}}})"), "");
}

TEST(HugepagesValidate, ZeroPageSizeIsReportedInsteadOfDividingByZero) {
  // KubeVirt would panic on `% 0`; vmgate reports the page size.
  EXPECT_EQ(
      check(R"({"resources": {"requests": {"memory": "64Mi"}}, "memory": {"hugepages": {"pageSize": "0"}}})"),
      "FieldValueInvalid spec.domain.memory.hugepages.pageSize: spec.domain.memory.hugepages.pageSize '0': must be "
      "greater than 0\n");
}

TEST(HugepagesValidate, NoHugepagesNoCauses) {
  EXPECT_EQ(check(R"({"resources": {"requests": {"memory": "65Mi"}}})"), "");
  EXPECT_EQ(check(R"({"memory": {"guest": "1Gi"}})"), "");
  EXPECT_TRUE(validate(parse("{}"), FieldPath("spec")).empty());
}

}  // namespace
}  // namespace vmgate::admission::hugepages
