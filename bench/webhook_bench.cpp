// What `vmgate serve` spends per request outside TLS and HTTP: webhook::review (decode the
// AdmissionReview, run the endpoint's stage, encode the answer) on the benchmark harness's
// bodies, against the common-instancetypes objects the server is benchmarked with.
//
//   build/bench/pipeline_bench --benchmark_filter=review
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "bench/bench_support.hpp"
#include "vmgate/server/admission_review.hpp"
#include "vmgate/kube/cluster_loader.hpp"

namespace {

const vmgate::kube::LoadedCluster& common_instancetypes() {
  static const vmgate::kube::LoadedCluster cluster = [] {
    const vmgate::admission::Pipeline pipeline;
    std::istringstream no_stdin;
    auto loaded = vmgate::kube::load_cluster({std::string(VMGATE_SHARED_DIR) + "/data/common-instancetypes"}, "default",
                                             pipeline, no_stdin);
    if (!loaded) {
      throw std::runtime_error(loaded.error().message);
    }
    return std::move(loaded.value());
  }();
  return cluster;
}

void review(benchmark::State& state, vmgate::webhook::Endpoint endpoint, const std::string& size) {
  const std::string body = vmgate::bench::read_body(size);
  const vmgate::admission::Pipeline pipeline;
  const vmgate::kube::LoadedCluster& cluster = common_instancetypes();
  const vmgate::webhook::ReviewOptions options;
  vmgate::webhook::ReviewScratch scratch;  // kept across requests, as vmgate serve's scratch pool keeps it
  for (auto _ : state) {
    vmgate::webhook::ReviewResult result =
        vmgate::webhook::review(endpoint, body, pipeline, cluster.store, options, scratch);
    if (result.answer.status != 200) {
      state.SkipWithError(result.answer.body.c_str());
      break;
    }
    benchmark::DoNotOptimize(result);
  }
}

void review_mutate_small(benchmark::State& state) {
  review(state, vmgate::webhook::Endpoint::vm_mutate, "small");
}
void review_mutate_medium(benchmark::State& state) {
  review(state, vmgate::webhook::Endpoint::vm_mutate, "medium");
}
void review_mutate_large(benchmark::State& state) {
  review(state, vmgate::webhook::Endpoint::vm_mutate, "large");
}
void review_validate_small(benchmark::State& state) {
  review(state, vmgate::webhook::Endpoint::vm_validate, "small");
}

}  // namespace

BENCHMARK(review_mutate_small)->Unit(benchmark::kMicrosecond);
BENCHMARK(review_mutate_medium)->Unit(benchmark::kMicrosecond);
BENCHMARK(review_mutate_large)->Unit(benchmark::kMicrosecond);
BENCHMARK(review_validate_small)->Unit(benchmark::kMicrosecond);
