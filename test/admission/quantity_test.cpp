// Tests of vmgate/admission/quantity.hpp against apimachinery's ParseQuantity and String()
// (k8s.io/apimachinery/pkg/api/resource/quantity_test.go) and vmgate's range rules.
#include "vmgate/admission/quantity.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace vmgate::admission {
namespace {

using Format = Quantity::Format;

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();

const std::string format_error =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const std::string numeric_error = "unable to parse numeric part of quantity";
const std::string suffix_error = "unable to parse quantity's suffix";
const std::string range_error = "quantity out of range";

// Parses text that must be valid; a failure names the text and the error.
Quantity q(std::string_view text) {
  Result<Quantity> parsed = Quantity::parse(text);
  if (!parsed) {
    ADD_FAILURE() << "'" << text << "' did not parse: " << parsed.error().message;
    return Quantity();
  }
  return parsed.value();
}

std::string error_of(std::string_view text) {
  Result<Quantity> parsed = Quantity::parse(text);
  return parsed ? "parsed as " + parsed->to_string() : parsed.error().message;
}

struct ParseCase {
  std::string input;
  std::string string;     // to_string(): Kubernetes String()
  std::string canonical;  // canonical(): CanonicalizeBytes
  Format format;
};

TEST(QuantityParse, PrintsAsKubernetesDoes) {
  const std::vector<ParseCase> cases = {
      // Binary suffixes print with the largest suffix that keeps an integer mantissa.
      {"1Gi", "1Gi", "1Gi", Format::binary_si},
      {"1536Mi", "1536Mi", "1536Mi", Format::binary_si},
      {"1.5Gi", "1536Mi", "1536Mi", Format::binary_si},
      {"0.5Gi", "512Mi", "512Mi", Format::binary_si},
      {"1024Ki", "1Mi", "1Mi", Format::binary_si},
      {"8Ki", "8Ki", "8Ki", Format::binary_si},
      {"7Ei", "7Ei", "7Ei", Format::binary_si},
      {"1.5Ki", "1536", "1536", Format::binary_si},
      // Below 1024, or fractional, a binary amount prints as decimal so nothing is lost.
      {".001Ki", "1024m", "1024m", Format::binary_si},
      {"100.035Ki", "102435840m", "102435840m", Format::binary_si},
      {"0.000000000001Ki", "2n", "2n", Format::decimal_si},  // rounds up, becomes DecimalSI
      // Decimal: exponent a multiple of 3, smallest integer mantissa.
      {"100m", "100m", "100m", Format::decimal_si},
      {"1.5", "1500m", "1500m", Format::decimal_si},
      {"0.1", "100m", "100m", Format::decimal_si},
      {".5", "500m", "500m", Format::decimal_si},
      {"2000", "2k", "2k", Format::decimal_si},
      {"1000M", "1G", "1G", Format::decimal_si},
      {"1025", "1025", "1025", Format::decimal_si},
      {"1.2345", "1234500u", "1234500u", Format::decimal_si},
      {"0.000000001", "1n", "1n", Format::decimal_si},
      {"0.9n", "1n", "1n", Format::decimal_si},
      {"3.001n", "4n", "4n", Format::decimal_si},
      {"0.00000012345", "124n", "124n", Format::decimal_si},
      {"9E", "9E", "9E", Format::decimal_si},
      {"9223372036854775807", "9223372036854775807", "9223372036854775807", Format::decimal_si},
      // Exponents: also multiples of 3, no suffix for e0.
      {"1e3", "1e3", "1e3", Format::decimal_exponent},
      {"15e2", "1500", "1500", Format::decimal_exponent},
      {"1.3E+6", "1300e3", "1300e3", Format::decimal_exponent},
      {"0.5e-1", "50e-3", "50e-3", Format::decimal_exponent},
      {"0.001e-6", "1e-9", "1e-9", Format::decimal_exponent},
      {"1.1E-9", "2e-9", "2e-9", Format::decimal_exponent},
      // apimachinery's fast path keeps these texts as written, and String() returns them.
      {"1E3", "1E3", "1e3", Format::decimal_exponent},
      {"+1", "+1", "1", Format::decimal_si},
      {"5.", "5.", "5", Format::decimal_si},
      {"1.G", "1.G", "1G", Format::decimal_si},
      {"01", "01", "1", Format::decimal_si},
      {"1.500", "1.500", "1500m", Format::decimal_si},
      {"+3Ki", "+3Ki", "3Ki", Format::binary_si},
      // Zero prints "0" whatever its suffix or sign.
      {"0", "0", "0", Format::decimal_si},
      {"0Gi", "0", "0", Format::binary_si},
      {"-0", "0", "0", Format::decimal_si},
      {"0.000e5", "0", "0", Format::decimal_exponent},
      // Negative quantities parse; rules decide whether they are allowed.
      {"-1Gi", "-1Gi", "-1Gi", Format::binary_si},
      {"-1.5", "-1500m", "-1500m", Format::decimal_si},
      {"-8Ei", "-8Ei", "-8Ei", Format::binary_si},
      {"-9223372036854775808", "-9223372036854775808", "-9223372036854775808", Format::decimal_si},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.input);
    Result<Quantity> parsed = Quantity::parse(c.input);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(parsed->to_string(), c.string);
    EXPECT_EQ(parsed->canonical(), c.canonical);
    EXPECT_EQ(parsed->format(), c.format);
    // The printed forms parse back to the same value.
    EXPECT_EQ(q(c.string), *parsed);
    EXPECT_EQ(q(c.canonical), *parsed);
  }
}

TEST(QuantityParse, EqualValuesCompareEqualAcrossFormats) {
  EXPECT_EQ(q("1536Mi"), q("1.5Gi"));
  EXPECT_EQ(q("1e3"), q("1E3"));
  EXPECT_EQ(q("1e3"), q("1k"));
  EXPECT_EQ(q("1000"), q("1k"));
  EXPECT_EQ(q("+1"), q("1"));
  EXPECT_EQ(q("5."), q("5"));
  EXPECT_EQ(q("1.G"), q("1G"));
  EXPECT_EQ(q(".5"), q("500m"));
  EXPECT_EQ(q("1Ki"), q("1024"));
  EXPECT_EQ(q("0.5e-9"), q("1n"));  // rounded up to a whole nano-unit
  EXPECT_NE(q("1Ki"), q("1k"));
  EXPECT_NE(q("1n"), q("2n"));
}

TEST(QuantityParse, NegativeValues) {
  const Quantity negative = q("-1Gi");
  EXPECT_EQ(negative.sign(), -1);
  EXPECT_FALSE(negative.is_zero());
  EXPECT_EQ(negative.value().value(), -1073741824);
  EXPECT_EQ(q("-0.0000000001").to_string(), "-1n");  // rounded away from zero, as Kubernetes
  EXPECT_EQ(q("1Gi").sign(), 1);
  EXPECT_EQ(q("0Gi").sign(), 0);
  EXPECT_TRUE(q("-0").is_zero());
}

struct ErrorCase {
  std::string input;
  std::string error;
};

TEST(QuantityParse, RejectsWithApimachineryMessages) {
  const std::vector<ErrorCase> cases = {
      // The scanner rejects these: whitespace, a second '.', a letter outside the suffix set.
      {"", format_error},
      {" 1", format_error},
      {"1 ", format_error},
      {"1 Gi", format_error},
      {"1.5.5Gi", format_error},
      {"1.1.M", format_error},
      {"1+1.0M", format_error},
      {"1Gb", format_error},
      {"0.1am", format_error},
      {"aoeu", format_error},
      {"1e+-5", format_error},
      {"1e3.5", format_error},
      {"1\n", format_error},
      {std::string("1\0", 2), format_error},
      // No digit and no '.': the regular expression does not match (Kubernetes reads 0).
      {"Gi", format_error},
      {"+", format_error},
      {"-", format_error},
      {"e5", format_error},
      {"-Mi", format_error},
      // The scanner accepts these, but the suffix is none of the known ones.
      {"--1", suffix_error},
      {"1-", suffix_error},
      {"1mi", suffix_error},
      {"0.1mi", suffix_error},
      {".5i", suffix_error},
      {"1i", suffix_error},
      {"1k5", suffix_error},
      {"k5", suffix_error},
      {"1e", suffix_error},
      {"1ee3", suffix_error},
      {"1eKi", suffix_error},
      {"-3.01e-", suffix_error},
      {"1e+", suffix_error},
      // An exponent beyond int64 is a suffix strconv.ParseInt rejects; nothing overflows.
      {"1e99999999999999999999", suffix_error},
      {"1e9223372036854775808", suffix_error},
      {"1e-9223372036854775809", suffix_error},
      // A '.' without digits.
      {".", numeric_error},
      {"-.", numeric_error},
      {"+.", numeric_error},
      {".Gi", numeric_error},
      {".e-10", numeric_error},
      // Values a Quantity cannot hold.
      {"1e999", range_error},
      {"1e9223372036854775807", range_error},
      {"99999999999999999999Ei", range_error},
      {"9223372036854775808", range_error},
      {"9223372036854775807.000000001", range_error},
      {"-9223372036854775809", range_error},
      {"8Ei", range_error},
      {"8192Pi", range_error},
      {"10E", range_error},
      {"12E", range_error},
  };
  for (const ErrorCase& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(error_of(c.input), c.error);
  }
}

TEST(QuantityParse, HostileLengthsAndExponents) {
  const std::string ten_thousand_digits = "1" + std::string(9999, '0');
  EXPECT_EQ(error_of(ten_thousand_digits), range_error);
  EXPECT_EQ(error_of(ten_thousand_digits + "Ki"), range_error);
  EXPECT_EQ(error_of("-" + ten_thousand_digits), range_error);
  EXPECT_EQ(error_of(std::string(10000, '9') + "e-9980"), range_error);  // about 1e20
  EXPECT_EQ(q(std::string(10000, '9') + "e-9990").to_string(), "10e9");  // 9999999999.99... rounds up

  // Exactness survives any length: 10^9999 * 10^-9999 is 1, and 10^9999 * 10^-10000 is 0.1.
  EXPECT_EQ(q(ten_thousand_digits + "e-9999").to_string(), "1");
  EXPECT_EQ(q(ten_thousand_digits + "e-10000").to_string(), "100e-3");
  // Leading zeros are not digits that count; apimachinery's fast path even keeps the text as is.
  const std::string zeros_then_one = std::string(10000, '0') + "1";
  EXPECT_EQ(q(zeros_then_one).canonical(), "1");
  EXPECT_EQ(q(zeros_then_one).to_string(), zeros_then_one);
  EXPECT_EQ(q("0." + std::string(9999, '0') + "1").to_string(), "1n");
  EXPECT_EQ(q("0." + std::string(9999, '0') + "1Ki").to_string(), "1n");
  EXPECT_EQ(q("1." + std::string(9999, '0') + "1").to_string(), "1000000001n");
  EXPECT_EQ(q("1." + std::string(9999, '0') + "Gi").to_string(), "1Gi");
  EXPECT_EQ(q("0." + std::string(1000000, '0') + "1Ei").to_string(), "1n");  // 1.15e-999983, up to 1n
  // The rounding happens after the binary factor: 0.5n * 1024 is exactly 512n.
  EXPECT_EQ(q("0.0000000005Ki").to_string(), "512n");

  // Tiny exponents round up to one nano-unit instead of underflowing.
  EXPECT_EQ(q("1e-9223372036854775808").to_string(), "1e-9");
  EXPECT_EQ(q("-1e-999").to_string(), "-1e-9");
  EXPECT_TRUE(q("0e9223372036854775807").is_zero());
}

TEST(QuantityFromInt, PrintsInTheGivenFormat) {
  EXPECT_EQ(Quantity::from_int(805306368, Format::binary_si).to_string(), "768Mi");
  EXPECT_EQ(Quantity::from_int(1024, Format::binary_si).to_string(), "1Ki");
  EXPECT_EQ(Quantity::from_int(1023, Format::binary_si).to_string(), "1023");
  EXPECT_EQ(Quantity::from_int(1000, Format::decimal_si).to_string(), "1k");
  EXPECT_EQ(Quantity::from_int(1234000, Format::decimal_si).to_string(), "1234k");
  EXPECT_EQ(Quantity::from_int(1000000, Format::decimal_exponent).to_string(), "1e6");
  EXPECT_EQ(Quantity::from_int(0, Format::binary_si).to_string(), "0");
  EXPECT_EQ(Quantity::from_int(int64_max, Format::decimal_si).to_string(), "9223372036854775807");
  EXPECT_EQ(Quantity::from_int(int64_min, Format::binary_si).to_string(), "-8Ei");
  EXPECT_EQ(Quantity::from_int(-2048, Format::binary_si).to_string(), "-2Ki");
  EXPECT_EQ(Quantity::from_int(7, Format::binary_si).format(), Format::binary_si);
  EXPECT_EQ(Quantity().to_string(), "0");
  EXPECT_TRUE(Quantity().is_zero());
}

TEST(QuantityCompare, OrdersByValue) {
  EXPECT_LT(q("100m"), q("1"));
  EXPECT_GT(q("10000T"), q("100Gi"));
  EXPECT_GT(q("1Gi"), q("1G"));
  EXPECT_LT(q("-1Gi"), q("0"));
  EXPECT_LT(q("-2"), q("-1500m"));
  EXPECT_LE(q("1536Mi"), q("1.5Gi"));
  EXPECT_GE(q("1536Mi"), q("1.5Gi"));
  EXPECT_EQ(q("1n") <=> q("2n"), std::strong_ordering::less);
  EXPECT_EQ(q("1Ki") <=> q("1024"), std::strong_ordering::equal);
  EXPECT_EQ(Quantity::from_int(int64_max, Format::decimal_si) <=> q("9223372036854775806.999999999"),
            std::strong_ordering::greater);

  std::vector<Quantity> sorted = {q("1Gi"), q("-1"), q("1k"), q("0"), q("999m")};
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> printed;
  for (const Quantity& quantity : sorted) {
    printed.push_back(quantity.to_string());
  }
  EXPECT_EQ(printed, (std::vector<std::string>{"-1", "0", "999m", "1k", "1Gi"}));
}

TEST(QuantityArithmetic, AddAndSubAreExact) {
  Result<Quantity> sum = q("1Gi").add(q("512Mi"));
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->to_string(), "1536Mi");
  EXPECT_EQ(sum->format(), Format::binary_si);

  sum = q("100m").add(q("900m"));
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->to_string(), "1");

  sum = q("1n").add(q("-1n"));
  ASSERT_TRUE(sum.ok());
  EXPECT_TRUE(sum->is_zero());

  // The result keeps the left operand's format and drops any text kept from parsing.
  sum = q("1k").add(q("1Ki"));
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->to_string(), "2024");
  EXPECT_EQ(sum->format(), Format::decimal_si);
  sum = q("+1").add(q("0"));
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->to_string(), "1");

  // Adding to zero takes the other format, as apimachinery's Add does.
  sum = q("0").add(q("1Gi"));
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->to_string(), "1Gi");
  sum = q("1Gi").add(q("0"));
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->to_string(), "1Gi");

  Result<Quantity> difference = q("1Gi").sub(q("1Gi"));
  ASSERT_TRUE(difference.ok());
  EXPECT_EQ(difference->to_string(), "0");
  difference = q("0").sub(q("1Gi"));
  ASSERT_TRUE(difference.ok());
  EXPECT_EQ(difference->to_string(), "-1Gi");
  difference = q("2").sub(q("500m"));
  ASSERT_TRUE(difference.ok());
  EXPECT_EQ(difference->to_string(), "1500m");
}

TEST(QuantityArithmetic, OverflowIsAnErrorNeverAWrap) {
  const Quantity max = Quantity::from_int(int64_max, Format::decimal_si);
  const Quantity min = Quantity::from_int(int64_min, Format::decimal_si);

  Result<Quantity> result = max.add(q("1n"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, range_error);
  result = min.sub(q("1n"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, range_error);
  result = q("0").sub(min);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, range_error);
  result = max.add(max);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, range_error);

  result = max.add(q("-1"));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->value().value(), int64_max - 1);
  result = min.add(max);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->to_string(), "-1");
}

TEST(QuantityArithmetic, Multiply) {
  Result<Quantity> product = q("1Gi").multiply(3);
  ASSERT_TRUE(product.ok());
  EXPECT_EQ(product->to_string(), "3Gi");
  product = q("1.5").multiply(2);
  ASSERT_TRUE(product.ok());
  EXPECT_EQ(product->to_string(), "3");
  product = q("1Gi").multiply(-1);
  ASSERT_TRUE(product.ok());
  EXPECT_EQ(product->to_string(), "-1Gi");
  product = q("1Gi").multiply(0);
  ASSERT_TRUE(product.ok());
  EXPECT_TRUE(product->is_zero());
  product = q("1Ei").multiply(7);
  ASSERT_TRUE(product.ok());
  EXPECT_EQ(product->to_string(), "7Ei");
  product = Quantity::from_int(805306368, Format::binary_si).multiply(4);
  ASSERT_TRUE(product.ok());
  EXPECT_EQ(product->to_string(), "3Gi");

  const std::vector<std::pair<Quantity, std::int64_t>> overflowing = {
      {q("1Ei"), 8},
      {Quantity::from_int(int64_max, Format::decimal_si), 2},
      {Quantity::from_int(int64_max, Format::decimal_si), int64_max},  // beyond even int128
      {Quantity::from_int(int64_min, Format::decimal_si), int64_min},
      {Quantity::from_int(-1, Format::decimal_si), int64_min},
  };
  for (std::size_t i = 0; i < overflowing.size(); ++i) {
    SCOPED_TRACE(i);
    product = overflowing[i].first.multiply(overflowing[i].second);
    ASSERT_FALSE(product.ok()) << product->to_string();
    EXPECT_EQ(product.error().message, range_error);
  }
  // 1n * (2^63 - 1) is about 9.2 units: well inside the range.
  product = q("1n").multiply(int64_max);
  ASSERT_TRUE(product.ok());
  EXPECT_EQ(product->to_string(), "9223372036854775807n");
}

TEST(QuantityValue, RoundsAwayFromZeroLikeKubernetes) {
  const std::vector<std::pair<std::string, std::int64_t>> cases = {
      {"2200m", 3},
      {"-2200m", -3},
      {"2", 2},
      {"-2", -2},
      {"1n", 1},
      {"-1n", -1},
      {"0", 0},
      {"1Gi", 1073741824},
      {"1.5Gi", 1610612736},
      {"9.01", 10},
      {"-9.01", -10},
      {"9223372036854775807", int64_max},
      {"9223372036854775806.5", int64_max},
      {"-9223372036854775808", int64_min},
      {"-9223372036854775807.5", int64_min},
  };
  for (const auto& [text, expected] : cases) {
    SCOPED_TRACE(text);
    Result<std::int64_t> value = q(text).value();
    ASSERT_TRUE(value.ok()) << value.error().message;
    EXPECT_EQ(*value, expected);
  }
}

TEST(QuantityValue, MilliValue) {
  EXPECT_EQ(q("1.5").milli_value().value(), 1500);
  EXPECT_EQ(q("100m").milli_value().value(), 100);
  EXPECT_EQ(q("1n").milli_value().value(), 1);
  EXPECT_EQ(q("-1n").milli_value().value(), -1);
  EXPECT_EQ(q("2").milli_value().value(), 2000);
  EXPECT_EQ(q("9223372036854775807m").milli_value().value(), int64_max);
  Result<std::int64_t> overflow = q("9223372036854775807").milli_value();
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().message, range_error);
  overflow = q("-9223372036854775809m").milli_value();
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.error().message, range_error);
}

TEST(QuantityPrint, StreamsToString) {
  std::ostringstream out;
  out << q("1.5Gi") << ' ' << q("+1");
  EXPECT_EQ(out.str(), "1536Mi +1");
}

}  // namespace
}  // namespace vmgate::admission
