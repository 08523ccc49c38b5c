// Tests of apimachinery's IsQualifiedName and IsValidLabelValue.
#include "vmgate/admission/validation/label_names.hpp"

#include <gtest/gtest.h>

namespace vmgate::admission::validation {
namespace {

const std::string name_regex =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
    "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

TEST(ValidationLabelNames, QualifiedNames) {
  for (std::string_view good : {"zone", "topology.kubernetes.io/zone", "a_b.c-d", "x/Y"}) {
    EXPECT_TRUE(qualified_name_errors(good).empty()) << good;
  }
  EXPECT_EQ(qualified_name_errors(""),
            (std::vector<std::string>{"name part must be non-empty", "name part " + name_regex}));
  EXPECT_EQ(qualified_name_errors("-zone"), (std::vector<std::string>{"name part " + name_regex}));
  EXPECT_EQ(qualified_name_errors(std::string(64, 'a')),
            (std::vector<std::string>{"name part must be no more than 63 characters"}));
  EXPECT_EQ(qualified_name_errors("/zone"), (std::vector<std::string>{"prefix part must be non-empty"}));
  EXPECT_EQ(qualified_name_errors("Example.com/zone").size(), 1U);
  EXPECT_EQ(qualified_name_errors("a/b/c"),
            (std::vector<std::string>{"a qualified name " + name_regex +
                                      " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}));
}

TEST(ValidationLabelNames, LabelValues) {
  for (std::string_view good : {"", "v1", "my_value", "12345"}) {
    EXPECT_TRUE(label_value_errors(good).empty()) << good;
  }
  EXPECT_EQ(label_value_errors("bad value").size(), 1U);
  EXPECT_EQ(label_value_errors(std::string(64, 'a')), (std::vector<std::string>{"must be no more than 63 characters"}));
}

}  // namespace
}  // namespace vmgate::admission::validation
