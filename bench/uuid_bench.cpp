// The name-based UUIDs of the VM mutator's firmware ids: vmgate's SHA-1 (the SHA extensions where
// the CPU has them) against Boost's name generator, which it replaced. callgrind cannot compare
// them: valgrind hides the SHA extensions and runs the scalar fallback.
//
//   build/bench/pipeline_bench --benchmark_filter=uuid
#include <benchmark/benchmark.h>

#include <boost/uuid/name_generator_sha1.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <string>

#include "vmgate/admission/defaults/vm.hpp"

namespace {

// The seed of a VM with a metadata.uid, as set_vm_firmware_ids builds it (two SHA-1 blocks).
const std::string seed = "uid:6f1d2c3b-4a59-4e8f-9b7a-0c1d2e3f4a5b#firmware-serial";

void uuid_vmgate(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(vmgate::admission::defaults::name_based_uuid(seed));
  }
}

void uuid_boost(benchmark::State& state) {
  const boost::uuids::uuid vmgate_namespace{
      {0x6c, 0x1e, 0x4f, 0x8a, 0x3b, 0x52, 0x5d, 0x7e, 0x9a, 0x0f, 0x2d, 0x61, 0x4b, 0x83, 0xc5, 0x17}};
  const boost::uuids::name_generator_sha1 generate(vmgate_namespace);
  for (auto _ : state) {
    benchmark::DoNotOptimize(boost::uuids::to_string(generate(seed.data(), seed.size())));
  }
}

}  // namespace

BENCHMARK(uuid_vmgate);
BENCHMARK(uuid_boost);
