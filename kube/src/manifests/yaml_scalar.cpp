// YAML 1.1 scalar resolution as go-yaml v2 does it (gopkg.in/yaml.v2 resolve.go, decode.go),
// which is what sigs.k8s.io/yaml and therefore kubectl and kube-apiserver use for manifests.
#include "vmgate/kube/yaml_scalar.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <system_error>

#include "vmgate/common/base64.hpp"

namespace vmgate::kube {

namespace {

enum class Tag { none, null_value, boolean, integer, floating, string, binary, timestamp, merge, unknown };

Tag classify_tag(std::string_view tag) {
  if (tag == plain_tag) {
    return Tag::none;
  }
  if (tag == non_specific_tag) {
    return Tag::string;
  }
  if (!tag.starts_with(yaml_tag_prefix)) {
    return Tag::unknown;
  }
  const std::string_view name = tag.substr(yaml_tag_prefix.size());
  constexpr std::array<std::pair<std::string_view, Tag>, 8> names{{{"null", Tag::null_value},
                                                                   {"bool", Tag::boolean},
                                                                   {"int", Tag::integer},
                                                                   {"float", Tag::floating},
                                                                   {"str", Tag::string},
                                                                   {"binary", Tag::binary},
                                                                   {"timestamp", Tag::timestamp},
                                                                   {"merge", Tag::merge}}};
  for (const auto& [text, value] : names) {
    if (name == text) {
      return value;
    }
  }
  return Tag::unknown;  // !!map, !!seq, !local ...: go-yaml keeps the text of such a scalar
}

std::string_view short_tag(Tag tag) {
  switch (tag) {
    case Tag::null_value:
      return "!!null";
    case Tag::boolean:
      return "!!bool";
    case Tag::integer:
      return "!!int";
    case Tag::floating:
      return "!!float";
    case Tag::binary:
      return "!!binary";
    case Tag::timestamp:
      return "!!timestamp";
    case Tag::merge:
      return "!!merge";
    case Tag::string:
    case Tag::none:
    case Tag::unknown:
      break;
  }
  return "!!str";
}

Scalar make_string(std::string_view text) {
  Scalar s;
  s.kind = Scalar::Kind::string;
  s.string = std::string(text);
  return s;
}

Scalar make_null() {
  Scalar s;
  s.kind = Scalar::Kind::null_value;
  return s;
}

Scalar make_bool(bool value) {
  Scalar s;
  s.kind = Scalar::Kind::boolean;
  s.boolean = value;
  return s;
}

Scalar make_float(double value) {
  Scalar s;
  s.kind = Scalar::Kind::float64;
  s.float64 = value;
  return s;
}

// resolve.go's resolve_map.
std::optional<Scalar> lookup_word(std::string_view text) {
  constexpr std::array<std::string_view, 11> trues{"y",    "Y",    "yes", "Yes", "YES", "true",
                                                   "True", "TRUE", "on",  "On",  "ON"};
  constexpr std::array<std::string_view, 11> falses{"n",     "N",     "no",  "No",  "NO", "false",
                                                    "False", "FALSE", "off", "Off", "OFF"};
  constexpr std::array<std::string_view, 5> nulls{"", "~", "null", "Null", "NULL"};
  constexpr std::array<std::string_view, 3> nans{".nan", ".NaN", ".NAN"};
  constexpr std::array<std::string_view, 6> positive_infinities{".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"};
  constexpr std::array<std::string_view, 3> negative_infinities{"-.inf", "-.Inf", "-.INF"};
  auto in = [text](const auto& words) {
    for (std::string_view word : words) {
      if (word == text) {
        return true;
      }
    }
    return false;
  };
  if (in(trues)) {
    return make_bool(true);
  }
  if (in(falses)) {
    return make_bool(false);
  }
  if (in(nulls)) {
    return make_null();
  }
  if (in(nans)) {
    return make_float(std::numeric_limits<double>::quiet_NaN());
  }
  if (in(positive_infinities)) {
    return make_float(std::numeric_limits<double>::infinity());
  }
  if (in(negative_infinities)) {
    return make_float(-std::numeric_limits<double>::infinity());
  }
  return std::nullopt;
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return 99;
}

// The magnitude of an unsigned Go integer literal with base prefix (strconv base 0):
// 0x/0X hex, 0o/0O and a bare leading 0 octal, 0b/0B binary, else decimal.
std::optional<std::uint64_t> parse_magnitude(std::string_view text) {
  unsigned base = 10;
  if (text.size() >= 2 && text[0] == '0') {
    switch (text[1]) {
      case 'x':
      case 'X':
        base = 16;
        text.remove_prefix(2);
        break;
      case 'o':
      case 'O':
        base = 8;
        text.remove_prefix(2);
        break;
      case 'b':
      case 'B':
        base = 2;
        text.remove_prefix(2);
        break;
      default:
        base = 8;  // the leading 0 is an octal digit itself
        break;
    }
  }
  if (text.empty()) {
    return std::nullopt;
  }
  std::uint64_t value = 0;
  for (char c : text) {
    const int digit = digit_value(c);
    if (digit >= static_cast<int>(base)) {
      return std::nullopt;
    }
    const auto d = static_cast<std::uint64_t>(digit);
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / base) {
      return std::nullopt;  // out of range
    }
    value = value * base + d;
  }
  return value;
}

// strconv.ParseInt(text, 0, 64), then strconv.ParseUint(text, 0, 64) (which takes no sign).
std::optional<Scalar> parse_integer(std::string_view text) {
  bool negative = false;
  bool signed_text = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    signed_text = true;
    text.remove_prefix(1);
  }
  const std::optional<std::uint64_t> magnitude = parse_magnitude(text);
  if (!magnitude) {
    return std::nullopt;
  }
  constexpr auto int64_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  Scalar s;
  if (negative) {
    if (*magnitude > int64_max + 1) {
      return std::nullopt;
    }
    s.kind = Scalar::Kind::int64;
    s.int64 =
        *magnitude == int64_max + 1 ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(*magnitude);
    return s;
  }
  if (*magnitude <= int64_max) {
    s.kind = Scalar::Kind::int64;
    s.int64 = static_cast<std::int64_t>(*magnitude);
    return s;
  }
  if (signed_text) {
    return std::nullopt;  // ParseUint rejects "+18446744073709551615"
  }
  s.kind = Scalar::Kind::uint64;
  s.uint64 = *magnitude;
  return s;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
bool looks_like_float(std::string_view text) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < text.size() && is_digit(text[i])) {
      ++i;
    }
    return i > start;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits()) {
      return false;
    }
  } else {
    if (!digits()) {
      return false;
    }
    if (i < text.size() && text[i] == '.') {
      ++i;
      digits();
    }
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
      ++i;
    }
    if (!digits()) {
      return false;
    }
  }
  return i == text.size();
}

// strconv.ParseFloat on text that looks_like_float: overflow is an error (the scalar then
// stays a string, as in go-yaml), underflow rounds to zero.
std::optional<double> parse_float(std::string_view text) {
  if (!text.empty() && text[0] == '+') {
    text.remove_prefix(1);
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc{} && end == text.data() + text.size()) {
    return value;
  }
  if (error == std::errc::result_out_of_range) {
    const std::string copy(text);
    const double rounded = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(rounded)) {
      return std::nullopt;
    }
    return rounded;
  }
  return std::nullopt;
}

// resolve() for a plain scalar (tag "" in go-yaml).
Scalar resolve_plain(std::string_view text) {
  if (std::optional<Scalar> word = lookup_word(text)) {
    return *word;
  }
  if (text.empty()) {
    return make_string(text);
  }
  const char hint = text[0];
  if (hint == '.') {
    if (looks_like_float(text)) {
      if (std::optional<double> value = parse_float(text)) {
        return make_float(*value);
      }
    }
    return make_string(text);
  }
  if (!is_digit(hint) && hint != '+' && hint != '-') {
    return make_string(text);
  }
  std::string plain;
  plain.reserve(text.size());
  for (char c : text) {
    if (c != '_') {
      plain.push_back(c);
    }
  }
  if (std::optional<Scalar> integer = parse_integer(plain)) {
    return *integer;
  }
  if (looks_like_float(plain)) {
    if (std::optional<double> value = parse_float(plain)) {
      return make_float(*value);
    }
  }
  return make_string(text);
}

Tag tag_of(const Scalar& scalar) {
  switch (scalar.kind) {
    case Scalar::Kind::null_value:
      return Tag::null_value;
    case Scalar::Kind::boolean:
      return Tag::boolean;
    case Scalar::Kind::int64:
    case Scalar::Kind::uint64:
      return Tag::integer;
    case Scalar::Kind::float64:
      return Tag::floating;
    case Scalar::Kind::string:
      break;
  }
  return Tag::string;
}

}  // namespace

Result<Scalar> resolve_scalar(std::string_view tag, std::string_view text) {
  const Tag wanted = classify_tag(tag);
  switch (wanted) {
    case Tag::none:
      return resolve_plain(text);
    case Tag::string:
    case Tag::unknown:
    case Tag::timestamp:
      return make_string(text);
    case Tag::binary: {
      std::optional<std::string> bytes = common::base64_decode(text);
      if (!bytes) {
        return Error{"!!binary value contains invalid base64 data"};
      }
      Scalar s;
      s.string = std::move(*bytes);
      return s;
    }
    case Tag::merge:
      if (text == "<<") {
        return make_string(text);
      }
      break;
    case Tag::null_value:
    case Tag::boolean:
    case Tag::integer:
    case Tag::floating:
      break;
  }
  Scalar resolved = resolve_plain(text);
  const Tag found = tag_of(resolved);
  if (found == wanted) {
    return resolved;
  }
  if (wanted == Tag::floating && found == Tag::integer) {
    return make_float(resolved.kind == Scalar::Kind::int64 ? static_cast<double>(resolved.int64)
                                                           : static_cast<double>(resolved.uint64));
  }
  return Error{"cannot decode " + std::string(short_tag(found)) + " `" + std::string(text) + "` as a " +
               std::string(short_tag(wanted))};
}

bool plain_scalar_is_string(std::string_view text) {
  return text != "<<" && resolve_plain(text).kind == Scalar::Kind::string;
}

std::string float_key(double value) {
  if (std::isnan(value)) {
    return ".nan";
  }
  if (std::isinf(value)) {
    return value > 0 ? ".inf" : "-.inf";
  }
  const auto narrow = static_cast<float>(value);
  if (narrow == 0.0F) {
    return std::signbit(narrow) ? "-0" : "0";
  }
  // The shortest digits that read back as the same float32, then Go's %g layout for them.
  std::array<char, 64> buffer{};
  const auto [end, error] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), narrow, std::chars_format::scientific);
  if (error != std::errc{}) {
    return "0";  // unreachable: 64 bytes hold any float
  }
  const std::string_view text(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
  const bool negative = text[0] == '-';
  const std::size_t e = text.find('e');
  std::string digits;
  for (char c : text.substr(negative ? 1 : 0, e - (negative ? 1 : 0))) {
    if (c != '.') {
      digits.push_back(c);
    }
  }
  int exponent = 0;
  const std::string_view exponent_text = text.substr(e + 1);
  std::from_chars(exponent_text.data() + (exponent_text[0] == '+' ? 1 : 0), exponent_text.data() + exponent_text.size(),
                  exponent);
  std::string out = negative ? "-" : "";
  const auto digit_count = static_cast<int>(digits.size());
  if (exponent < -4 || exponent >= 6) {
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += exponent < 0 ? "e-" : "e+";
    const int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude < 10) {
      out += '0';
    }
    out += std::to_string(magnitude);
    return out;
  }
  const int point = exponent + 1;  // digits before the decimal point
  if (point <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-point), '0');
    out += digits;
    return out;
  }
  if (point >= digit_count) {
    out += digits;
    out.append(static_cast<std::size_t>(point - digit_count), '0');
    return out;
  }
  out += digits.substr(0, static_cast<std::size_t>(point));
  out += '.';
  out += digits.substr(static_cast<std::size_t>(point));
  return out;
}

}  // namespace vmgate::kube
