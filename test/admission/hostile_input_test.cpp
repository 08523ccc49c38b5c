// Hostile and malformed input through the whole pipeline: every case must end in a clear verdict
// (never a crash, a hang or a silent default). Runs under ASan+UBSan in CI. Decoder-level cases
// (syntax, depth, duplicate keys, UTF-8, 10 MB strings) are in json_decode_test.cpp and
// test/server; wrong types field by field are in validation/structure_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/json_test_support.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/admission/pipeline.hpp"

namespace vmgate::admission {
namespace {

struct HostileCase {
  const char* name;
  const char* object;  // a VM or VMI with the hostile value
  bool allowed;
  const char* field;         // expected cause field ("" = any/none)
  const char* message_part;  // expected substring of the verdict message
};

// A VMI with one placeholder, so each row states only the hostile part.
std::string vmi_with_domain(const std::string& domain) {
  return R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":"x"},
    "spec":{"domain":)" +
         domain + R"(}})";
}

std::string vm_with_domain(const std::string& domain) {
  return R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"x"},
    "spec":{"runStrategy":"Always","template":{"spec":{"domain":)" +
         domain + R"(}}}})";
}

const std::string quantity_regex =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

std::vector<HostileCase> cases() {
  static const std::string memory_1_5_5 = vmi_with_domain(R"({"devices":{},"memory":{"guest":"1.5.5Gi"}})");
  static const std::string memory_minus =
      vmi_with_domain(R"({"devices":{},"resources":{"requests":{"memory":"-1Gi"}}})");
  static const std::string memory_e999 =
      vmi_with_domain(R"({"devices":{},"resources":{"requests":{"memory":"1e999"}}})");
  static const std::string memory_huge =
      vm_with_domain(R"({"devices":{},"memory":{"guest":"99999999999999999999Ei"}})");
  static const std::string cpu_bad =
      vm_with_domain(R"({"devices":{},"memory":{"guest":"1Gi"},"resources":{"limits":{"cpu":"two"}}})");
  static const std::string page_bad =
      vmi_with_domain(R"({"devices":{},"memory":{"guest":"1Gi","hugepages":{"pageSize":"1.5.5Gi"}}})");
  static const std::string page_zero =
      vmi_with_domain(R"({"devices":{},"memory":{"guest":"1Gi","hugepages":{"pageSize":"0"}}})");
  static const std::string page_negative =
      vmi_with_domain(R"({"devices":{},"memory":{"guest":"1Gi","hugepages":{"pageSize":"-2Mi"}}})");
  static const std::string cores_string = vm_with_domain(R"({"devices":{},"cpu":{"cores":"4"}})");
  static const std::string sockets_huge =
      vmi_with_domain(R"({"devices":{},"memory":{"guest":"1Gi"},"cpu":{"sockets":4294967296}})");
  static const std::string domain_array = vmi_with_domain(R"([])");
  static const std::string numeric_memory =
      vmi_with_domain(R"({"devices":{},"resources":{"requests":{"memory":1073741824}}})");
  return {
      {"guest 1.5.5Gi", memory_1_5_5.c_str(), false, "spec.domain.memory.guest", quantity_regex.c_str()},
      {"requests -1Gi", memory_minus.c_str(), false, "spec.domain.resources.requests.memory",
       "must be greater than or equal to 0."},
      {"requests 1e999", memory_e999.c_str(), false, "spec.domain.resources.requests.memory", "quantity out of range"},
      {"guest 99999999999999999999Ei", memory_huge.c_str(), false, "spec.template.spec.domain.memory.guest",
       "quantity out of range"},
      {"limits.cpu two", cpu_bad.c_str(), false, "spec.template.spec.domain.resources.limits.cpu",
       quantity_regex.c_str()},
      {"pageSize 1.5.5Gi", page_bad.c_str(), false, "spec.domain.memory.hugepages.pageSize", quantity_regex.c_str()},
      {"pageSize 0", page_zero.c_str(), false, "spec.domain.memory.hugepages.pageSize", "must be greater than 0"},
      {"pageSize -2Mi", page_negative.c_str(), false, "spec.domain.memory.hugepages.pageSize",
       "must be greater than 0"},
      {"cores as a string", cores_string.c_str(), false, "spec.template.spec.domain.cpu.cores",
       "must be of type integer"},
      {"sockets beyond uint32", sockets_huge.c_str(), false, "spec.domain.cpu.sockets", ""},
      {"domain is an array", domain_array.c_str(), false, "spec.domain", ""},
      {"numeric memory request", numeric_memory.c_str(), true, "", ""},
  };
}

TEST(HostileInput, EveryCaseEndsInAClearVerdict) {
  const Pipeline pipeline;
  const ObjectStore store;
  for (const HostileCase& c : cases()) {
    SCOPED_TRACE(c.name);
    const json::Document object = testing::parse(c.object);
    Request request;
    request.object = &object;
    request.resource = json::find_string(object, "kind") == "VirtualMachine" ? Resource::virtual_machine
                                                                             : Resource::virtual_machine_instance;
    const Outcome outcome = pipeline.admit(request, store);
    EXPECT_EQ(outcome.verdict.allowed, c.allowed) << outcome.verdict.message;
    if (!c.allowed) {
      EXPECT_EQ(outcome.verdict.code, 422) << outcome.verdict.message;
      EXPECT_NE(outcome.verdict.message.find(c.message_part), std::string::npos) << outcome.verdict.message;
      bool field_found = std::string(c.field).empty();
      for (const FieldError& cause : outcome.verdict.causes) {
        // An OpenAPI schema cause has no field, as KubeVirt's: its message starts with the path.
        const bool schema_cause_at_field =
            cause.type == CauseType::none && cause.message.rfind(std::string(c.field) + " ", 0) == 0;
        field_found = field_found || cause.field == c.field || schema_cause_at_field;
      }
      EXPECT_TRUE(field_found) << "no cause at " << c.field << ": " << outcome.verdict.message;
    }
  }
}

TEST(HostileInput, ClusterObjectsWithBadQuantitiesAreRefusedWithTheirField) {
  const Pipeline pipeline;
  const json::Document instancetype = testing::parse(R"({"apiVersion":"instancetype.kubevirt.io/v1beta1",
    "kind":"VirtualMachineClusterInstancetype","metadata":{"name":"bad"},
    "spec":{"cpu":{"guest":1},"memory":{"guest":"1.5.5Gi","hugepages":{"pageSize":"huge"}}}})");
  const ErrorList errors = pipeline.check_cluster_object(instancetype);
  ASSERT_EQ(errors.size(), 2U);
  EXPECT_EQ(errors[0].field, "spec.memory.guest");
  EXPECT_EQ(errors[0].message, "spec.memory.guest '1.5.5Gi': " + quantity_regex);
  EXPECT_EQ(errors[1].field, "spec.memory.hugepages.pageSize");

  const json::Document preference = testing::parse(R"({"apiVersion":"instancetype.kubevirt.io/v1beta1",
    "kind":"VirtualMachineClusterPreference","metadata":{"name":"bad"},
    "spec":{"requirements":{"memory":{"guest":"lots"}},"cpu":{"preferredCPUTopology":5}}})");
  const ErrorList preference_errors = pipeline.check_cluster_object(preference);
  ASSERT_FALSE(preference_errors.empty());
  EXPECT_EQ(preference_errors[0].field, "spec.cpu.preferredCPUTopology");

  const json::Document pvc =
      testing::parse(R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"p"}})");
  EXPECT_TRUE(pipeline.check_cluster_object(pvc).empty());
}

TEST(HostileInput, DeepAndHugeDocumentsAreBoundedByTheDecoder) {
  std::string deep(100000, '[');
  EXPECT_FALSE(json::parse_json(deep).ok());
  const std::string huge_name(10 * 1024 * 1024, 'a');
  const std::string text = R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"name":")" +
                           huge_name + R"("},"spec":{"domain":{"devices":{},"memory":{"guest":"1Gi"}}}})";
  auto document = json::parse_json(text);
  ASSERT_TRUE(document.ok());
  const Pipeline pipeline;
  const ObjectStore store;
  Request request;
  request.resource = Resource::virtual_machine_instance;
  request.object = &document.value();
  const Outcome outcome = pipeline.admit(request, store);
  EXPECT_TRUE(outcome.verdict.allowed) << outcome.verdict.message;
}

}  // namespace
}  // namespace vmgate::admission
