#include "vmgate/admission/base64.hpp"

#include <gtest/gtest.h>

namespace vmgate::admission {
namespace {

TEST(Base64Decode, Rfc4648Vectors) {
  EXPECT_EQ(base64_decode(""), "");
  EXPECT_EQ(base64_decode("Zg=="), "f");
  EXPECT_EQ(base64_decode("Zm8="), "fo");
  EXPECT_EQ(base64_decode("Zm9v"), "foo");
  EXPECT_EQ(base64_decode("Zm9vYg=="), "foob");
  EXPECT_EQ(base64_decode("Zm9vYmE="), "fooba");
  EXPECT_EQ(base64_decode("Zm9vYmFy"), "foobar");
  EXPECT_EQ(base64_decode("+/+/"), "\xfb\xff\xbf");
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
}  // namespace vmgate::admission
