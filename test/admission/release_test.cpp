// Tests of release.hpp: the spellings --kubevirt-version and status.observedKubeVirtVersion take,
// and the refusal of what vmgate does not model.
#include "vmgate/admission/release.hpp"

#include <gtest/gtest.h>

#include <string_view>

namespace vmgate::admission {
namespace {

TEST(Release, TheSpellingsOfV17V18AndMain) {
  for (std::string_view text : {"v1.8", "1.8", "v1.8.2", "1.8.0", "v1.8.0-rc.1", "v1.8.4+abc"}) {
    Result<Release> release = parse_release(text);
    ASSERT_TRUE(release.ok()) << text << ": " << release.error().message;
    EXPECT_EQ(*release, Release::v1_8) << text;
  }
  for (std::string_view text : {"v1.7", "1.7", "v1.7.0", "1.7.3"}) {
    Result<Release> release = parse_release(text);
    ASSERT_TRUE(release.ok()) << text << ": " << release.error().message;
    EXPECT_EQ(*release, Release::v1_7) << text;
  }
  Result<Release> main = parse_release("main");
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(*main, Release::main);
  EXPECT_EQ(to_string(Release::v1_7), "v1.7");
  EXPECT_EQ(to_string(Release::v1_8), "v1.8");
  EXPECT_EQ(to_string(Release::main), "main");
}

TEST(Release, UnsupportedAndMalformedVersionsAreRefusedWithTheSupportedList) {
  Result<Release> old = parse_release("v1.6.3");
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().message, "KubeVirt version \"v1.6.3\" is not supported (supported: v1.7, v1.8, main)");
  for (std::string_view text : {"", "v", "1", "v1.8.", "v1..8", "1.x", "latest", "Main", "v1.8.2.1", "v-1.8"}) {
    Result<Release> release = parse_release(text);
    ASSERT_FALSE(release.ok()) << text;
    EXPECT_NE(release.error().message.find("(supported: v1.7, v1.8, main)"), std::string::npos) << text;
  }
}

TEST(Release, TheNearestSupportedReleaseOfAnUnsupportedOne) {
  EXPECT_EQ(nearest_release("v1.6.3"), Release::v1_7);
  EXPECT_EQ(nearest_release("0.59.0"), Release::v1_7);
  EXPECT_EQ(nearest_release("v1.9.0"), Release::main);
  EXPECT_EQ(nearest_release("v2.0.0-alpha.0"), Release::main);
  EXPECT_EQ(nearest_release("devel"), Release::main);
  EXPECT_EQ(nearest_release("v1.10"), Release::main);
}

}  // namespace
}  // namespace vmgate::admission
