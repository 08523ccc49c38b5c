// Reads: preference spec.cpu.{preferredCPUTopology, spreadOptions}, spec.preferSpreadSocketToCoreRatio.
// Follows pkg/instancetype/apply/cpu.go (applyGuestCPUTopology) and
// pkg/instancetype/preference/apply/cpu.go (GetPreferredTopology, GetSpreadOptions).
#include "vmgate/admission/instancetype/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::instancetype {

std::string preferred_topology(const json::Value* preference) {
  if (preference != nullptr) {
    if (const json::Value* cpu = json::find_object(*preference, "cpu")) {
      std::string_view topology = json::find_string(*cpu, "preferredCPUTopology");
      if (json::has(*cpu, "preferredCPUTopology")) {
        return std::string(topology);
      }
    }
  }
  return "sockets";
}

SpreadOptions spread_options(const json::Value* preference) {
  SpreadOptions options;
  if (preference == nullptr) {
    return options;
  }
  if (std::uint64_t ratio = spec::uint_or_zero(*preference, "preferSpreadSocketToCoreRatio"); ratio != 0) {
    options.ratio = ratio;
  }
  if (const json::Value* spread = json::find_path(*preference, {"cpu", "spreadOptions"}); spread != nullptr) {
    if (json::has(*spread, "across")) {
      options.across = std::string(json::find_string(*spread, "across"));
    }
    if (const json::Value* ratio = json::find(*spread, "ratio"); ratio != nullptr && ratio->IsUint64()) {
      options.ratio = ratio->GetUint64();
    }
  }
  return options;
}

Topology guest_topology(std::uint64_t vcpus, const json::Value* preference) {
  Topology topology;
  if (vcpus == 1) {
    return topology;
  }
  const std::string preferred = preferred_topology(preference);
  if (preferred == "cores" || preferred == "preferCores") {
    topology.cores = vcpus;
  } else if (preferred == "sockets" || preferred == "preferSockets" || preferred == "any" || preferred == "preferAny") {
    topology.sockets = vcpus;
  } else if (preferred == "threads" || preferred == "preferThreads") {
    topology.threads = vcpus;
  } else if (preferred == "spread" || preferred == "preferSpread") {
    SpreadOptions spread = spread_options(preference);
    if (spread.ratio == 0) {
      return topology;  // rejected by check_spread before; never divide by zero
    }
    if (spread.across == "SocketsCores") {
      topology.cores = spread.ratio;
      topology.sockets = vcpus / spread.ratio;
    } else if (spread.across == "CoresThreads") {
      topology.threads = spread.ratio;
      topology.cores = vcpus / spread.ratio;
    } else if (spread.across == "SocketsCoresThreads") {
      constexpr std::uint64_t threads_per_core = 2;
      topology.threads = threads_per_core;
      topology.cores = spread.ratio;
      topology.sockets = vcpus / threads_per_core / spread.ratio;
    }
  }
  return topology;
}

}  // namespace vmgate::admission::instancetype
