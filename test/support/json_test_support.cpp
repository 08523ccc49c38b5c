#include "support/json_test_support.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace vmgate::testing {

json::Document parse(std::string_view text) {
  json::Document document;
  document.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (document.HasParseError()) {
    throw std::invalid_argument("test JSON does not parse at offset " +
                                std::to_string(document.GetErrorOffset()) + ": " +
                                std::string(text.substr(0, 200)));
  }
  return document;
}

std::string dump(const json::Value& value) { return json::to_string(value); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path);
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace vmgate::testing
