// common::ascii_lower and equals_ignoring_ascii_case.
#include "vmgate/common/ascii.hpp"

#include <gtest/gtest.h>

namespace vmgate::testing {
namespace {

TEST(Ascii, LowerFoldsOnlyTheLettersAToZ) {
  EXPECT_EQ(common::ascii_lower('A'), 'a');
  EXPECT_EQ(common::ascii_lower('Z'), 'z');
  EXPECT_EQ(common::ascii_lower('a'), 'a');
  EXPECT_EQ(common::ascii_lower('@'), '@');        // just before 'A'
  EXPECT_EQ(common::ascii_lower('['), '[');        // just after 'Z'
  EXPECT_EQ(common::ascii_lower('\xC4'), '\xC4');  // a byte of UTF-8 text stays as it is
}

TEST(Ascii, EqualsIgnoringCaseComparesKindNamesAsKubeVirtDoes) {
  EXPECT_TRUE(
      common::equals_ignoring_ascii_case("VirtualMachineClusterInstancetype", "virtualmachineclusterinstancetype"));
  EXPECT_TRUE(common::equals_ignoring_ascii_case("DataSource", "datasource"));
  EXPECT_TRUE(common::equals_ignoring_ascii_case("", ""));
  EXPECT_FALSE(common::equals_ignoring_ascii_case("datasource", "datasources"));
  EXPECT_FALSE(common::equals_ignoring_ascii_case("datasource", "datasourcf"));
  // Only ASCII letters fold: "İ" (U+0130) is not "i".
  EXPECT_FALSE(common::equals_ignoring_ascii_case("\xC4\xB0", "i"));
  EXPECT_FALSE(
      common::equals_ignoring_ascii_case("\xC4\xB0"
                                         "d",
                                         "\xC4\xB1"
                                         "d"));
}

}  // namespace
}  // namespace vmgate::testing
