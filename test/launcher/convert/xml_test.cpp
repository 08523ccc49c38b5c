#include "vmgate/launcher/xml.hpp"

#include <gtest/gtest.h>

namespace vmgate::launcher {
namespace {

TEST(Xml, EscapesTextAndAttributes) {
  XmlElement root("a");
  root.set_attribute("k", "'\"<&>");
  root.add_child("b").set_text("x<y&z>\"'");
  EXPECT_EQ(root.to_string(), "<a k='&apos;&quot;&lt;&amp;&gt;'>\n  <b>x&lt;y&amp;z&gt;&quot;&apos;</b>\n</a>\n");
}

TEST(Xml, EmptyElementSelfCloses) {
  XmlElement root("acpi");
  EXPECT_EQ(root.to_string(), "<acpi/>\n");
}

TEST(Xml, SetAttributeTwiceReplaces) {
  XmlElement root("a");
  root.set_attribute("k", "1").set_attribute("k", "2");
  EXPECT_EQ(root.to_string(), "<a k='2'/>\n");
}

}  // namespace
}  // namespace vmgate::launcher
