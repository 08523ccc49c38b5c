// Tests of pkg/defaults/hyperv.go SetHypervFeatureDependencies (vmi-mutator_test.go "should set
// the hyperv dependencies", "...EVMCS and disabled vmx cpu feature").
#include "vmgate/admission/defaults/hyperv_dependencies.hpp"

#include <gtest/gtest.h>

#include <string>

#include "support/json_test_support.hpp"

namespace vmgate::admission::defaults {
namespace {

using vmgate::testing::parse;
using vmgate::testing::text;

json::Document defaulted(std::string_view domain) {
  json::Document spec = parse(R"({"domain": )" + std::string(domain) + "}");
  set_hyperv_dependencies(spec, spec.GetAllocator());
  return spec;
}

TEST(DefaultsHyperv, EnabledFeaturesGetTheirMissingRequirements) {
  const json::Document spec = defaulted(R"({"features": {"hyperv": {"synictimer": {"enabled": true}}}})");
  EXPECT_EQ(text(spec, "/domain/features/hyperv"),
            R"({"synictimer":{"enabled":true},"synic":{"enabled":true},"vpindex":{"enabled":true}})");
  const json::Document ipi = defaulted(R"({"features": {"hyperv": {"ipi": {"enabled": true}, "vpindex": {}}}})");
  EXPECT_EQ(text(ipi, "/domain/features/hyperv"), R"({"ipi":{"enabled":true},"vpindex":{"enabled":true}})");
}

TEST(DefaultsHyperv, NothingForDisabledOrUndecidedFeatures) {
  const std::string hyperv = R"({"synic": {"enabled": false}, "ipi": {}})";
  EXPECT_EQ(text(defaulted(R"({"features": {"hyperv": )" + hyperv + "}}"), "/domain/features/hyperv"),
            R"({"synic":{"enabled":false},"ipi":{}})");
  EXPECT_EQ(text(defaulted("{}"), "/domain"), "{}");
}

TEST(DefaultsHyperv, ADisabledRequirementStopsTheWalk) {
  // The order is evmcs, ipi, tlbflush, synictimer, synic: ipi's requirement vpindex is
  // disabled, so the walk stops there and synictimer's missing synic is not added.
  const json::Document spec = defaulted(
      R"({"features": {"hyperv": {"evmcs": {"enabled": false}, "ipi": {"enabled": true}, "vpindex": {"enabled": false},
          "synictimer": {"enabled": true}}}})");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/synic"), "<absent>");
}

TEST(DefaultsHyperv, EvmcsNeedsVapicAndVmxRequired) {
  const json::Document spec = defaulted(R"({"features": {"hyperv": {"evmcs": {"enabled": true}}}})");
  EXPECT_EQ(text(spec, "/domain/features/hyperv/vapic"), R"({"enabled":true})");
  EXPECT_EQ(text(spec, "/domain/cpu/features"), R"([{"name":"vmx","policy":"require"}])");
  const json::Document rewritten = defaulted(
      R"({"cpu": {"features": [{"name": "pcid"}, {"name": "vmx", "policy": "disable"}]},
          "features": {"hyperv": {"evmcs": {}, "vapic": {"enabled": true}}}})");
  EXPECT_EQ(text(rewritten, "/domain/cpu/features"), R"([{"name":"pcid"},{"name":"vmx","policy":"require"}])");
}

TEST(DefaultsHyperv, ADisabledVapicLeavesEvmcsWithoutVmx) {
  // The dependency error returns before setEVMCSDependency; validation then reports both causes.
  const json::Document spec =
      defaulted(R"({"features": {"hyperv": {"evmcs": {"enabled": true}, "vapic": {"enabled": false}}}})");
  EXPECT_EQ(text(spec, "/domain/cpu"), "<absent>");
}

}  // namespace
}  // namespace vmgate::admission::defaults
