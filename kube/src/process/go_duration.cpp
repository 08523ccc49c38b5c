// Go's time.ParseDuration (src/time/format.go), without the sign: timeouts are never negative.
#include "vmgate/kube/go_duration.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <string>

namespace vmgate::kube {

namespace {

struct Unit {
  std::string_view name;
  std::uint64_t nanoseconds;
};

// Longest names first where one is a prefix of another ("ms" before "m").
constexpr std::array<Unit, 8> units{{
    {"ns", 1},
    {"us", 1'000},
    {"\xC2\xB5s", 1'000},  // U+00B5 micro sign
    {"\xCE\xBCs", 1'000},  // U+03BC Greek mu
    {"ms", 1'000'000},
    {"s", 1'000'000'000},
    {"m", 60'000'000'000},
    {"h", 3'600'000'000'000},
}};

constexpr std::uint64_t max_nanoseconds = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

Error invalid(std::string_view text) {
  return Error{"invalid duration \"" + std::string(text) + "\""};
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text) {
  if (text == "0") {
    return std::chrono::nanoseconds{0};
  }
  if (text.empty()) {
    return invalid(text);
  }
  std::uint64_t total = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    // The whole part.
    std::uint64_t whole = 0;
    std::size_t digits = 0;
    bool overflow = false;
    while (digits < rest.size() && is_digit(rest[digits])) {
      const auto digit = static_cast<std::uint64_t>(rest[digits] - '0');
      if (whole > (max_nanoseconds - digit) / 10) {
        overflow = true;
      } else {
        whole = whole * 10 + digit;
      }
      ++digits;
    }
    rest.remove_prefix(digits);
    // The fraction, as Go's leadingFraction: digits while they fit in 63 bits, the rest ignored.
    std::uint64_t fraction = 0;
    double scale = 1;
    std::size_t fraction_digits = 0;
    if (!rest.empty() && rest.front() == '.') {
      rest.remove_prefix(1);
      bool fraction_overflow = false;
      while (fraction_digits < rest.size() && is_digit(rest[fraction_digits])) {
        const auto digit = static_cast<std::uint64_t>(rest[fraction_digits] - '0');
        if (!fraction_overflow && fraction <= (max_nanoseconds - digit) / 10) {
          fraction = fraction * 10 + digit;
          scale *= 10;
        } else {
          fraction_overflow = true;
        }
        ++fraction_digits;
      }
      rest.remove_prefix(fraction_digits);
    }
    if (digits == 0 && fraction_digits == 0) {
      return invalid(text);
    }
    const Unit* unit = nullptr;
    for (const Unit& candidate : units) {
      if (rest.starts_with(candidate.name) && (unit == nullptr || candidate.name.size() > unit->name.size())) {
        unit = &candidate;
      }
    }
    if (unit == nullptr) {
      return Error{"missing or unknown unit in duration \"" + std::string(text) +
                   "\" (valid units: ns, us, ms, s, m, h)"};
    }
    rest.remove_prefix(unit->name.size());
    if (overflow || whole > max_nanoseconds / unit->nanoseconds) {
      return invalid(text);
    }
    std::uint64_t value = whole * unit->nanoseconds;
    // Go computes this part in float64; so does this, to round the same way.
    const auto fractional =
        static_cast<std::uint64_t>(static_cast<double>(fraction) * (static_cast<double>(unit->nanoseconds) / scale));
    if (value > max_nanoseconds - fractional || total > max_nanoseconds - value - fractional) {
      return invalid(text);
    }
    value += fractional;
    total += value;
  }
  return std::chrono::nanoseconds{static_cast<std::int64_t>(total)};
}

Result<std::chrono::nanoseconds> parse_duration_option(std::string_view name, std::string_view text,
                                                       bool zero_allowed) {
  Result<std::chrono::nanoseconds> parsed = parse_go_duration(text);
  if (!parsed) {
    return Error{"--" + std::string(name) + ": " + parsed.error().message + " (e.g. 10s, 500ms, 2m)"};
  }
  if (parsed->count() == 0 && !zero_allowed) {
    return Error{"--" + std::string(name) + " must be longer than 0"};
  }
  return *parsed;
}

}  // namespace vmgate::kube
