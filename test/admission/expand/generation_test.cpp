// Tests of the VM's stored metadata.generation (the custom resource strategy), which the VM
// controller copies into the VMI's kubevirt.io/vm-generation annotation.
#include "vmgate/admission/expand/generation.hpp"

#include <gtest/gtest.h>

#include "support/json_test_support.hpp"

namespace vmgate::admission::expand {
namespace {

using vmgate::testing::parse;

TEST(StoredGeneration, CreateIsOneWhateverTheObjectSays) {
  EXPECT_EQ(stored_generation(parse(R"({"metadata": {"generation": 7}, "spec": {}})"), nullptr), 1);
}

TEST(StoredGeneration, UpdateKeepsTheOldGenerationWhenTheSpecIsUnchanged) {
  const json::Document old_vm = parse(R"({"metadata": {"generation": 4}, "spec": {"runStrategy": "Always"}})");
  EXPECT_EQ(stored_generation(parse(R"({"metadata": {"labels": {"a": "b"}}, "spec": {"runStrategy": "Always"},
      "status": {"ready": true}})"),
                              &old_vm),
            4);
}

TEST(StoredGeneration, UpdateAddsOneWhenTheSpecChanged) {
  const json::Document old_vm = parse(R"({"metadata": {"generation": 4}, "spec": {"runStrategy": "Always"}})");
  EXPECT_EQ(stored_generation(parse(R"({"spec": {"runStrategy": "Halted"}})"), &old_vm), 5);
}

TEST(StoredGeneration, OldObjectWithoutGenerationCountsAsOne) {
  const json::Document old_vm = parse(R"({"spec": {"runStrategy": "Always"}})");
  EXPECT_EQ(stored_generation(parse(R"({"spec": {"runStrategy": "Halted"}})"), &old_vm), 2);
  EXPECT_EQ(stored_generation(parse(R"({"spec": {"runStrategy": "Always"}})"), &old_vm), 1);
}

TEST(StoredGeneration, SpecsCompareAsDecoded) {
  // Quantities by value, Go zero values as absent.
  const json::Document old_vm = parse(
      R"({"metadata": {"generation": 2}, "spec": {"template": {"spec": {"domain": {"memory": {"guest": "1Gi"}}}}}})");
  EXPECT_EQ(stored_generation(parse(R"({"spec": {"running": null,
      "template": {"spec": {"domain": {"memory": {"guest": "1024Mi"}}}}}})"),
                              &old_vm),
            2);
}

}  // namespace
}  // namespace vmgate::admission::expand
