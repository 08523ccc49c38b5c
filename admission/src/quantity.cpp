// Follows k8s.io/apimachinery/pkg/api/resource/quantity.go, suffix.go and amount.go.
#include "vmgate/admission/quantity.hpp"

#include <array>
#include <cstddef>
#include <limits>
#include <optional>
#include <ostream>
#include <utility>

namespace vmgate::admission {

namespace {

using int128 = detail::quantity_int128;
__extension__ typedef unsigned __int128 uint128;

constexpr int128 pow10(int exponent) {
  int128 result = 1;
  for (int i = 0; i < exponent; ++i) {
    result *= 10;
  }
  return result;
}

constexpr int128 nanos_per_unit = pow10(9);
constexpr int128 max_nanos = static_cast<int128>(std::numeric_limits<std::int64_t>::max()) * nanos_per_unit;
constexpr int128 min_nanos = static_cast<int128>(std::numeric_limits<std::int64_t>::min()) * nanos_per_unit;

Error error_of(std::string_view text) {
  return Error{std::string(text)};
}

bool in_range(int128 nanos) {
  return nanos >= min_nanos && nanos <= max_nanos;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The letters apimachinery's scanner lets into a suffix.
bool is_suffix_letter(char c) {
  return std::string_view("eEinumkKMGTP").find(c) != std::string_view::npos;
}

// The pieces of a quantity's text, as apimachinery's parseQuantityString splits it.
struct Pieces {
  bool negative = false;
  std::string_view whole;  // the digits before '.', leading zeros included
  bool has_point = false;
  std::string_view fraction;  // the digits after '.'
  std::string_view suffix;
};

std::optional<Pieces> split(std::string_view text) {
  Pieces pieces;
  std::size_t pos = 0;
  const auto digits_from = [&text, &pos]() {
    const std::size_t begin = pos;
    while (pos < text.size() && is_digit(text[pos])) {
      ++pos;
    }
    return text.substr(begin, pos - begin);
  };
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    pieces.negative = text[pos] == '-';
    ++pos;
  }
  pieces.whole = digits_from();
  if (pos < text.size() && text[pos] == '.') {
    pieces.has_point = true;
    ++pos;
    pieces.fraction = digits_from();
  }
  const std::size_t suffix_begin = pos;
  while (pos < text.size() && is_suffix_letter(text[pos])) {
    ++pos;
  }
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    ++pos;
  }
  digits_from();
  if (pos != text.size()) {
    return std::nullopt;
  }
  pieces.suffix = text.substr(suffix_begin);
  return pieces;
}

struct Scaling {
  int base = 10;              // 10 or 2
  std::int64_t exponent = 0;  // of `base`
  Quantity::Format format = Quantity::Format::decimal_si;
};

// Go's strconv.ParseInt(text, 10, 64): optional sign, at least one digit, within int64.
std::optional<std::int64_t> parse_int64(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) {
    return std::nullopt;
  }
  const std::uint64_t limit =
      static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1U : 0U);
  std::uint64_t magnitude = 0;
  for (const char c : text) {
    if (!is_digit(c)) {
      return std::nullopt;
    }
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (magnitude > (limit - digit) / 10) {
      return std::nullopt;
    }
    magnitude = magnitude * 10 + digit;
  }
  if (!negative) {
    return static_cast<std::int64_t>(magnitude);
  }
  // -2^63 has no positive counterpart, so negate in unsigned arithmetic.
  return magnitude == limit ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(magnitude);
}

// apimachinery's suffixHandler.interpret.
std::optional<Scaling> interpret(std::string_view suffix) {
  static constexpr std::array<std::pair<std::string_view, int>, 10> decimal{
      {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}}};
  static constexpr std::array<std::pair<std::string_view, int>, 6> binary{
      {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}};
  for (const auto& [name, exponent] : decimal) {
    if (suffix == name) {
      return Scaling{10, exponent, Quantity::Format::decimal_si};
    }
  }
  for (const auto& [name, exponent] : binary) {
    if (suffix == name) {
      return Scaling{2, exponent, Quantity::Format::binary_si};
    }
  }
  if (suffix.size() > 1 && (suffix.front() == 'e' || suffix.front() == 'E')) {
    if (const std::optional<std::int64_t> exponent = parse_int64(suffix.substr(1)); exponent) {
      return Scaling{10, *exponent, Quantity::Format::decimal_exponent};
    }
  }
  return std::nullopt;
}

// Multiplies a decimal digit string by 1024, in place.
void multiply_by_1024(std::string& digits) {
  unsigned carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    const unsigned product = static_cast<unsigned>(*it - '0') * 1024U + carry;
    *it = static_cast<char>('0' + product % 10U);
    carry = product / 10U;
  }
  while (carry != 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + carry % 10U));
    carry /= 10U;
  }
}

int128 parse_digits(std::string_view digits) {
  int128 result = 0;
  for (const char c : digits) {
    result = result * 10 + (c - '0');
  }
  return result;
}

// The magnitude of <whole>.<fraction> * base^exponent in nano-units, rounded up to a whole
// nano-unit (apimachinery rounds with inf.RoundUp, away from zero); nullopt when it exceeds 2^63
// units. Works on the digit string, so no intermediate value can overflow whatever the length of
// the text or the size of the exponent.
std::optional<int128> magnitude_in_nanos(const Pieces& pieces, const Scaling& scaling) {
  std::string digits;
  digits.reserve(pieces.whole.size() + pieces.fraction.size());
  digits.append(pieces.whole).append(pieces.fraction);
  // value = digits * 10^exponent10 (* 2^exponent for binary); int128 cannot overflow here.
  int128 exponent10 = (scaling.base == 10 ? scaling.exponent : 0) - static_cast<int128>(pieces.fraction.size());

  const auto trim = [&digits, &exponent10]() {
    digits.erase(0, digits.find_first_not_of('0'));
    const std::size_t last = digits.find_last_not_of('0');
    const std::size_t trailing = last == std::string::npos ? 0 : digits.size() - last - 1;
    digits.erase(digits.size() - trailing);
    exponent10 += static_cast<int128>(trailing);
  };
  // 10^order <= value < 10^(order + 1) once digits has no leading zeros.
  const auto order = [&digits, &exponent10]() { return static_cast<int128>(digits.size()) - 1 + exponent10; };

  trim();
  if (digits.empty()) {
    return int128{0};
  }
  // 10^19 > 2^63, and a binary suffix only makes the value larger.
  if (order() >= 19) {
    return std::nullopt;
  }
  if (scaling.base == 2) {
    for (std::int64_t i = 0; i < scaling.exponent / 10; ++i) {
      multiply_by_1024(digits);
    }
    trim();
    if (order() >= 19) {
      return std::nullopt;
    }
  }
  if (order() < -9) {
    return int128{1};  // below 1n, which rounds up to 1n
  }
  // digits * 10^shift nano-units, with order + 10 (at most 28) integer nano digits.
  const int128 shift = exponent10 + 9;
  if (shift >= 0) {
    return parse_digits(digits) * pow10(static_cast<int>(shift));
  }
  const auto kept = static_cast<std::size_t>(static_cast<int128>(digits.size()) + shift);
  // The dropped tail ends in a non-zero digit (trim removed the zeros), so rounding adds one.
  return parse_digits(std::string_view(digits).substr(0, kept)) + 1;
}

// Whether apimachinery's ParseQuantity takes its int64 fast path and keeps `text` as the
// quantity's cached string, which String() and MarshalJSON then return as written.
bool kubernetes_keeps_text(const Pieces& pieces, const Scaling& scaling) {
  const std::size_t start = pieces.whole.find_first_not_of('0');
  const std::string_view numerator =
      start == std::string_view::npos ? std::string_view("0") : pieces.whole.substr(start);
  if (scaling.format == Quantity::Format::binary_si) {
    // precision = 15 - len(num) - exponent*3/10 - 1 must not be negative, with no fraction.
    if (!pieces.fraction.empty() || static_cast<std::int64_t>(numerator.size()) + scaling.exponent * 3 / 10 > 14) {
      return false;
    }
    return (parse_digits(numerator) & 7) != 0;
  }
  if (numerator.size() + pieces.fraction.size() > 18) {
    return false;
  }
  const int128 scale = static_cast<int128>(scaling.exponent) - static_cast<int128>(pieces.fraction.size());
  std::string shifted(numerator);
  shifted.append(pieces.fraction);
  const bool ends_in_000 = shifted.size() >= 3 && std::string_view(shifted).substr(shifted.size() - 3) == "000";
  return scale >= -9 && scale % 3 == 0 && !ends_in_000 && shifted.front() != '0';
}

std::string decimal_string(int128 value) {
  const bool negative = value < 0;
  uint128 magnitude = negative ? static_cast<uint128>(0) - static_cast<uint128>(value) : static_cast<uint128>(value);
  std::string reversed;
  do {
    reversed.push_back(static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude != 0);
  if (negative) {
    reversed.push_back('-');
  }
  return {reversed.rbegin(), reversed.rend()};
}

// value / divisor rounded away from zero: apimachinery's rounding in Value and MilliValue.
int128 divide_away_from_zero(int128 value, int128 divisor) {
  int128 quotient = value / divisor;
  const int128 remainder = value % divisor;
  if (remainder > 0) {
    ++quotient;
  } else if (remainder < 0) {
    --quotient;
  }
  return quotient;
}

Result<std::int64_t> to_int64(int128 value) {
  if (value < std::numeric_limits<std::int64_t>::min() || value > std::numeric_limits<std::int64_t>::max()) {
    return error_of(quantity_error::out_of_range);
  }
  return static_cast<std::int64_t>(value);
}

}  // namespace

Quantity::Quantity(int128 nanos, Format format, std::string text)
    : nanos_(nanos), format_(format), text_(std::move(text)) {}

Result<Quantity> Quantity::parse(std::string_view text) {
  const std::optional<Pieces> pieces = split(text);
  if (!pieces) {
    return error_of(quantity_error::format);
  }
  // Suffix errors come first, as in apimachinery, so every text Kubernetes rejects gets its message.
  const std::optional<Scaling> scaling = interpret(pieces->suffix);
  if (!scaling) {
    return error_of(quantity_error::suffix);
  }
  // Kubernetes reads a number without digits as 0; vmgate rejects it with the message that fits:
  // the regular expression needs a digit or '.', and a lone '.' is what inf.Dec cannot read.
  if (pieces->whole.empty() && pieces->fraction.empty()) {
    return error_of(pieces->has_point ? quantity_error::numeric : quantity_error::format);
  }
  const std::optional<int128> magnitude = magnitude_in_nanos(*pieces, *scaling);
  if (!magnitude) {
    return error_of(quantity_error::out_of_range);
  }
  const int128 nanos = pieces->negative ? -*magnitude : *magnitude;
  if (!in_range(nanos)) {
    return error_of(quantity_error::out_of_range);
  }
  Format format = scaling->format;
  if (format == Format::binary_si && nanos != 0 && nanos > -nanos_per_unit && nanos < nanos_per_unit) {
    format = Format::decimal_si;  // apimachinery: a binary amount between -1 and 1 becomes DecimalSI
  }
  std::string kept = kubernetes_keeps_text(*pieces, *scaling) ? std::string(text) : std::string();
  return Quantity(nanos, format, std::move(kept));
}

Quantity Quantity::from_int(std::int64_t value, Format format) {
  return Quantity(static_cast<int128>(value) * nanos_per_unit, format, std::string());
}

int Quantity::sign() const {
  if (nanos_ == 0) {
    return 0;
  }
  return nanos_ < 0 ? -1 : 1;
}

std::strong_ordering Quantity::operator<=>(const Quantity& other) const {
  if (nanos_ < other.nanos_) {
    return std::strong_ordering::less;
  }
  if (nanos_ > other.nanos_) {
    return std::strong_ordering::greater;
  }
  return std::strong_ordering::equal;
}

Result<Quantity> Quantity::add(const Quantity& other) const {
  // Both operands are within about 9.3e27, so the int128 sum cannot overflow.
  const int128 sum = nanos_ + other.nanos_;
  if (!in_range(sum)) {
    return error_of(quantity_error::out_of_range);
  }
  return Quantity(sum, is_zero() ? other.format_ : format_, std::string());
}

Result<Quantity> Quantity::sub(const Quantity& other) const {
  const int128 difference = nanos_ - other.nanos_;
  if (!in_range(difference)) {
    return error_of(quantity_error::out_of_range);
  }
  return Quantity(difference, is_zero() ? other.format_ : format_, std::string());
}

Result<Quantity> Quantity::multiply(std::int64_t factor) const {
  int128 product = 0;
  if (__builtin_mul_overflow(nanos_, static_cast<int128>(factor), &product) || !in_range(product)) {
    return error_of(quantity_error::out_of_range);
  }
  return Quantity(product, format_, std::string());
}

Result<std::int64_t> Quantity::value() const {
  return to_int64(divide_away_from_zero(nanos_, nanos_per_unit));
}

Result<std::int64_t> Quantity::milli_value() const {
  return to_int64(divide_away_from_zero(nanos_, nanos_per_unit / 1000));
}

std::string Quantity::to_string() const {
  return text_.empty() ? canonical() : text_;
}

std::string Quantity::canonical() const {
  if (nanos_ == 0) {
    return "0";
  }
  const bool integral = nanos_ % nanos_per_unit == 0;
  const int128 binary_floor = 1024 * nanos_per_unit;
  if (format_ == Format::binary_si && integral && (nanos_ >= binary_floor || nanos_ <= -binary_floor)) {
    // The largest binary suffix that leaves an integer mantissa (AsCanonicalBase1024Bytes).
    static constexpr std::array<std::string_view, 7> suffixes{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int128 mantissa = nanos_ / nanos_per_unit;
    std::size_t power = 0;
    while (power + 1 < suffixes.size() && mantissa % 1024 == 0) {
      mantissa /= 1024;
      ++power;
    }
    return decimal_string(mantissa).append(suffixes[power]);
  }
  // Otherwise decimal (a small or fractional binary amount too, so no precision is lost): the
  // smallest integer mantissa whose exponent is a multiple of 3 (AsCanonicalBytes).
  int128 mantissa = nanos_;
  int exponent = -9;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  while ((exponent % 3 + 3) % 3 != 0) {
    mantissa *= 10;
    --exponent;
  }
  std::string out = decimal_string(mantissa);
  if (format_ == Format::decimal_exponent) {
    return exponent == 0 ? out : out.append("e").append(std::to_string(exponent));
  }
  static constexpr std::array<std::string_view, 10> suffixes{"n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  const auto index = static_cast<std::size_t>((exponent + 9) / 3);
  if (index >= suffixes.size()) {
    // Unreachable within the range (at most 9.3E); apimachinery falls back to an exponent too.
    return out.append("e").append(std::to_string(exponent));
  }
  return out.append(suffixes[index]);
}

std::ostream& operator<<(std::ostream& out, const Quantity& quantity) {
  return out << quantity.to_string();
}

}  // namespace vmgate::admission
