#include "support/temporary_directory.hpp"

#include <stdlib.h>  // mkdtemp

#include <fstream>
#include <stdexcept>
#include <string>

namespace vmgate::testing {

TemporaryDirectory::TemporaryDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "vmgate-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

void write_text(const std::filesystem::path& path, std::string_view content) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << content;
  if (!file) {
    throw std::runtime_error("cannot write " + path.string());
  }
}

}  // namespace vmgate::testing
