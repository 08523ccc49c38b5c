#include "vmgate/kube/yaml_scalar.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>

namespace vmgate::kube {
namespace {

// The expected value rendered compactly: null, true, int:8, uint:18446744073709551615,
// float:1.5, str:text.
std::string describe(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Kind::null_value:
      return "null";
    case Scalar::Kind::boolean:
      return s.boolean ? "true" : "false";
    case Scalar::Kind::int64:
      return "int:" + std::to_string(s.int64);
    case Scalar::Kind::uint64:
      return "uint:" + std::to_string(s.uint64);
    case Scalar::Kind::float64:
      if (std::isnan(s.float64)) {
        return "float:nan";
      }
      if (std::isinf(s.float64)) {
        return s.float64 > 0 ? "float:+inf" : "float:-inf";
      }
      {
        std::ostringstream out;
        out << "float:" << s.float64;
        return out.str();
      }
    case Scalar::Kind::string:
      break;
  }
  return "str:" + s.string;
}

struct Case {
  std::string tag;
  std::string text;
  std::string expected;  // describe() of the result, or "error:<message>"
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.tag << " `" << c.text << "`";
}

class ResolveScalar : public ::testing::TestWithParam<Case> {};

TEST_P(ResolveScalar, AsGoYamlV2) {
  const Case& c = GetParam();
  Result<Scalar> resolved = resolve_scalar(c.tag, c.text);
  if (!resolved) {
    EXPECT_EQ("error:" + resolved.error().message, c.expected);
    return;
  }
  EXPECT_EQ(describe(*resolved), c.expected);
}

const std::string plain(plain_tag);
const std::string quoted(non_specific_tag);
const std::string str_tag = std::string(yaml_tag_prefix) + "str";
const std::string int_tag = std::string(yaml_tag_prefix) + "int";
const std::string float_tag = std::string(yaml_tag_prefix) + "float";
const std::string bool_tag = std::string(yaml_tag_prefix) + "bool";
const std::string null_tag = std::string(yaml_tag_prefix) + "null";
const std::string binary_tag = std::string(yaml_tag_prefix) + "binary";

INSTANTIATE_TEST_SUITE_P(
    Plain, ResolveScalar,
    ::testing::Values(
        // null
        Case{plain, "", "null"}, Case{plain, "~", "null"}, Case{plain, "null", "null"}, Case{plain, "Null", "null"},
        Case{plain, "NULL", "null"}, Case{plain, "nULL", "str:nULL"},
        // YAML 1.1 booleans, only the case variants go-yaml v2 lists
        Case{plain, "yes", "true"}, Case{plain, "Yes", "true"}, Case{plain, "YES", "true"}, Case{plain, "y", "true"},
        Case{plain, "Y", "true"}, Case{plain, "on", "true"}, Case{plain, "ON", "true"}, Case{plain, "true", "true"},
        Case{plain, "True", "true"}, Case{plain, "no", "false"}, Case{plain, "n", "false"}, Case{plain, "N", "false"},
        Case{plain, "off", "false"}, Case{plain, "Off", "false"}, Case{plain, "FALSE", "false"},
        Case{plain, "yEs", "str:yEs"}, Case{plain, "tRUE", "str:tRUE"}, Case{plain, "yes please", "str:yes please"},
        // integers: strconv.ParseInt base 0 after removing underscores
        Case{plain, "0", "int:0"}, Case{plain, "42", "int:42"}, Case{plain, "-42", "int:-42"},
        Case{plain, "+42", "int:42"}, Case{plain, "0x1f", "int:31"}, Case{plain, "0X1F", "int:31"},
        Case{plain, "-0x1f", "int:-31"}, Case{plain, "010", "int:8"}, Case{plain, "0o17", "int:15"},
        Case{plain, "0b101", "int:5"}, Case{plain, "-0b101", "int:-5"}, Case{plain, "1_000", "int:1000"},
        Case{plain, "9223372036854775807", "int:9223372036854775807"},
        Case{plain, "-9223372036854775808", "int:-9223372036854775808"},
        Case{plain, "9223372036854775808", "uint:9223372036854775808"},
        Case{plain, "18446744073709551615", "uint:18446744073709551615"},
        // beyond uint64: a float when written like one, else a string
        Case{plain, "18446744073709551616", "float:1.84467e+19"},
        Case{plain, "0x1ffffffffffffffff", "str:0x1ffffffffffffffff"}, Case{plain, "08", "float:8"},
        Case{plain, "0x", "str:0x"}, Case{plain, "0xg", "str:0xg"},
        // floats
        Case{plain, "1.5", "float:1.5"}, Case{plain, "1e3", "float:1000"}, Case{plain, "-1.5e-3", "float:-0.0015"},
        Case{plain, ".5", "float:0.5"}, Case{plain, "+.5", "float:0.5"}, Case{plain, "1.", "float:1"},
        Case{plain, ".inf", "float:+inf"}, Case{plain, "-.Inf", "float:-inf"}, Case{plain, "+.INF", "float:+inf"},
        Case{plain, ".nan", "float:nan"}, Case{plain, ".NaN", "float:nan"}, Case{plain, "1e400", "str:1e400"},
        Case{plain, "1e-400", "float:0"}, Case{plain, "inf", "str:inf"}, Case{plain, "NaN", "str:NaN"},
        Case{plain, ".", "str:."}, Case{plain, "1.2.3", "str:1.2.3"},
        // strings that look like something else to other readers
        Case{plain, "1:20", "str:1:20"}, Case{plain, "2001-12-14", "str:2001-12-14"},
        Case{plain, "2001-12-14t21:59:43.10-05:00", "str:2001-12-14t21:59:43.10-05:00"}, Case{plain, "-", "str:-"},
        Case{plain, "<<", "str:<<"}, Case{plain, "_1", "str:_1"}, Case{plain, "u1.medium", "str:u1.medium"},
        Case{plain, "1Gi", "str:1Gi"}, Case{plain, "500m", "str:500m"}));

INSTANTIATE_TEST_SUITE_P(
    Tagged, ResolveScalar,
    ::testing::Values(
        Case{quoted, "yes", "str:yes"}, Case{quoted, "1", "str:1"}, Case{quoted, "", "str:"},
        Case{quoted, "~", "str:~"}, Case{str_tag, "true", "str:true"}, Case{str_tag, "010", "str:010"},
        Case{int_tag, "0x10", "int:16"}, Case{int_tag, "1.5", "error:cannot decode !!float `1.5` as a !!int"},
        Case{int_tag, "abc", "error:cannot decode !!str `abc` as a !!int"}, Case{float_tag, "1", "float:1"},
        Case{float_tag, "2.5", "float:2.5"}, Case{float_tag, "yes", "error:cannot decode !!bool `yes` as a !!float"},
        Case{bool_tag, "on", "true"}, Case{bool_tag, "1", "error:cannot decode !!int `1` as a !!bool"},
        Case{null_tag, "~", "null"}, Case{null_tag, "", "null"},
        Case{null_tag, "x", "error:cannot decode !!str `x` as a !!null"}, Case{binary_tag, "aGVsbG8=", "str:hello"},
        Case{binary_tag, "aGVsbG8", "error:!!binary value contains invalid base64 data"},
        Case{"!local", "123", "str:123"},
        Case{std::string(yaml_tag_prefix) + "timestamp", "2001-12-14", "str:2001-12-14"}));

TEST(PlainScalarIsString, FalseForEverythingAReaderTypes) {
  for (const char* text : {"", "true", "yes", "Y", "off", "1", "-1", "0x1f", "010", "1e3", ".5", "~", "null", "NULL",
                           ".inf", ".nan", "<<", "1_000"}) {
    EXPECT_FALSE(plain_scalar_is_string(text)) << text;
  }
  for (const char* text :
       {"abc", "u1.medium", "1Gi", "kubevirt.io/v1", "2001-12-14", "yes please", "0x", "-", "1e400"}) {
    EXPECT_TRUE(plain_scalar_is_string(text)) << text;
  }
}

TEST(FloatKey, MatchesGoFormatFloatG32) {
  EXPECT_EQ(float_key(1.5), "1.5");
  EXPECT_EQ(float_key(1000), "1000");
  EXPECT_EQ(float_key(100000), "100000");
  EXPECT_EQ(float_key(1e6), "1e+06");
  EXPECT_EQ(float_key(0.1), "0.1");
  EXPECT_EQ(float_key(0.0001), "0.0001");
  EXPECT_EQ(float_key(0.00001), "1e-05");
  EXPECT_EQ(float_key(-2.5), "-2.5");
  EXPECT_EQ(float_key(3.14159265358979), "3.1415927");
  EXPECT_EQ(float_key(1.5e20), "1.5e+20");
  EXPECT_EQ(float_key(0), "0");
  EXPECT_EQ(float_key(std::numeric_limits<double>::infinity()), ".inf");
  EXPECT_EQ(float_key(-std::numeric_limits<double>::infinity()), "-.inf");
  EXPECT_EQ(float_key(std::numeric_limits<double>::quiet_NaN()), ".nan");
}

}  // namespace
}  // namespace vmgate::kube
