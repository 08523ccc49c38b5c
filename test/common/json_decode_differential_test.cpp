// parse_json_in_place decodes with a single pass of vmgate's own and falls back to RapidJSON's
// in-situ parse (with CheckingHandler) for whatever the single pass declines. The two decoders
// side by side over the repository's JSON inputs and mutations of them: whatever the single pass
// accepts, RapidJSON accepts too, as the same document (the same value types, the same member
// order, the same bytes written in place, strings at the same places); whatever RapidJSON
// refuses, the single pass declines; and the single pass declines a valid input only where it
// says it does (numbers RapidJSON might call too big). parse_json_in_place's answer, accepted or
// refused with its message and position, is RapidJSON's.
#include "vmgate/common/json_decode.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "support/json_test_support.hpp"

namespace vmgate::json {
namespace {

using namespace std::string_literals;
using vmgate::testing::JsonFile;
using vmgate::testing::repository_json_files;

// Every property of a value the two decoders could disagree on, as text: the type, a number's
// kind (Int, Uint, Int64, Uint64, Double: RapidJSON's flags) and exact value, a string's bytes and
// where in the in-place buffer they are, members in order.
void describe(const Value& value, const char* buffer, std::string& out) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      out += "null";
      return;
    case rapidjson::kFalseType:
      out += "false";
      return;
    case rapidjson::kTrueType:
      out += "true";
      return;
    case rapidjson::kStringType:
      out += "s@" + std::to_string(value.GetString() - buffer) + ":" + std::to_string(value.GetStringLength()) + "'";
      out.append(value.GetString(), value.GetStringLength());
      out += "'";
      return;
    case rapidjson::kNumberType: {
      out += value.IsInt() ? "i" : "";
      out += value.IsUint() ? "u" : "";
      out += value.IsInt64() ? "I" : "";
      out += value.IsUint64() ? "U" : "";
      out += value.IsDouble() ? "d" : "";
      if (value.IsDouble()) {
        std::uint64_t bits = 0;
        const double d = value.GetDouble();
        std::memcpy(&bits, &d, sizeof bits);
        out += std::to_string(bits);
      } else if (value.IsUint64()) {
        out += std::to_string(value.GetUint64());
      } else {
        out += std::to_string(value.GetInt64());
      }
      return;
    }
    case rapidjson::kArrayType:
      out += "[";
      for (const Value& element : value.GetArray()) {
        describe(element, buffer, out);
        out += ",";
      }
      out += "]";
      return;
    case rapidjson::kObjectType:
      out += "{";
      for (const auto& member : value.GetObject()) {
        describe(member.name, buffer, out);
        out += ":";
        describe(member.value, buffer, out);
        out += ",";
      }
      out += "}";
      return;
  }
}

std::string description(const Value& value, const std::string& storage) {
  std::string out;
  describe(value, storage.data(), out);
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 300)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7E) {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 15];
    } else {
      out += c;
    }
  }
  return text.size() > 300 ? out + "... (" + std::to_string(text.size()) + " bytes)" : out;
}

// The pieces one after another (without the temporaries of a chain of operator+).
std::string joined(std::initializer_list<std::string_view> pieces) {
  std::string out;
  for (const std::string_view piece : pieces) {
    out += piece;
  }
  return out;
}

struct Tally {
  std::size_t accepted = 0;
  std::size_t refused = 0;
  std::size_t declined_valid = 0;
};

// `may_decline_valid`: the input holds a number the single pass leaves to RapidJSON.
void compare(const std::string& text, Tally& tally, const DecodeLimits& limits = {}, bool may_decline_valid = false) {
  std::string reference_storage;
  const Result<Document, DecodeError> reference =
      detail::decode_in_place_with_rapidjson(text, reference_storage, limits);
  std::string single_storage;
  const std::optional<Document> single = detail::decode_in_place_single_pass(text, single_storage, limits);
  const std::string where = printable(text) + " (max_depth " + std::to_string(limits.max_depth) + ")";
  if (single) {
    ASSERT_TRUE(reference.ok()) << "the single pass accepted what RapidJSON refuses (" << reference.error().message
                                << "): " << where;
    ASSERT_EQ(description(*single, single_storage), description(*reference, reference_storage)) << where;
    // The bytes written in place, NUL included.
    ASSERT_EQ(std::string_view(single_storage.data(), text.size() + 1),
              std::string_view(reference_storage.data(), text.size() + 1))
        << where;
  } else if (reference.ok()) {
    ASSERT_TRUE(may_decline_valid) << "the single pass declined a valid input: " << where;
    ++tally.declined_valid;
  }
  std::string storage;
  const Result<Document, DecodeError> whole = parse_json_in_place(text, storage, limits);
  ASSERT_EQ(whole.ok(), reference.ok()) << where;
  if (whole.ok()) {
    ++tally.accepted;
    ASSERT_EQ(description(*whole, storage), description(*reference, reference_storage)) << where;
  } else {
    ++tally.refused;
    ASSERT_EQ(whole.error().message, reference.error().message) << where;
    ASSERT_EQ(whole.error().line, reference.error().line) << where;
    ASSERT_EQ(whole.error().column, reference.error().column) << where;
  }
}

// Truncations, byte replacements and duplicated members of `text`, at positions spread over it
// (and near its start, where most structure is).
std::vector<std::string> mutations(const std::string& text) {
  std::vector<std::string> out;
  if (text.empty()) {
    return out;
  }
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < std::min<std::size_t>(text.size(), 24); ++i) {
    positions.push_back(i);
  }
  for (std::size_t step = 1; step <= 24; ++step) {
    positions.push_back(text.size() * step / 25);
  }
  positions.push_back(text.size() - 1);
  const std::vector<std::string> replacements = {
      "\"",   "\\", ",", "}", "]", "{", "[", ":",  std::string(1, '\0'), "\x1f", "\x1a", "\x7f", "\xff",
      "\xc3", "x",  " ", "0", "-", "e", ".", "\\u"};
  std::size_t which = 0;
  for (const std::size_t at : positions) {
    out.push_back(text.substr(0, at));
    out.push_back(text.substr(0, at) + replacements[which % replacements.size()] + text.substr(at + 1));
    out.push_back(text.substr(0, at) + replacements[(which + 7) % replacements.size()] + text.substr(at));
    ++which;
  }
  // A member repeated: `{"name":` found again right after the object's '{'.
  for (std::size_t brace = text.find("{\""), count = 0; brace != std::string::npos && count < 8;
       brace = text.find("{\"", brace + 1), ++count) {
    const std::size_t close = text.find("\":", brace + 2);
    if (close != std::string::npos) {
      const std::string name = text.substr(brace + 1, close + 1 - (brace + 1));
      out.push_back(text.substr(0, brace + 1) + name + ":0," + text.substr(brace + 1));
    }
  }
  return out;
}

TEST(JsonDecodeDifferential, RepositoryInputsAndTheirMutations) {
  const std::vector<JsonFile> files = repository_json_files();
  ASSERT_GT(files.size(), 100U);
  Tally tally;
  for (const JsonFile& file : files) {
    const std::string& text = file.text;
    compare(text, tally);
    for (const std::string& mutated : mutations(text)) {
      compare(mutated, tally);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
  EXPECT_GT(tally.accepted, files.size());  // every input, and the harmless mutations
  EXPECT_GT(tally.refused, files.size());
}

TEST(JsonDecodeDifferential, NumbersAtTheEdges) {
  const std::vector<std::string> numbers = {
      "0", "-0", "1", "-1", "9", "10", "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295",
      "4294967296", "-4294967296", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
      "-9223372036854775809", "18446744073709551615", "18446744073709551616", "-18446744073709551616",
      "99999999999999999999999", "0.0", "-0.0", "1.5", "0.1", "2.2250738585072014e-308", "4.9e-324", "2e-324", "1e-400",
      "-1e-400", "1.7976931348623157e308", "1.7976931348623158e308", "1.8e308", "-1.8e308", "1e308", "1E308", "1e+308",
      "1e0308", "9e308", "0.0e308", "0e-99999999999", "1.0e-5", "10E2", "0E0090", "1e999", "0e400", "0.5e309", "1e309",
      "0e308", "0e309", "0e+0309", "0.0e309", "0.01e309", "0.000e310", "-0e+0", "123.456e-7", "01", "-01", "00", "-",
      "--1", "+1", "1.", ".5", "1.e5", "1e", "1e+", "1e-", "0x10", "1ee5", "1.5.5", "-a", "Infinity", "-Infinity",
      "NaN", "1 2", std::string(300, '9'), std::string(301, '9'), "-" + std::string(300, '9'), std::string(309, '9'),
      "1" + std::string(400, '0'), "1" + std::string(307, '0'), "1" + std::string(308, '0'),
      // Integer parts at DBL_MAX / 10, where RapidJSON's digit-by-digit check for "Number too big" is.
      "17976931348623157" + std::string(292, '0'), "17976931348623157" + std::string(292, '0') + ".5",
      "1797693134862316" + std::string(293, '0'), "0." + std::string(400, '0') + "1",
      "1." + std::string(400, '1') + "e300"};
  Tally tally;
  for (const std::string& number : numbers) {
    // The single pass leaves big exponents and long integer parts to RapidJSON.
    const bool unusual = number.find_first_of("eE") != std::string::npos || number.size() > 300;
    for (const std::string& text : {number, " " + number + " ", "[" + number + "]", "[" + number + ",1]",
                                    "{\"a\":" + number + "}", "{\"a\":" + number + " ,\"b\":[]}", "[" + number}) {
      compare(text, tally, {}, unusual);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
  EXPECT_GT(tally.accepted, 200U);
  EXPECT_GT(tally.refused, 100U);
  EXPECT_LT(tally.declined_valid, 60U);
}

TEST(JsonDecodeDifferential, EscapesSurrogatesAndControlCharacters) {
  const std::vector<std::string> pieces = {"",
                                           "\\n",
                                           "\\\"",
                                           "\\\\",
                                           "\\/",
                                           "\\b",
                                           "\\f",
                                           "\\r",
                                           "\\t",
                                           "\\u0041",
                                           "\\u00e9",
                                           "\\u00E9",
                                           "\\u0000",
                                           "\\u007f",
                                           "\\u0080",
                                           "\\u07ff",
                                           "\\u0800",
                                           "\\uffff",
                                           "\\uFFFF",
                                           "\\ud83d\\ude00",
                                           "\\uD83D\\uDE00",
                                           "\\udbff\\udfff",
                                           "\\ud800\\udc00",
                                           "\\ud800",
                                           "\\udc00",
                                           "\\udfff",
                                           "\\ud800\\u0041",
                                           "\\ud800\\n",
                                           "\\ud800x",
                                           "\\ud83d\\ud83d",
                                           "\\u12",
                                           "\\u12G4",
                                           "\\x",
                                           "\\",
                                           "\\'",
                                           "\\U0041",
                                           "\xc3\xa9",
                                           "\xe2\x82\xac",
                                           "\xf0\x9f\x98\x80",
                                           "\xc3",
                                           "\xc3(",
                                           "\xe2\x82",
                                           "\xed\xa0\x80",
                                           "\xed\x9f\xbf",
                                           "\xf4\x90\x80\x80",
                                           "\xc0\xaf",
                                           "\xf5\x80\x80\x80",
                                           "\x80",
                                           "\xff",
                                           "\x7f",
                                           "\x01",
                                           "\x19",
                                           "\x1a",
                                           "\x1f",
                                           "\t",
                                           "\n",
                                           std::string(1, '\0'),
                                           "\"",
                                           "'"};
  Tally tally;
  for (const std::string& piece : pieces) {
    for (std::size_t shift = 0; shift < 34; ++shift) {
      const std::string run(shift, 'a');
      for (const std::string& text :
           {joined({"[\"", run, piece, "b\",\"", piece, "\"]"}),
            joined({"{\"", run, piece, "\":\"", piece, run, "\"}"}),
            joined({"\"", run, piece, std::string(17, 'c'), piece, "\""}), joined({"[\"", piece, run, "\"]  "})}) {
        compare(text, tally);
        if (::testing::Test::HasFatalFailure()) {
          return;
        }
      }
    }
  }
  EXPECT_GT(tally.accepted, 1000U);
  EXPECT_GT(tally.refused, 1000U);
}

TEST(JsonDecodeDifferential, DuplicateKeys) {
  Tally tally;
  for (std::size_t count = 1; count <= 70; count += count < 40 ? 1 : 29) {
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < count; ++i) {
      keys.push_back("key" + std::to_string(i));
    }
    for (std::size_t repeated = 0; repeated <= count; ++repeated) {
      std::string object = "{";
      for (const std::string& key : keys) {
        object += "\"" + key + "\":[" + std::to_string(key.size()) + "],";
      }
      object += repeated < count ? "\"" + keys[repeated] + "\":null}" : "\"last\":{}}";
      compare(object, tally);
      compare(joined({"[{\"a\":", object, "},", object, "]"}), tally);
      compare("{\"" + keys[0] + "\":" + object + "}", tally);
      if (::testing::Test::HasFatalFailure()) {
        return;
      }
    }
  }
  for (const std::string& text : {R"({"a":1,"\u0061":2})"s, R"({"a\"b":1,"a\"b":2})"s, R"({"ab":1,"a":2,"b":3})"s,
                                  R"({"":1,"":2})"s, R"({"":1,"a":{"":2}})"s, R"({"a":{"b":1},"b":{"a":1},"a":0})"s,
                                  "{\"a\\u0000\":1,\"a\":2}"s, "{\"a\\u0000\":1,\"a\\u0000\":2}"s}) {
    compare(text, tally);
  }
  // Keys compared by their first eight bytes, then the rest: equal and unequal on either side of
  // that boundary, written plainly and escaped.
  for (const std::string& text :
       {R"({"abcdefgh":1,"abcdefgh":2})"s, R"({"abcdefgh":1,"abcdefgi":2})"s, R"({"abcdefg":1,"abcdefgh":2})"s,
        R"({"abcdefghX":1,"abcdefghY":2})"s, R"({"abcdefghXYZ":1,"abcdefghXYZ":2})"s,
        R"({"abcdefghXYZ":1,"abcdefghXY":2})"s, R"({"abcdefghXYZ":1,"abcdefghXYZ":2})"s,
        R"({"xbcdefghXYZ":1,"abcdefghXYZ":2})"s, R"({"spec.template.spec.domain":1,"spec.template.spec.domaiN":2})"s}) {
    compare(text, tally);
  }
  EXPECT_GT(tally.accepted, 100U);
  EXPECT_GT(tally.refused, 100U);
}

TEST(JsonDecodeDifferential, NestingWhitespaceAndLiterals) {
  Tally tally;
  for (const std::size_t depth : {1U, 2U, 3U, 999U, 1000U, 1001U}) {
    compare(std::string(depth, '[') + std::string(depth, ']'), tally);
    compare(std::string(depth, '[') + std::string(depth - 1, ']'), tally);
    std::string objects;
    for (std::size_t i = 0; i < depth; ++i) {
      objects += "{\"a\":";
    }
    compare(objects + "1" + std::string(depth, '}'), tally);
    for (const std::size_t limit : {0U, 1U, 2U, 3U}) {
      compare(std::string(depth, '[') + std::string(depth, ']'), tally, DecodeLimits{limit});
      compare(objects + "[]" + std::string(depth, '}'), tally, DecodeLimits{limit});
    }
  }
  for (const std::string& text : {""s,
                                  " "s,
                                  " \t\r\n"s,
                                  "\v1"s,
                                  "\f1"s,
                                  "null"s,
                                  "nul"s,
                                  "nulll"s,
                                  "true"s,
                                  "tru"s,
                                  "truex"s,
                                  "false"s,
                                  "falsey"s,
                                  "[true,false,null]"s,
                                  "[true,false,nul]"s,
                                  " \r\n\t{ \"a\" : [ 1 , { } , [ ] ] , \"b\" : \"c\" } \n"s,
                                  "{\"a\" 1}"s,
                                  "{\"a\":1,}"s,
                                  "[1,]"s,
                                  "[,1]"s,
                                  "{,}"s,
                                  "{\"a\":1 \"b\":2}"s,
                                  "[1 2]"s,
                                  "{}\0junk"s,
                                  "{}\0"s,
                                  "\0"s,
                                  "[\0]"s,
                                  "{\"a\":\0}"s,
                                  "\xef\xbb\xbf{}"s,
                                  "{}//"s,
                                  "{}x"s,
                                  "{} {}"s,
                                  "[]]"s,
                                  "{}}"s,
                                  "{\"a\":1]"s,
                                  "[1}"s,
                                  "{1:2}"s,
                                  "{'a':1}"s,
                                  "\"\""s,
                                  "\"\\\"\""s,
                                  "[\"\",{\"\":\"\"}]"s,
                                  "{\"a\":[],\"b\":{},\"c\":[{}],\"d\":[[[]]]}"s}) {
    compare(text, tally);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
  EXPECT_GT(tally.accepted, 20U);
  EXPECT_GT(tally.refused, 20U);
}

}  // namespace
}  // namespace vmgate::json
