// SHA-1 against FIPS 180's examples and Boost's, across block boundaries (the padding's 9 bytes
// fall in one block or spill into the next).
#include "vmgate/common/sha1.hpp"

#include <gtest/gtest.h>

#include <boost/uuid/detail/sha1.hpp>
#include <array>
#include <cstdio>
#include <string>

namespace vmgate::common {
namespace {

std::string hex(const std::array<std::uint8_t, 20>& digest) {
  constexpr std::string_view digits = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t byte : digest) {
    out += digits[byte >> 4U];
    out += digits[byte & 0x0FU];
  }
  return out;
}

using Digest = std::array<std::uint8_t, 20> (*)(std::string_view, std::string_view);
constexpr Digest engines[] = {sha1, sha1_scalar};

TEST(Sha1, FipsExamples) {
  for (const Digest digest : engines) {
    EXPECT_EQ(hex(digest("", "")), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    EXPECT_EQ(hex(digest("abc", "")), "a9993e364706816aba3e25717850c26c9cd0d89d");
    EXPECT_EQ(hex(digest("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "")),
              "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    EXPECT_EQ(hex(digest(std::string(1000000, 'a'), "")), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  }
}

TEST(Sha1, TwoPartsAreTheirConcatenation) {
  EXPECT_EQ(hex(sha1("ab", "c")), hex(sha1("abc")));
  EXPECT_EQ(hex(sha1("", "abc")), hex(sha1("abc")));
  const std::string long_text(150, 'x');
  EXPECT_EQ(hex(sha1(long_text.substr(0, 63), long_text.substr(63))), hex(sha1(long_text)));
}

TEST(Sha1, AgreesWithBoostAtEveryLengthOfThreeBlocks) {
  std::string text;
  for (int length = 0; length <= 200; ++length) {
    boost::uuids::detail::sha1 reference;
    reference.process_bytes(text.data(), text.size());
    boost::uuids::detail::sha1::digest_type words{};
    reference.get_digest(words);
    std::string expected;
    for (const auto word : words) {
      std::array<char, 9> part{};
      std::snprintf(part.data(), part.size(), "%08x", static_cast<unsigned>(word));
      expected += part.data();
    }
    EXPECT_EQ(hex(sha1(text)), expected) << length;
    EXPECT_EQ(hex(sha1_scalar(text)), expected) << length;
    text += static_cast<char>('a' + length % 26);
  }
}

}  // namespace
}  // namespace vmgate::common
