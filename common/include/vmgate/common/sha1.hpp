#pragma once
// SHA-1 (FIPS 180-4), for name-based (version 5) UUIDs: not for security. Boost's
// name_generator_sha1 feeds its SHA-1 one byte per call, which made the two firmware ids of a VM
// cost as much as the rest of its defaults; this one takes 64-byte blocks, on the CPU's SHA
// extensions where it has them (Intel SHA-NI, AMD Zen), and gives the same digest. Pure,
// thread-safe.
#include <array>
#include <cstdint>
#include <string_view>

namespace vmgate::common {

/// SHA-1 of `prefix` followed by `text` (two parts, so that a UUID's namespace and name need no
/// concatenation).
std::array<std::uint8_t, 20> sha1(std::string_view prefix, std::string_view text = {});

/// The same with the scalar rounds only, as on a CPU without the extensions (so that the tests
/// check both on any machine).
std::array<std::uint8_t, 20> sha1_scalar(std::string_view prefix, std::string_view text = {});

}  // namespace vmgate::common
