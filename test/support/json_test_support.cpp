#include "support/json_test_support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "vmgate/common/base64.hpp"
#include "support/json_pointer.hpp"

namespace vmgate::testing {

json::Document parse(std::string_view text) {
  json::Document document;
  document.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (document.HasParseError()) {
    throw std::invalid_argument("test JSON does not parse at offset " + std::to_string(document.GetErrorOffset()) +
                                ": " + std::string(text.substr(0, 200)));
  }
  return document;
}

std::string dump(const json::Value& value) {
  return json::to_string(value);
}

::testing::AssertionResult json_equals(const json::Value& actual, std::string_view expected) {
  const json::Document wanted = parse(expected);
  if (json::equal(actual, wanted)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "\n  actual:   " << dump(actual) << "\n  expected: " << dump(wanted);
}

::testing::AssertionResult json_equals(const json::Value* actual, std::string_view expected) {
  if (actual == nullptr) {
    return ::testing::AssertionFailure() << "member absent, expected " << expected;
  }
  return json_equals(*actual, expected);
}

std::string text(const json::Value& root, const char* pointer) {
  const json::Value* value = resolve(root, pointer);
  if (value == nullptr) {
    return "<absent>";
  }
  return value->IsString() ? std::string(json::as_view(*value)) : dump(*value);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path);
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string base64_decode(std::string_view encoded) {
  std::optional<std::string> decoded = common::base64_decode(encoded);
  if (!decoded) {
    throw std::invalid_argument("not valid base64: " + std::string(encoded.substr(0, 40)));
  }
  return *decoded;
}

std::vector<JsonFile> repository_json_files() {
  std::vector<JsonFile> files;
  for (const std::filesystem::path& root :
       {std::filesystem::path(VMGATE_SOURCE_DIR) / "test/fixtures", std::filesystem::path(VMGATE_SHARED_DIR)}) {
    if (!std::filesystem::exists(root)) {
      continue;
    }
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") {
        files.push_back(JsonFile{entry.path().string(), read_file(entry.path().string())});
      }
    }
  }
  std::sort(files.begin(), files.end(), [](const JsonFile& a, const JsonFile& b) { return a.path < b.path; });
  return files;
}

}  // namespace vmgate::testing
