// VMI → domain XML conversion time for the largest example VMI (issue 4: under 1 ms).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <sstream>

#include "vmgate/launcher/converter.hpp"
#include "vmgate/launcher/options.hpp"
#include "vmgate/launcher/vmi_source.hpp"

namespace {

std::filesystem::path largest_example() {
  std::filesystem::path largest;
  std::uintmax_t largest_size = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(VMGATE_SOURCE_DIR) /
                                                               "test/fixtures/launcher/examples")) {
    if (entry.file_size() > largest_size) {
      largest_size = entry.file_size();
      largest = entry.path();
    }
  }
  return largest;
}

void convert_largest_example(benchmark::State& state) {
  vmgate::launcher::LauncherOptions options;
  options.vmi_file = largest_example().string();
  std::istringstream no_input;
  auto vmi = vmgate::launcher::load_vmi(options, no_input);
  if (!vmi) {
    state.SkipWithError(vmi.error().message.c_str());
    return;
  }
  state.SetLabel(largest_example().filename().string());
  const vmgate::launcher::ConvertOptions convert_options;
  for (auto _ : state) {
    auto xml = vmgate::launcher::convert(*vmi, convert_options);
    benchmark::DoNotOptimize(xml);
  }
}
BENCHMARK(convert_largest_example)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
