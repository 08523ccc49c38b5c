// Reads: instancetype spec.cpu.guest; preference topology and spread options.
// Follows pkg/instancetype/preference/validation/cpu.go (CheckSpreadCPUTopology). Note: no
// special case for 1 vCPU, so spread with a 1-vCPU instancetype is rejected, as in KubeVirt.
#include <string>

#include "vmgate/admission/instancetype/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::instancetype {

ErrorList check_spread(const json::Value* instancetype, const json::Value* preference) {
  if (instancetype == nullptr || preference == nullptr) {
    return {};
  }
  const std::string topology = preferred_topology(preference);
  if (topology != "spread" && topology != "preferSpread") {
    return {};
  }
  const json::Value* cpu = json::find_object(*instancetype, "cpu");
  const std::uint64_t guest = cpu != nullptr ? spec::uint_or_zero(*cpu, "guest") : 0;
  const SpreadOptions spread = spread_options(preference);
  const std::string field = "instancetype.spec.cpu.guest";
  const std::string vcpus = std::to_string(guest) + " vCPUs provided by the instance type are not divisible by ";
  // KubeVirt divides by the ratio only where its switch reaches a modulo by it: a ratio of 0 there
  // panics the webhook (the call fails), which vmgate answers with a denial instead; an unknown
  // `across` or an odd guest count with SocketsCoresThreads never divides by it.
  const std::string zero_ratio = vcpus + "a ratio of 0";
  if (spread.across == "SocketsCores") {
    if (spread.ratio == 0) {
      return {{CauseType::field_value_invalid, field, zero_ratio}};
    }
    if (guest % spread.ratio != 0) {
      return {{CauseType::field_value_invalid, field,
               vcpus + "the Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of " +
                   std::to_string(spread.ratio) + " provided by the preference"}};
    }
  }
  if (spread.across == "CoresThreads") {
    if (spread.ratio == 0) {
      return {{CauseType::field_value_invalid, field, zero_ratio}};
    }
    if (guest % spread.ratio != 0) {
      return {{CauseType::field_value_invalid, field,
               vcpus + "the number of threads per core " + std::to_string(spread.ratio)}};
    }
  }
  constexpr std::uint64_t threads_per_core = 2;
  if (spread.across == "SocketsCoresThreads") {
    const std::string message = vcpus + "the number of threads per core " + std::to_string(threads_per_core) +
                                " and Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of " +
                                std::to_string(spread.ratio);
    if (guest % threads_per_core != 0) {  // Go's || stops here: no division by the ratio
      return {{CauseType::field_value_invalid, field, message}};
    }
    if (spread.ratio == 0) {
      return {{CauseType::field_value_invalid, field, zero_ratio}};
    }
    if ((guest / threads_per_core) % spread.ratio != 0) {
      return {{CauseType::field_value_invalid, field, message}};
    }
  }
  return {};
}

}  // namespace vmgate::admission::instancetype
