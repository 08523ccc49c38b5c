// Tests of pkg/storage/admitters/disks.go validateBlockSize, through validate_disk_fields.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view block_size, std::string_view target = R"("disk": {"bus": "virtio"})") {
  return describe(validate_disk_fields(
      parse(R"({"domain": {"devices": {"disks": [{"name": "a", )" + std::string(target) + R"(, "blockSize": )" +
            std::string(block_size) + R"(}]}}, "volumes": [{"name": "a", "emptyDisk": {"capacity": "1Gi"}}]})"),
      FieldPath("spec")));
}

TEST(ValidationDiskBlockSize, CustomSizes) {
  EXPECT_EQ(check(R"({"custom": {"logical": 512, "physical": 4096}})"), "");
  EXPECT_EQ(check(R"({"custom": {"logical": 4096, "physical": 4096, "discardGranularity": 8192}})"), "");
  EXPECT_EQ(check(R"({"matchVolume": {"enabled": false}, "custom": {"logical": 512, "physical": 512}})"), "");
  EXPECT_EQ(check(R"({"custom": {"logical": 4096, "physical": 512}})"),
            "FieldValueInvalid spec.domain.devices.disks[0].blockSize.custom.logical: Logical size 4096 must be the "
            "same or less than the physical size of 512\n");
  EXPECT_EQ(check(R"({"custom": {"logical": 256, "physical": 3000000}})"),
            "FieldValueInvalid spec.domain.devices.disks[0].blockSize.custom.logical: Provided size of 256 is less "
            "than the supported minimum size of 512\n"
            "FieldValueInvalid spec.domain.devices.disks[0].blockSize.custom.physical: Provided size of 3000000 is "
            "greater than the supported maximum size of 2097152\n");
  EXPECT_EQ(check(R"({"custom": {"logical": 1000, "physical": 1000}})"),
            "FieldValueInvalid spec.domain.devices.disks[0].blockSize.custom.logical: Provided size of 1000 is not a "
            "power of 2\n"
            "FieldValueInvalid spec.domain.devices.disks[0].blockSize.custom.physical: Provided size of 1000 is not a "
            "power of 2\n");
  EXPECT_EQ(check(R"({"custom": {"logical": 4096, "physical": 4096, "discardGranularity": 6144}})"),
            "FieldValueInvalid spec.domain.devices.disks[0].blockSize.custom.discardGranularity: Discard granularity "
            "6144 must be multiples of logical size 4096\n");
}

TEST(ValidationDiskBlockSize, MatchVolumeExcludesCustom) {
  EXPECT_EQ(check(R"({"matchVolume": {}, "custom": {"logical": 512, "physical": 512}})"),
            "FieldValueInvalid spec.domain.devices.disks[0].blockSize: Block size matching can't be enabled together "
            "with a custom value\n");
  EXPECT_EQ(check(R"({"matchVolume": {}})"), "");
}

TEST(ValidationDiskBlockSize, SataNeedsLogical512) {
  EXPECT_EQ(check(R"({"custom": {"logical": 4096, "physical": 4096}})", R"("disk": {"bus": "sata"})"),
            "FieldValueInvalid spec.domain.devices.disks[0].blockSize.custom.logical: Logical size 4096 must be 512 "
            "for SATA devices\n");
}

}  // namespace
}  // namespace vmgate::admission::validation
