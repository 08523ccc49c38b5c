// Tests of pkg/storage/admitters/vm-storage-admitter.go Admit: the dataVolumeTemplates'
// namespace, then (UPDATE) snapshot and restore in progress.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string vm(std::string_view spec, std::string_view status = "{}") {
  return R"({"metadata": {"name": "vm"}, "spec": )" + std::string(spec) + R"(, "status": )" + std::string(status) + "}";
}

std::string create(const std::string& text, std::string_view namespace_name = "default") {
  return describe(validate_vm_storage(parse(text), nullptr, false, namespace_name));
}

std::string update(const std::string& old_text, const std::string& text) {
  const json::Document old_vm = parse(old_text);
  return describe(validate_vm_storage(parse(text), &old_vm, true, "default"));
}

constexpr std::string_view other_namespace =
    R"({"runStrategy": "Always", "dataVolumeTemplates": [{"metadata": {"name": "root", "namespace": "other"}}]})";

TEST(ValidationVmStorage, EmbeddedNamespaceMustMatch) {
  EXPECT_EQ(create(vm(other_namespace)),
            "FieldValueInvalid spec.dataVolumeTemplates[0]: Embedded DataVolume namespace other differs from VM "
            "namespace default\n");
  EXPECT_EQ(create(vm(other_namespace), "other"), "");
  EXPECT_EQ(create(vm(R"({"dataVolumeTemplates": [{"metadata": {"name": "root", "namespace": "default"}}]})")), "");
}

TEST(ValidationVmStorage, AnUpdateLeavingTheTemplatesAloneIsNotCheckedAgain) {
  const std::string halted =
      vm(R"({"runStrategy": "Halted", "dataVolumeTemplates": [{"metadata": {"name": "root", "namespace": "other"}}]})");
  EXPECT_EQ(update(halted, vm(other_namespace)), "");
  EXPECT_EQ(update(vm(R"({"runStrategy": "Always"})"), vm(other_namespace)),
            "FieldValueInvalid spec.dataVolumeTemplates[0]: Embedded DataVolume namespace other differs from VM "
            "namespace default\n");
  EXPECT_EQ(describe(validate_vm_storage(parse(vm(other_namespace)), nullptr, true, "default")),
            "UnexpectedServerResponse : Could not fetch old VM\n");
}

TEST(ValidationVmStorage, SnapshotInProgress) {
  const std::string volumes_a = R"({"runStrategy": "Always", "template": {"spec": {"volumes": [{"name": "a"}]}}})";
  const std::string volumes_b = R"({"runStrategy": "Always", "template": {"spec": {"volumes": [{"name": "b"}]}}})";
  const std::string halted = R"({"runStrategy": "Halted", "template": {"spec": {"volumes": [{"name": "a"}]}}})";
  const std::string snapshot = R"({"snapshotInProgress": "snap1"})";
  EXPECT_EQ(update(vm(volumes_a, snapshot), vm(volumes_b, snapshot)),
            "FieldValueNotSupported spec: Cannot update vm disks or volumes until snapshot \"snap1\" completes\n");
  EXPECT_EQ(update(vm(volumes_a, snapshot), vm(halted, snapshot)),
            "FieldValueNotSupported spec: Cannot update vm running state until snapshot \"snap1\" completes\n");
  EXPECT_EQ(update(vm(volumes_a, snapshot), vm(volumes_a, snapshot)), "");
  EXPECT_EQ(update(vm(volumes_a), vm(volumes_b)), "");
}

TEST(ValidationVmStorage, RestoreInProgress) {
  const std::string restore = R"({"restoreInProgress": "restore1"})";
  EXPECT_EQ(update(vm(R"({"runStrategy": "Always"})", restore), vm(R"({"runStrategy": "Halted"})", restore)),
            "FieldValueNotSupported spec: Cannot update VM runStrategy until restore \"restore1\" completes\n");
  // running: true is runStrategy Always.
  EXPECT_EQ(update(vm(R"({"running": true})", restore), vm(R"({"runStrategy": "Always", "x": 1})", restore)), "");
  EXPECT_EQ(update(vm(R"({"runStrategy": "Always"})"), vm(R"({"runStrategy": "Halted"})")), "");
}

}  // namespace
}  // namespace vmgate::admission::validation
