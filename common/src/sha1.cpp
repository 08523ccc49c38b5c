// SHA-1 (sha1.hpp): the scalar rounds, and the SHA extensions' where the CPU has them.
#include "vmgate/common/sha1.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace vmgate::common {
namespace {

#if defined(__x86_64__)
// The SHA extensions (Intel SHA-NI, AMD Zen and later) run a 64-byte block in about a tenth of
// the scalar rounds' instructions. Whether the CPU has them is fixed for the process: an
// immutable local, computed once.
bool cpu_has_sha_extensions() {
  static const bool has = [] {
    unsigned eax = 0;
    unsigned ebx = 0;
    unsigned ecx = 0;
    unsigned edx = 0;
    if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) {
      return false;
    }
    const bool ssse3_and_sse41 = (ecx & (1U << 9U)) != 0 && (ecx & (1U << 19U)) != 0;
    if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) {
      return false;
    }
    return ssse3_and_sse41 && (ebx & (1U << 29U)) != 0;
  }();
  return has;
}

// Rounds 4·first .. 4·first+19 (one SHA-1 round function), four at a time. The message schedule
// runs three groups ahead: msg[g % 4] holds the words of group g when it is reached
// (Intel's "New Instructions Supporting the SHA-1 and SHA-256 Algorithms", the same sequence).
// C arrays: std::array would drop __m128i's alignment attribute.
template <int Function>
__attribute__((target("sha,sse4.1,ssse3"))) void sha1_groups(int first, __m128i& abcd,
                                                             __m128i (&e)[2],      // NOLINT
                                                             __m128i (&msg)[4]) {  // NOLINT
  for (int g = first; g < first + 5; ++g) {
    const auto at = [](int index) { return static_cast<std::size_t>(index % 4); };
    const __m128i current = msg[at(g)];
    __m128i& e_in = e[static_cast<std::size_t>(g % 2)];
    e_in = g == 0 ? _mm_add_epi32(e_in, current) : _mm_sha1nexte_epu32(e_in, current);
    e[static_cast<std::size_t>((g + 1) % 2)] = abcd;
    if (g >= 3) {
      msg[at(g + 1)] = _mm_sha1msg2_epu32(msg[at(g + 1)], current);
    }
    abcd = _mm_sha1rnds4_epu32(abcd, e_in, Function);
    if (g >= 1) {
      msg[at(g + 3)] = _mm_sha1msg1_epu32(msg[at(g + 3)], current);
    }
    if (g >= 2) {
      msg[at(g + 2)] = _mm_xor_si128(msg[at(g + 2)], current);
    }
  }
}

__attribute__((target("sha,sse4.1,ssse3"))) void sha1_compress_with_extensions(std::array<std::uint32_t, 5>& state,
                                                                               const std::uint8_t* block) {
  const __m128i big_endian = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
  __m128i abcd = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state.data())), 0x1B);
  __m128i e[2] = {_mm_set_epi32(static_cast<int>(state[4]), 0, 0, 0), _mm_setzero_si128()};  // NOLINT
  const __m128i abcd_before = abcd;
  const __m128i e_before = e[0];
  __m128i msg[4];  // NOLINT
  for (std::size_t i = 0; i < 4; ++i) {
    msg[i] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * i)), big_endian);
  }
  sha1_groups<0>(0, abcd, e, msg);
  sha1_groups<1>(5, abcd, e, msg);
  sha1_groups<2>(10, abcd, e, msg);
  sha1_groups<3>(15, abcd, e, msg);
  e[0] = _mm_sha1nexte_epu32(e[0], e_before);
  abcd = _mm_shuffle_epi32(_mm_add_epi32(abcd, abcd_before), 0x1B);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state.data()), abcd);
  state[4] = static_cast<std::uint32_t>(_mm_extract_epi32(e[0], 3));
}
#endif

// A block of 64 bytes at a time.
class Sha1 {
 public:
  explicit Sha1(bool use_extensions) : use_extensions_(use_extensions) {}

  std::array<std::uint8_t, 20> digest(std::string_view prefix, std::string_view text) {
    std::uint64_t total = 0;
    for (std::string_view part : {prefix, text}) {
      total += part.size();
      while (!part.empty()) {
        const std::size_t take = std::min(part.size(), block_.size() - filled_);
        std::memcpy(block_.data() + filled_, part.data(), take);
        filled_ += take;
        part.remove_prefix(take);
        if (filled_ == block_.size()) {
          compress();
        }
      }
    }
    // Padding: 0x80, zeros, then the message length in bits, big-endian, ending a block.
    block_[filled_++] = 0x80;
    if (filled_ > block_.size() - 8) {
      std::fill(block_.begin() + static_cast<std::ptrdiff_t>(filled_), block_.end(), std::uint8_t{0});
      compress();
    }
    std::fill(block_.begin() + static_cast<std::ptrdiff_t>(filled_), block_.end() - 8, std::uint8_t{0});
    const std::uint64_t bits = total * 8;
    for (std::size_t i = 0; i < 8; ++i) {
      block_[block_.size() - 1 - i] = static_cast<std::uint8_t>(bits >> (8 * i));
    }
    compress();
    std::array<std::uint8_t, 20> out{};
    for (std::size_t i = 0; i < 5; ++i) {
      for (std::size_t b = 0; b < 4; ++b) {
        out[4 * i + b] = static_cast<std::uint8_t>(state_[i] >> (24 - 8 * b));
      }
    }
    return out;
  }

 private:
  void compress() {
#if defined(__x86_64__)
    if (use_extensions_ && cpu_has_sha_extensions()) {
      sha1_compress_with_extensions(state_, block_.data());
      filled_ = 0;
      return;
    }
#endif
    std::array<std::uint32_t, 80> w{};
    for (std::size_t i = 0; i < 16; ++i) {
      w[i] = static_cast<std::uint32_t>(block_[4 * i]) << 24 | static_cast<std::uint32_t>(block_[4 * i + 1]) << 16 |
             static_cast<std::uint32_t>(block_[4 * i + 2]) << 8 | static_cast<std::uint32_t>(block_[4 * i + 3]);
    }
    for (std::size_t i = 16; i < 80; ++i) {
      w[i] = std::rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    }
    std::uint32_t a = state_[0];
    std::uint32_t b = state_[1];
    std::uint32_t c = state_[2];
    std::uint32_t d = state_[3];
    std::uint32_t e = state_[4];
    // The four rounds as separate loops, so that none tests which round it is in.
    const auto step = [&](std::uint32_t f, std::uint32_t k, std::uint32_t word) {
      const std::uint32_t next = std::rotl(a, 5) + f + e + k + word;
      e = d;
      d = c;
      c = std::rotl(b, 30);
      b = a;
      a = next;
    };
    for (std::size_t i = 0; i < 20; ++i) {
      step((b & c) | (~b & d), 0x5A827999, w[i]);
    }
    for (std::size_t i = 20; i < 40; ++i) {
      step(b ^ c ^ d, 0x6ED9EBA1, w[i]);
    }
    for (std::size_t i = 40; i < 60; ++i) {
      step((b & c) | (b & d) | (c & d), 0x8F1BBCDC, w[i]);
    }
    for (std::size_t i = 60; i < 80; ++i) {
      step(b ^ c ^ d, 0xCA62C1D6, w[i]);
    }
    state_[0] += a;
    state_[1] += b;
    state_[2] += c;
    state_[3] += d;
    state_[4] += e;
    filled_ = 0;
  }

  std::array<std::uint32_t, 5> state_{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::array<std::uint8_t, 64> block_{};
  std::size_t filled_ = 0;
  bool use_extensions_ = true;
};

}  // namespace

std::array<std::uint8_t, 20> sha1(std::string_view prefix, std::string_view text) {
  return Sha1(true).digest(prefix, text);
}

std::array<std::uint8_t, 20> sha1_scalar(std::string_view prefix, std::string_view text) {
  return Sha1(false).digest(prefix, text);
}

}  // namespace vmgate::common
