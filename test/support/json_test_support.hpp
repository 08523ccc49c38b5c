#pragma once
// Helpers shared by the test suites: JSON literals and golden-file paths.
#include <string>
#include <string_view>

#include "vmgate/admission/json.hpp"

namespace vmgate::testing {

/// Parses JSON text written in a test; fails the test (throws) on a syntax error.
json::Document parse(std::string_view text);

/// Compact JSON of a value, for EXPECT_EQ on whole documents.
std::string dump(const json::Value& value);

/// Reads a whole file (test fixtures).
std::string read_file(const std::string& path);

}  // namespace vmgate::testing
