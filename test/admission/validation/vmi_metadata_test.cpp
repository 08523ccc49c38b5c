// Tests of vmi-create-admitter.go ValidateVirtualMachineInstanceMetadata, for a VMI's metadata and
// a VM's template metadata alike.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/validation/rules.hpp"

namespace vmgate::admission::validation {
namespace {

using vmgate::testing::describe;
using vmgate::testing::parse;

std::string check(std::string_view metadata, bool from_kubevirt = false, const ClusterConfig& config = {}) {
  return describe(validate_vmi_metadata(parse(metadata), FieldPath("spec.template.metadata"), config, from_kubevirt));
}

TEST(ValidationVmiMetadata, ReservedLabelsUnlessKubeVirtItself) {
  EXPECT_EQ(check(R"({"labels": {"kubevirt.io/domain": "vm", "app": "x"}})"), "");
  EXPECT_EQ(check(R"({"labels": {"kubevirt.io/nodeName": "n1", "kubevirt.io/created-by": "x"}})"),
            "FieldValueNotSupported spec.template.metadata.labels: creation of the following reserved kubevirt.io/ "
            "labels on a VMI object is prohibited\n");
  EXPECT_EQ(check(R"({"labels": {"kubevirt.io/nodeName": "n1"}})", true), "");
}

TEST(ValidationVmiMetadata, IgnitionAndSidecarAnnotationsNeedTheirGates) {
  constexpr std::string_view annotated =
      R"({"annotations": {"kubevirt.io/ignitiondata": "{}", "hooks.kubevirt.io/hookSidecars": "[]"}})";
  EXPECT_EQ(check(annotated),
            "FieldValueInvalid spec.template.metadata.annotations: ExperimentalIgnitionSupport feature gate is not "
            "enabled in kubevirt-config, invalid entry spec.template.metadata.annotations.kubevirt.io/ignitiondata\n"
            "FieldValueInvalid spec.template.metadata.annotations: sidecar feature gate is not enabled in "
            "kubevirt-config, invalid entry spec.template.metadata.annotations.hooks.kubevirt.io/hookSidecars\n");
  ClusterConfig gates;
  gates.feature_gates = {"ExperimentalIgnitionSupport", "Sidecar"};
  EXPECT_EQ(check(annotated, false, gates), "");
}

TEST(ValidationVmiMetadata, ReservedLabelsMayNotChangeOnUpdate) {
  const auto vmi = [](std::string_view labels) {
    return parse(R"({"metadata": {"labels": )" + std::string(labels) + "}}");
  };
  EXPECT_FALSE(reserved_vmi_labels_changed(vmi(R"({"app": "a"})"), vmi(R"({"app": "b"})")));
  EXPECT_FALSE(reserved_vmi_labels_changed(vmi(R"({"kubevirt.io/nodeName": "n1", "x": "1"})"),
                                           vmi(R"({"kubevirt.io/nodeName": "n1"})")));
  EXPECT_TRUE(reserved_vmi_labels_changed(vmi(R"({"kubevirt.io/nodeName": "n1"})"), vmi("{}")));
  EXPECT_TRUE(reserved_vmi_labels_changed(vmi("{}"), vmi(R"({"kubevirt.io/created-by": "u"})")));
  EXPECT_TRUE(reserved_vmi_labels_changed(vmi(R"({"kubevirt.io/schedulable": "true"})"),
                                          vmi(R"({"kubevirt.io/schedulable": "false"})")));
}

}  // namespace
}  // namespace vmgate::admission::validation
