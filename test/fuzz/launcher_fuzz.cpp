// libFuzzer target: arbitrary bytes as a VMI (JSON) through the launcher's pure half: the domain
// XML converter and the volume plan. Any crash, sanitizer report, hang or escaped exception is
// a finding; a VMI the converter accepts must also give either a plan or an error naming a field.
//
//   build-asan/test/fuzz/launcher_fuzz -max_total_time=30 CORPUS_DIR test/fixtures/launcher/golden
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vmgate/common/json_decode.hpp"
#include "vmgate/launcher/converter.hpp"
#include "vmgate/launcher/volume_plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);  // NOLINT: the fuzzer's bytes
  auto vmi = vmgate::json::parse_json(text);
  if (!vmi) {
    return 0;
  }
  vmgate::launcher::ConvertOptions options;
  options.software_emulation = (size % 2) == 0;
  const vmgate::Result<std::string> xml = vmgate::launcher::convert(*vmi, options);
  if (xml && xml->rfind("<domain type=", 0) != 0) {
    std::abort();
  }
  const vmgate::Result<vmgate::launcher::VolumePlan> plan = vmgate::launcher::plan_volumes(*vmi, options.layout);
  if (!plan && plan.error().message.find(": ") == std::string::npos) {
    std::abort();  // every plan error names its field
  }
  return 0;
}
