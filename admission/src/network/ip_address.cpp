// inet_pton is a pure parser: no resolver, no I/O. glibc rejects leading zeros in IPv4 parts,
// as Go's ParseIP does since Go 1.17.
#include "network/ip_address.hpp"

#include <arpa/inet.h>  // pure: inet_pton only

#include <algorithm>
#include <array>
#include <string>

namespace vmgate::admission::validation {

bool is_ip_address(std::string_view text) {
  const std::string address(text);
  std::array<unsigned char, 16> out{};
  return inet_pton(AF_INET, address.c_str(), out.data()) == 1 || inet_pton(AF_INET6, address.c_str(), out.data()) == 1;
}

bool is_ipv4_address(std::string_view text) {
  const std::string address(text);
  std::array<unsigned char, 16> out{};
  if (inet_pton(AF_INET, address.c_str(), out.data()) == 1) {
    return true;
  }
  if (inet_pton(AF_INET6, address.c_str(), out.data()) != 1) {
    return false;
  }
  constexpr std::array<unsigned char, 12> v4_mapped_prefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::equal(v4_mapped_prefix.begin(), v4_mapped_prefix.end(), out.begin());
}

}  // namespace vmgate::admission::validation
