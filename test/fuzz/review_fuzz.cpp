// libFuzzer target: arbitrary bytes as the body of each of the four webhooks, through the
// AdmissionReview decoder and the whole admission pipeline, against the golden fixtures'
// cluster. Any crash, sanitizer report, hang or escaped exception is a finding; every answer
// must be a well-formed HTTP answer with a JSON body.
//
//   build-asan/test/fuzz/review_fuzz -max_total_time=60 CORPUS_DIR test/fixtures/webhook
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>

#include "vmgate/common/json_decode.hpp"
#include "vmgate/server/admission_review.hpp"
#include "vmgate/kube/cluster_loader.hpp"

namespace {

struct Fixture {
  vmgate::admission::Pipeline pipeline;
  vmgate::kube::LoadedCluster cluster;
};

const Fixture& fixture() {
  // Built once per process: the harness's only state, read-only afterwards.
  static const Fixture built = [] {
    Fixture result;
    std::istringstream no_stdin;
    auto loaded = vmgate::kube::load_cluster({std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/webhook/cluster.json"},
                                             "default", result.pipeline, no_stdin);
    if (!loaded) {
      std::abort();
    }
    result.cluster = std::move(loaded.value());
    return result;
  }();
  return built;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Fixture& built = fixture();
  const std::string_view body(reinterpret_cast<const char*>(data), size);  // NOLINT: the fuzzer's bytes
  for (const vmgate::webhook::Endpoint endpoint :
       {vmgate::webhook::Endpoint::vm_mutate, vmgate::webhook::Endpoint::vm_validate,
        vmgate::webhook::Endpoint::vmi_mutate, vmgate::webhook::Endpoint::vmi_validate}) {
    const vmgate::webhook::ReviewResult result =
        vmgate::webhook::review(endpoint, body, built.pipeline, built.cluster.store);
    const int status = result.answer.status;
    if (status != 200 && status != 400 && status != 500) {
      std::abort();
    }
    if (status == 500) {
      std::abort();  // an exception out of the pipeline: a bug, never the input's fault
    }
    if (!vmgate::json::parse_json(result.answer.body)) {
      std::abort();
    }
  }
  return 0;
}
