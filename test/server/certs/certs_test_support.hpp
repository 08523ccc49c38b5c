#pragma once
// Certificates for the `vmgate certs` tests, issued by the code under test (tls.hpp).
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "vmgate/server/certs_plan.hpp"

namespace vmgate::certs::testing {

inline std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

/// A CA and a leaf signed by it, for `dns` and `ip`, valid for the given seconds from now.
FreshPair issue_pair(const std::vector<std::string>& dns, const std::vector<std::string>& ip = {},
                     std::int64_t ca_seconds = 365 * 86400, std::int64_t leaf_seconds = 90 * 86400);

}  // namespace vmgate::certs::testing
