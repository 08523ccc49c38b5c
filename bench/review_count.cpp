// A deterministic driver for instruction counts of webhook::review (callgrind, where the machine
// has no hardware counters): runs `review` ITERATIONS times on one benchmark body against the
// common-instancetypes objects, as review_* in pipeline_bench does, and nothing else.
//
//   valgrind --tool=callgrind --toggle-collect='vmgate::webhook::review*' build/bench/review_count mutate small 20
//
// Instructions per request: the collected total over ITERATIONS (or, to drop the first call's
// one-off costs, the difference between two iteration counts over their difference).
#include <malloc.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "bench/bench_support.hpp"
#include "vmgate/kube/cluster_loader.hpp"
#include "vmgate/server/admission_review.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: review_count mutate|validate small|medium|large ITERATIONS\n";
    return 2;
  }
  const std::string stage = argv[1];
  const vmgate::webhook::Endpoint endpoint =
      stage == "validate" ? vmgate::webhook::Endpoint::vm_validate : vmgate::webhook::Endpoint::vm_mutate;
  const std::string body = vmgate::bench::read_body(argv[2]);
  const int iterations = std::atoi(argv[3]);
  mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);  // as vmgate serve and pipeline_bench
  mallopt(M_TOP_PAD, 16 * 1024 * 1024);
  const vmgate::admission::Pipeline pipeline;
  std::istringstream no_stdin;
  auto cluster = vmgate::kube::load_cluster({std::string(VMGATE_SHARED_DIR) + "/data/common-instancetypes"}, "default",
                                            pipeline, no_stdin);
  if (!cluster) {
    std::cerr << cluster.error().message << '\n';
    return 1;
  }
  std::size_t answer_bytes = 0;
  const vmgate::webhook::ReviewOptions options;
  vmgate::webhook::ReviewScratch scratch;  // kept across requests, as vmgate serve's scratch pool keeps it
  for (int i = 0; i < iterations; ++i) {
    vmgate::webhook::ReviewResult result =
        vmgate::webhook::review(endpoint, body, pipeline, cluster->store, options, scratch);
    if (result.answer.status != 200) {
      std::cerr << result.answer.body << '\n';
      return 1;
    }
    answer_bytes += result.answer.body.size();
  }
  std::cout << answer_bytes << '\n';
  return 0;
}
