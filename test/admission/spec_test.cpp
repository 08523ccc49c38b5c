// Tests of admission/src/spec.cpp: Go-style "unset" tests and copy-if-unset used by the rules.
#include <gtest/gtest.h>

#include "support/json_test_support.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::spec {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

TEST(SpecHelpers, UnsetEmptyAndUint) {
  const json::Document doc = parse(R"({"n":null,"s":"","t":"x","l":[],"u":3,"neg":-1,"b":true})");
  EXPECT_TRUE(unset(doc, "n"));
  EXPECT_TRUE(unset(doc, "absent"));
  EXPECT_FALSE(unset(doc, "s"));
  EXPECT_TRUE(empty_string(doc, "s"));
  EXPECT_FALSE(empty_string(doc, "t"));
  EXPECT_TRUE(empty_list(doc, "l"));
  EXPECT_EQ(uint_or_zero(doc, "u"), 3U);
  EXPECT_EQ(uint_or_zero(doc, "neg"), 0U);
  EXPECT_TRUE(is_true(doc, "b"));
  EXPECT_FALSE(is_true(doc, "t"));
}

TEST(SpecHelpers, CopyOnlyWhenTheTargetIsUnset) {
  const json::Document source = parse(R"({"a":{"x":1},"s":"v","empty":""})");
  json::Document target = parse(R"({"b":{"keep":true},"t":""})");
  copy_if_unset(source, "a", target, "b", target.GetAllocator());             // set: kept
  copy_if_unset(source, "a", target, "c", target.GetAllocator());             // unset: copied
  copy_string_if_empty(source, "s", target, "t", target.GetAllocator());      // empty: filled
  copy_string_if_empty(source, "empty", target, "u", target.GetAllocator());  // empty source: nothing
  EXPECT_EQ(dump(target), R"({"b":{"keep":true},"t":"v","c":{"x":1}})");
}

TEST(SpecHelpers, EnsureDiskTargetOnlyWithoutAnyTarget) {
  json::Document disks = parse(R"([{"name":"a"},{"name":"b","cdrom":{}},{"name":"c","lun":{}}])");
  for (json::Value& disk : disks.GetArray()) {
    ensure_disk_target(disk, disks.GetAllocator());
  }
  EXPECT_EQ(dump(disks), R"([{"name":"a","disk":{}},{"name":"b","cdrom":{}},{"name":"c","lun":{}}])");
}

TEST(SpecHelpers, NestedObjectsAreCreatedOnDemand) {
  json::Document spec = parse("{}");
  devices(spec, spec.GetAllocator());
  json::Document metadata = parse("{}");
  annotations(metadata, metadata.GetAllocator());
  EXPECT_EQ(dump(spec), R"({"domain":{"devices":{}}})");
  EXPECT_EQ(dump(metadata), R"({"annotations":{}})");
}

}  // namespace
}  // namespace vmgate::admission::spec
