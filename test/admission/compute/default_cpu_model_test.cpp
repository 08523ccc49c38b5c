// Tests of the CPU model default (pkg/defaults/defaults.go setDefaultCPUModel, arm64.go) and the
// arm64 model rule (pkg/virt-api/webhooks/arm64.go validateCPUModel). Precedence: the VMI's own
// model > the cluster's spec.configuration.cpuModel > host-model; arm64 always host-passthrough.
#include <gtest/gtest.h>

#include <string>

#include "support/field_error_support.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/compute/cpu_model.hpp"
#include "vmgate/admission/defaults/vmi.hpp"

// After json.hpp, which must define RAPIDJSON_ASSERT before any RapidJSON header.
#include <rapidjson/pointer.h>

namespace vmgate::admission::cpu {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

std::string model_after_default(std::string_view spec_text, const ClusterConfig& config) {
  json::Document spec = parse(spec_text);
  set_default_model(spec, config, spec.GetAllocator());
  const json::Value* model = rapidjson::Pointer("/domain/cpu/model").Get(spec);
  return model != nullptr && model->IsString() ? std::string(model->GetString()) : "<absent>";
}

std::string model_after_create(std::string_view arch, std::string_view cpu, const ClusterConfig& config) {
  json::Document vmi = parse(R"({"metadata": {"name": "v"}, "spec": {"architecture": ")" + std::string(arch) +
                             R"(", "domain": {"cpu": )" + std::string(cpu) + "}}}");
  EXPECT_FALSE(defaults::apply_vmi_create_defaults(vmi, "default", config, "", vmi.GetAllocator()).has_value());
  const json::Value* model = rapidjson::Pointer("/spec/domain/cpu/model").Get(vmi);
  return model != nullptr && model->IsString() ? std::string(model->GetString()) : "<absent>";
}

using vmgate::testing::describe;

ClusterConfig with_model(std::string model) {
  ClusterConfig config;
  config.cpu_model = std::move(model);
  return config;
}

TEST(CpuDefaultModel, HostModelWhenNothingIsSet) {
  EXPECT_EQ(default_model, "host-model");
  EXPECT_EQ(model_after_default("{}", ClusterConfig{}), "host-model");
  EXPECT_EQ(model_after_default(R"({"domain": {"cpu": {"model": ""}}})", ClusterConfig{}), "host-model");
}

TEST(CpuDefaultModel, ClusterModelBeatsHostModel) {
  EXPECT_EQ(model_after_default("{}", with_model("Haswell")), "Haswell");
}

TEST(CpuDefaultModel, VmiModelBeatsTheClusterModel) {
  EXPECT_EQ(model_after_default(R"({"domain": {"cpu": {"model": "EPYC"}}})", with_model("Haswell")), "EPYC");
  EXPECT_EQ(model_after_default(R"({"domain": {"cpu": {"model": "host-passthrough"}}})", with_model("Haswell")),
            "host-passthrough");
}

TEST(CpuDefaultModel, CreatesTheCpuStructAndKeepsItsOtherFields) {
  json::Document spec = parse(R"({"domain": {"cpu": {"sockets": 2, "features": [{"name": "vmx"}]}}})");
  set_default_model(spec, ClusterConfig{}, spec.GetAllocator());
  EXPECT_EQ(dump(spec), R"({"domain":{"cpu":{"sockets":2,"features":[{"name":"vmx"}],"model":"host-model"}}})");
}

TEST(CpuDefaultModel, Arm64AlwaysGetsHostPassthrough) {
  // vmi-mutator_test.go "should apply configurable defaults on VMI create": on arm64 the cluster
  // cpuModel is ignored.
  EXPECT_EQ(model_after_create("arm64", "{}", with_model("Haswell")), "host-passthrough");
  EXPECT_EQ(model_after_create("arm64", "{}", ClusterConfig{}), "host-passthrough");
  EXPECT_EQ(model_after_create("amd64", "{}", with_model("Haswell")), "Haswell");
  EXPECT_EQ(model_after_create("s390x", "{}", with_model("Haswell")), "Haswell");
  EXPECT_EQ(model_after_create("s390x", "{}", ClusterConfig{}), "host-model");
  // A user model on arm64 is kept by the mutator (and rejected by validation below).
  EXPECT_EQ(model_after_create("arm64", R"({"model": "cortex-a72"})", ClusterConfig{}), "cortex-a72");
}

TEST(CpuDefaultModel, Arm64RejectsAnyOtherModel) {
  EXPECT_EQ(describe(validate_arm64_model(
                parse(R"({"architecture": "arm64", "domain": {"cpu": {"model": "host-model"}}})"), FieldPath("spec"))),
            "FieldValueNotSupported spec.domain.cpu.model: currently, host-passthrough is the only model supported on "
            "Arm64\n");
  EXPECT_EQ(
      describe(validate_arm64_model(parse(R"({"architecture": "arm64", "domain": {"cpu": {"model": "cortex-a72"}}})"),
                                    FieldPath("spec.template.spec"))),
      "FieldValueNotSupported spec.template.spec.domain.cpu.model: currently, host-passthrough is the only model "
      "supported on Arm64\n");
}

TEST(CpuDefaultModel, Arm64AcceptsHostPassthroughOrNoModel) {
  EXPECT_TRUE(
      validate_arm64_model(parse(R"({"architecture": "arm64", "domain": {"cpu": {"model": "host-passthrough"}}})"),
                           FieldPath("spec"))
          .empty());
  EXPECT_TRUE(
      validate_arm64_model(parse(R"({"architecture": "arm64", "domain": {"cpu": {}}})"), FieldPath("spec")).empty());
  EXPECT_TRUE(validate_arm64_model(parse(R"({"architecture": "arm64"})"), FieldPath("spec")).empty());
}

TEST(CpuDefaultModel, OtherArchitecturesAcceptAnyModel) {
  for (std::string_view arch : {"amd64", "s390x", ""}) {
    EXPECT_TRUE(validate_arm64_model(parse(R"({"architecture": ")" + std::string(arch) +
                                           R"(", "domain": {"cpu": {"model": "Haswell"}}})"),
                                     FieldPath("spec"))
                    .empty())
        << arch;
  }
}

}  // namespace
}  // namespace vmgate::admission::cpu
