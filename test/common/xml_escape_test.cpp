#include "vmgate/common/xml_escape.hpp"

#include <gtest/gtest.h>

namespace vmgate::common {
namespace {

TEST(XmlEscape, ReplacesTheFiveCharactersXmlReserves) {
  EXPECT_EQ(xml_escaped(R"(<a href="x">Tom & Jerry's</a>)"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&apos;s&lt;/a&gt;");
}

TEST(XmlEscape, LeavesEverythingElse) {
  EXPECT_EQ(xml_escaped("EPYC-Rome v1 \xc3\xa9 \t"), "EPYC-Rome v1 \xc3\xa9 \t");
  EXPECT_EQ(xml_escaped(""), "");
}

TEST(XmlEscape, AppendsToWhatIsThere) {
  std::string out = "<model>";
  append_xml_escaped(out, "a&b");
  EXPECT_EQ(out, "<model>a&amp;b");
}

}  // namespace
}  // namespace vmgate::common
