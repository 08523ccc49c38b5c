// common::go_lower_equals and go_equal_fold against what Go's strings.ToLower and
// strings.EqualFold answer (go1.26, every rune checked: only U+0130 and U+212A lower into ASCII,
// only U+017F and U+212A fold with an ASCII letter).
#include "vmgate/common/go_strings.hpp"

#include <gtest/gtest.h>

namespace vmgate::testing {
namespace {

constexpr std::string_view dotted_capital_i = "\xC4\xB0";  // U+0130
constexpr std::string_view kelvin_sign = "\xE2\x84\xAA";   // U+212A
constexpr std::string_view long_s = "\xC5\xBF";            // U+017F

std::string with(std::string_view before, std::string_view rune, std::string_view after) {
  return std::string(before) + std::string(rune) + std::string(after);
}

TEST(GoStrings, LowerEqualsFoldsAsciiLetters) {
  EXPECT_TRUE(common::go_lower_equals("VirtualMachineInstancetype", "virtualmachineinstancetype"));
  EXPECT_TRUE(common::go_lower_equals("virtualmachineinstancetype", "virtualmachineinstancetype"));
  EXPECT_TRUE(common::go_lower_equals("", ""));
  EXPECT_FALSE(common::go_lower_equals("VirtualMachineInstancetypes", "virtualmachineinstancetype"));
  EXPECT_FALSE(common::go_lower_equals("VirtualMachineInstancetype", "virtualmachineinstancetypes"));
  EXPECT_FALSE(common::go_lower_equals("", "a"));
  EXPECT_FALSE(common::go_lower_equals("a", ""));
}

TEST(GoStrings, LowerEqualsMapsTheDottedCapitalIAndTheKelvinSignAsGo) {
  EXPECT_TRUE(
      common::go_lower_equals(with("V", dotted_capital_i, "rtualMachinePreference"), "virtualmachinepreference"));
  EXPECT_TRUE(common::go_lower_equals(with("", kelvin_sign, "ind"), "kind"));
  EXPECT_TRUE(common::go_lower_equals(with("", dotted_capital_i, ""), "i"));
  // U+017F lowers to itself (it is already lower case): not "s" to ToLower.
  EXPECT_FALSE(common::go_lower_equals(with("data", long_s, "ource"), "datasource"));
  // U+0131 (dotless i) and U+0049 U+0307 are not "i".
  EXPECT_FALSE(common::go_lower_equals("\xC4\xB1", "i"));
  EXPECT_FALSE(common::go_lower_equals("I\xCC\x87", "i"));
}

TEST(GoStrings, EqualFoldFoldsTheLongSAndTheKelvinSignAsGo) {
  EXPECT_TRUE(common::go_equal_fold("DataSource", "datasource"));
  EXPECT_TRUE(common::go_equal_fold(with("Data", long_s, "ource"), "datasource"));
  EXPECT_TRUE(common::go_equal_fold(with("", kelvin_sign, ""), "k"));
  // U+0130's fold orbit is itself: EqualFold("İ", "i") is false though ToLower("İ") is "i".
  EXPECT_FALSE(common::go_equal_fold(with("", dotted_capital_i, ""), "i"));
  EXPECT_FALSE(common::go_equal_fold("DataSources", "datasource"));
  EXPECT_FALSE(common::go_equal_fold("DataSourc", "datasource"));
}

TEST(GoStrings, InvalidOrCutUtf8NeverMatches) {
  EXPECT_FALSE(common::go_lower_equals("\xC4", "i"));           // U+0130 cut after its first byte
  EXPECT_FALSE(common::go_lower_equals("\xE2\x84", "k"));       // U+212A cut
  EXPECT_FALSE(common::go_equal_fold("\xC5", "s"));             // U+017F cut
  EXPECT_FALSE(common::go_lower_equals("\xFF", "\xFF"));        // invalid UTF-8 is U+FFFD to Go
  EXPECT_FALSE(common::go_lower_equals("k\xE2\x84\xAA", "k"));  // more runes than letters
}

}  // namespace
}  // namespace vmgate::testing
