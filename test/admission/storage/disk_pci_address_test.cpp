// Tests of pkg/storage/admitters/disks.go validatePciAddress, through validate_disk_fields (KubeVirt's
// doubled path "<disks>.domain.devices.disks.disk[i]").
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view disk) {
  return describe(
      validate_disk_fields(parse(R"({"domain": {"devices": {"disks": [{"name": "a", "disk": )" + std::string(disk) +
                                 R"(}]}}, "volumes": [{"name": "a", "emptyDisk": {"capacity": "1Gi"}}]})"),
                           FieldPath("spec")));
}

TEST(ValidationDiskPciAddress, VirtioBusAndWellFormed) {
  EXPECT_EQ(check(R"({"bus": "virtio", "pciAddress": "0000:0a:1F.7"})"), "");
  const std::string field = "spec.domain.devices.disks.domain.devices.disks.disk[0]";
  EXPECT_EQ(check(R"({"bus": "sata", "pciAddress": "0000:00:10.0"})"),
            "FieldValueInvalid " + field + ".pciAddress: disk " + field +
                ".name - setting a PCI address is only possible with bus type virtio.\n");
  for (std::string_view malformed : {"0000:00:10.8", "000:00:10.0", "0000:00:10", "0000-00-10.0", "0000:00:10.0 "}) {
    EXPECT_EQ(check(R"({"bus": "virtio", "pciAddress": ")" + std::string(malformed) + R"("})"),
              "FieldValueInvalid " + field + ".pciAddress: disk " + field + ".name has malformed PCI address (" +
                  std::string(malformed) + ").\n")
        << malformed;
  }
}

}  // namespace
}  // namespace vmgate::admission::validation
