#pragma once
// What the benchmarks share: the harness's AdmissionReview bodies.
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace vmgate::bench {

/// bench/bodies/admissionreview-<size>.json (small, medium, large) in the shared data directory
/// (VMGATE_SHARED_DIR); throws when missing.
inline std::string read_body(const std::string& size) {
  const std::string path = std::string(VMGATE_SHARED_DIR) + "/bench/bodies/admissionreview-" + size + ".json";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path);
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace vmgate::bench
