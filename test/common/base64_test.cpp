#include "vmgate/common/base64.hpp"

#include <gtest/gtest.h>

#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace vmgate::common {
namespace {

// RFC 4648 §10 and the alphabet's edges, each checked in both directions.
const std::array<std::pair<std::string_view, std::string_view>, 11> vectors = {{
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
    {"\xfb\xff\xbf", "+/+/"},
    {std::string_view("\0\0\0", 3), "AAAA"},
    {"\xff", "/w=="},
    {R"([{"op":"add","path":"/a","value":1}])", "W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EiLCJ2YWx1ZSI6MX1d"},
}};

TEST(Base64, EncodesAndDecodesTheVectors) {
  for (const auto& [plain, encoded] : vectors) {
    EXPECT_EQ(base64_encode(plain), encoded);
    EXPECT_EQ(base64_decode(encoded), plain) << encoded;
  }
}

TEST(Base64, RoundTripsEveryByteAtEveryLength) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) {
    bytes += static_cast<char>(i);
  }
  for (std::size_t length = 0; length <= bytes.size(); ++length) {
    const std::string_view input = std::string_view(bytes).substr(0, length);
    const std::string encoded = base64_encode(input);
    ASSERT_EQ(encoded.size(), (length + 2) / 3 * 4);
    ASSERT_EQ(base64_decode(encoded), input) << length;
  }
}

TEST(Base64, EncodesIntoABufferAsIntoAString) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) {
    bytes += static_cast<char>(255 - i);
  }
  for (std::size_t length = 0; length <= 16; ++length) {
    const std::string_view input = std::string_view(bytes).substr(0, length);
    ASSERT_EQ(base64_encoded_size(length), (length + 2) / 3 * 4);
    std::string buffer = "<" + std::string(base64_encoded_size(length), '?') + ">";
    base64_encode_into(input, std::span<char>(buffer).subspan(1, base64_encoded_size(length)));
    EXPECT_EQ(buffer, "<" + base64_encode(input) + ">") << length;
  }
  for (const auto& [plain, encoded] : vectors) {
    std::string buffer(base64_encoded_size(plain.size()), '?');
    base64_encode_into(plain, buffer);
    EXPECT_EQ(buffer, encoded);
  }
}

TEST(Base64, EncodingIntoABufferOfTheWrongSizeIsRefused) {
  std::string small(3, '?');
  EXPECT_THROW(base64_encode_into("foo", small), std::invalid_argument);
  EXPECT_EQ(small, "???");
  std::string large(5, '?');
  EXPECT_THROW(base64_encode_into("foo", large), std::invalid_argument);
}

TEST(Base64Decode, SkipsLineBreaksAsGoDoes) {
  EXPECT_EQ(base64_decode("Zm9v\nYmFy\r\n"), "foobar");
}

TEST(Base64Decode, RejectsWhatGoRejects) {
  EXPECT_EQ(base64_decode("Zm9"), std::nullopt);        // unpadded
  EXPECT_EQ(base64_decode("Zm9v YmFy"), std::nullopt);  // a space is not skipped
  EXPECT_EQ(base64_decode("Zm-v"), std::nullopt);       // URL alphabet
  EXPECT_EQ(base64_decode("Z==="), std::nullopt);
}

}  // namespace
}  // namespace vmgate::common
