// Tests of admission/src/preference/persist.cpp: the three preference values the VM mutating webhook
// writes into the stored VM (KubeVirt pkg/instancetype/webhooks/vm/mutator.go mutateArch,
// mutateMachineType, mutateDataVolumeTemplates; vm-mutator_test.go).
#include "vmgate/admission/preference/persist.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "support/json_test_support.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::preference {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::json_equals;

json::Document persisted(std::string_view preference, std::string_view vm) {
  const json::Document preference_doc = parse(preference);
  json::Document out = parse(vm);
  persist_into_vm(&preference_doc, out, out.GetAllocator());
  return out;
}

TEST(PreferencePersist, WritesArchitectureAndMachineTypeIntoTheTemplate) {
  EXPECT_TRUE(json_equals(persisted(R"({"preferredArchitecture":"arm64","machine":{"preferredMachineType":"virt"}})",
                                    R"({"spec":{"template":{"spec":{"domain":{"devices":{}}}}}})"),
                          R"({"spec":{"template":{"spec":{"domain":{"devices":{},"machine":{"type":"virt"}},
                              "architecture":"arm64"}}}})"));
}

// vm-mutator_test.go "should not override user specified MachineType".
TEST(PreferencePersist, UserArchitectureAndMachineTypeAreKept) {
  constexpr std::string_view vm =
      R"({"spec":{"template":{"spec":{"architecture":"amd64","domain":{"machine":{"type":"q35"}}}}}})";
  EXPECT_TRUE(
      json_equals(persisted(R"({"preferredArchitecture":"arm64","machine":{"preferredMachineType":"virt"}})", vm), vm));
}

TEST(PreferencePersist, StorageClassGoesIntoPvcAndStorageWhenUnset) {
  EXPECT_TRUE(
      json_equals(persisted(R"({"volumes":{"preferredStorageClassName":"fast"}})", R"({"spec":{"dataVolumeTemplates":[
          {"metadata":{"name":"a"},"spec":{"pvc":{"accessModes":["ReadWriteOnce"]}}},
          {"metadata":{"name":"b"},"spec":{"storage":{}}},
          {"metadata":{"name":"c"},"spec":{"pvc":{"storageClassName":"slow"},"storage":{}}},
          {"metadata":{"name":"d"},"spec":{"source":{"blank":{}}}}]}})"),
                  R"({"spec":{"dataVolumeTemplates":[
          {"metadata":{"name":"a"},"spec":{"pvc":{"accessModes":["ReadWriteOnce"],"storageClassName":"fast"}}},
          {"metadata":{"name":"b"},"spec":{"storage":{"storageClassName":"fast"}}},
          {"metadata":{"name":"c"},"spec":{"pvc":{"storageClassName":"slow"},"storage":{"storageClassName":"fast"}}},
          {"metadata":{"name":"d"},"spec":{"source":{"blank":{}}}}]}})"));
}

// An explicit empty class is a set pointer in Go: kept.
TEST(PreferencePersist, EmptyStorageClassNameIsKept) {
  constexpr std::string_view vm =
      R"({"spec":{"dataVolumeTemplates":[{"metadata":{"name":"a"},"spec":{"pvc":{"storageClassName":""}}}]}})";
  EXPECT_TRUE(json_equals(persisted(R"({"volumes":{"preferredStorageClassName":"fast"}})", vm), vm));
}

TEST(PreferencePersist, NothingElseOfThePreferenceIsPersisted) {
  constexpr std::string_view vm =
      R"({"metadata":{},"spec":{"template":{"metadata":{},"spec":{"domain":{"devices":{}}}}}})";
  EXPECT_TRUE(json_equals(persisted(R"({"annotations":{"a":"b"},"preferredSubdomain":"s",
      "devices":{"preferredDiskBus":"virtio","preferredAutoattachPodInterface":false},
      "cpu":{"preferredCPUFeatures":[{"name":"vmx"}]},"features":{"preferredAcpi":{}},
      "firmware":{"preferredUseEfi":true},"clock":{"preferredTimer":{}},"preferredLaunchSecurity":{"sev":{}},
      "volumes":{"preferredStorageClassName":""},"machine":{"preferredMachineType":""}})",
                                    vm),
                          vm));
}

TEST(PreferencePersist, NoPreferenceChangesNothing) {
  constexpr std::string_view vm_text = R"({"spec":{"template":{"spec":{"domain":{}}},
      "dataVolumeTemplates":[{"metadata":{"name":"a"},"spec":{"pvc":{}}}]}})";
  json::Document vm = parse(vm_text);
  persist_into_vm(nullptr, vm, vm.GetAllocator());
  EXPECT_TRUE(json_equals(vm, vm_text));
}

TEST(PreferencePersist, VmWithoutTemplateStillGetsTheStorageClass) {
  EXPECT_TRUE(
      json_equals(persisted(R"({"preferredArchitecture":"arm64","volumes":{"preferredStorageClassName":"fast"}})",
                            R"({"spec":{"dataVolumeTemplates":[{"metadata":{"name":"a"},"spec":{"pvc":{}}}]}})"),
                  R"({"spec":{"dataVolumeTemplates":[{"metadata":{"name":"a"},
                              "spec":{"pvc":{"storageClassName":"fast"}}}]}})"));
}

}  // namespace
}  // namespace vmgate::admission::preference
