// The full admission pipeline per VM — decode the AdmissionReview body, mutate, diff, validate,
// expand — on the benchmark bodies (bench/bodies in the shared data directory,
// VMGATE_SHARED_DIR), against an ObjectStore holding the instancetypes and preferences the
// bodies reference plus N filler instancetypes (10 or 100 000) to show that lookups do not
// depend on the store's size.
//
//   build/bench/pipeline_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "bench/bench_support.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/admission/pipeline.hpp"

namespace {

using vmgate::admission::ObjectStore;
using vmgate::admission::Pipeline;
using vmgate::admission::Request;
using vmgate::bench::read_body;

void add(ObjectStore& store, std::string_view text) {
  auto document = vmgate::json::parse_json(text);
  if (!document || !store.add(*document).ok()) {
    throw std::runtime_error("bad bench object");
  }
}

// The cluster objects the bodies reference, shaped like common-instancetypes' u1/cx1 series
// (cx1.2xlarge without ioThreadsPolicy: the large body sets its own, which would be a conflict
// and stop the pipeline before validation and expansion).
ObjectStore make_store(int fillers) {
  ObjectStore store;
  add(store, R"({"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterInstancetype",
    "metadata":{"name":"u1.medium"},"spec":{"cpu":{"guest":1},"memory":{"guest":"4Gi"}}})");
  add(store, R"({"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterInstancetype",
    "metadata":{"name":"cx1.2xlarge"},"spec":{"cpu":{"dedicatedCPUPlacement":true,"guest":8,
    "isolateEmulatorThread":true,"maxSockets":8,"numa":{"guestMappingPassthrough":{}}},
    "memory":{"guest":"16Gi","hugepages":{"pageSize":"2Mi"}}}})");
  add(store, R"({"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterPreference",
    "metadata":{"name":"fedora"},"spec":{"annotations":{"vm.kubevirt.io/os":"linux"},
    "devices":{"preferredDiskBus":"virtio","preferredInterfaceModel":"virtio","preferredRng":{}},
    "features":{"preferredSmm":{}},"firmware":{"preferredEfi":{"secureBoot":true}},
    "preferredArchitecture":"amd64","requirements":{"architecture":"amd64","cpu":{"guest":1},
    "memory":{"guest":"2Gi"}}}})");
  add(store, R"({"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterPreference",
    "metadata":{"name":"centos.stream9"},"spec":{"devices":{"preferredDiskBus":"virtio",
    "preferredDiskDedicatedIoThread":true,"preferredInterfaceModel":"virtio","preferredRng":{}},
    "requirements":{"cpu":{"guest":1},"memory":{"guest":"1.5Gi"}}}})");
  for (int i = 0; i < fillers; ++i) {
    add(store, R"({"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterInstancetype",
      "metadata":{"name":"filler-)" +
                   std::to_string(i) + R"("},"spec":{"cpu":{"guest":2},"memory":{"guest":"4Gi"}}})");
  }
  return store;
}

const ObjectStore& store_with(int fillers) {
  static std::map<int, ObjectStore> stores;  // benchmark fixture, built once per size
  auto it = stores.find(fillers);
  if (it == stores.end()) {
    it = stores.emplace(fillers, make_store(fillers)).first;
  }
  return it->second;
}

// What KubeVirt answers for each body: the small VM is admitted; the medium and large ones carry
// cloud-init userData over KubeVirt's 2048-byte limit and are denied by validation, so their
// rows measure decode, mutate, diff and validate but not the expansion. Any other verdict stops
// the benchmark: a figure for the wrong path would be misleading.
struct Expected {
  /// Empty: admitted. Otherwise a part of the denial's message.
  std::optional<std::string_view> denial;
};

void full_pipeline(benchmark::State& state, const std::string& size, Expected expected) {
  const std::string body = read_body(size);
  const ObjectStore& store = store_with(static_cast<int>(state.range(0)));
  const Pipeline pipeline;
  for (auto _ : state) {
    auto review = vmgate::json::parse_json(body);
    const vmgate::json::Value* object = vmgate::json::find_path(*review, {"request", "object"});
    Request request;
    request.object = object;
    request.namespace_name =
        std::string(vmgate::json::find_string(*vmgate::json::find(*review, "request"), "namespace"));
    vmgate::admission::Outcome outcome = pipeline.admit(request, store);
    if (outcome.verdict.allowed != !expected.denial ||
        (expected.denial && outcome.verdict.message.find(*expected.denial) == std::string::npos)) {
      const std::string error =
          "unexpected verdict: " + std::string(outcome.verdict.allowed ? "allowed" : outcome.verdict.message);
      state.SkipWithError(error.c_str());
      break;
    }
    benchmark::DoNotOptimize(outcome);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(body.size()));
  state.counters["body_bytes"] = static_cast<double>(body.size());
  state.counters["allowed"] = expected.denial ? 0 : 1;
}

constexpr std::string_view userdata_limit = "userdata exceeds 2048 byte limit";

void small_vm(benchmark::State& state) {
  full_pipeline(state, "small", {.denial = std::nullopt});
}
void medium_vm(benchmark::State& state) {
  full_pipeline(state, "medium", {.denial = userdata_limit});
}
void large_vm(benchmark::State& state) {
  full_pipeline(state, "large", {.denial = userdata_limit});
}

BENCHMARK(small_vm)->Arg(10)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(medium_vm)->Arg(10)->Arg(100000)->Unit(benchmark::kMicrosecond);
BENCHMARK(large_vm)->Arg(10)->Arg(100000)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  // As in `vmgate serve`: keep freed heap instead of trimming it back to the kernel after every
  // request (each admission allocates and frees a few 64 KiB RapidJSON pools; trimming them
  // costs page faults worth ~20 us per small VM).
  mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
  mallopt(M_TOP_PAD, 16 * 1024 * 1024);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
