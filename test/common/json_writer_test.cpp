// json::StringSink and its Writer's 16-byte string scan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>
#include <string>

#include "vmgate/common/json.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/common/json_text.hpp"
#include "vmgate/common/json_writer.hpp"
#include "support/json_test_support.hpp"

namespace vmgate::testing {
namespace {

// An output stream RapidJSON knows nothing special about: its Writer takes the generic path,
// one character at a time through the escape table. The reference for every byte below.
struct CharByCharStream {
  using Ch = char;
  std::string text;
  void Put(char c) { text.push_back(c); }
  void Flush() {}
};

std::string char_by_char(const json::Value& value) {
  CharByCharStream stream;
  rapidjson::Writer<CharByCharStream> writer(stream);
  value.Accept(writer);
  return stream.text;
}

json::Document string_document(const std::string& text) {
  json::Document document;
  document.SetString(text.data(), static_cast<rapidjson::SizeType>(text.size()), document.GetAllocator());
  return document;
}

TEST(JsonWriter, EveryByteAtEveryOffsetIsWrittenAsTheCharacterByCharacterWriterWritesIt) {
  for (int byte = 0; byte < 256; ++byte) {
    for (std::size_t offset = 0; offset < 48; ++offset) {
      const std::string text = std::string(offset, 'a') + static_cast<char>(byte) + std::string(offset % 21, 'b');
      const json::Document document = string_document(text);
      const std::string written = json::to_string(document);
      ASSERT_EQ(written, char_by_char(document)) << "byte " << byte << " at " << offset;
    }
  }
}

TEST(JsonWriter, AppendQuotedWritesEveryByteAtEveryOffsetAsTheWriterDoes) {
  for (int byte = 0; byte < 256; ++byte) {
    for (std::size_t offset = 0; offset < 48; ++offset) {
      const std::string text = std::string(offset, 'a') + static_cast<char>(byte) + std::string(offset % 21, 'b');
      std::string written = "held,";
      json::append_quoted(written, text);
      ASSERT_EQ(written, "held," + char_by_char(string_document(text))) << "byte " << byte << " at " << offset;
    }
  }
  std::string empty;
  json::append_quoted(empty, std::string_view());
  EXPECT_EQ(empty, R"("")");
}

TEST(JsonWriter, ControlCharactersPastTheFirst16BytesAreEscaped) {
  // RapidJSON 1.1.0's Writer<StringBuffer> with SSE2 writes these raw: invalid JSON.
  for (char control = 0x1A; control <= 0x1F; ++control) {
    const std::string text = std::string(20, 'x') + control + std::string(20, 'y');
    const std::string written = json::to_string(string_document(text));
    EXPECT_EQ(written.find(control), std::string::npos) << static_cast<int>(control);
    Result<json::Document, json::DecodeError> decoded = json::parse_json(written);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(json::as_view(*decoded), text);
  }
}

TEST(JsonWriter, RandomStringsRoundTripThroughTheStrictDecoder) {
  std::mt19937 random(20261128);
  // Mostly plain text with the characters that need escapes sprinkled in, and UTF-8.
  const std::string alphabet = std::string("abcdefghijklmnopqrstuvwxyz0123456789 \"\\/\x01\x1a\x1f\n\t") + "\xc3\xa9";
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const std::size_t length = random() % 80;
    while (text.size() < length) {
      const char c = alphabet[random() % alphabet.size()];
      if (static_cast<unsigned char>(c) == 0xc3 || static_cast<unsigned char>(c) == 0xa9) {
        text += "\xc3\xa9";  // never half a character
      } else {
        text += c;
      }
    }
    const json::Document document = string_document(text);
    const std::string written = json::to_string(document);
    ASSERT_EQ(written, char_by_char(document)) << round;
    Result<json::Document, json::DecodeError> decoded = json::parse_json(written);
    ASSERT_TRUE(decoded.ok()) << decoded.error().message;
    EXPECT_EQ(json::as_view(*decoded), text);
  }
}

TEST(JsonWriter, DocumentsAreWrittenAsTheCharacterByCharacterWriterWritesThem) {
  std::size_t compared = 0;
  for (const JsonFile& file : repository_json_files()) {
    Result<json::Document, json::DecodeError> decoded = json::parse_json(file.text);
    if (!decoded) {
      continue;  // refusals are fixtures too
    }
    ASSERT_EQ(json::to_string(*decoded), char_by_char(*decoded)) << file.path;
    std::string appended = "[1,";
    json::append_text(appended, *decoded);
    ASSERT_EQ(appended, "[1," + char_by_char(*decoded)) << file.path;
    ++compared;
  }
  EXPECT_GT(compared, 500U);
}

TEST(JsonWriter, NumbersAreWrittenAsTheWriterWritesThem) {
  json::Document document(rapidjson::kArrayType);
  json::Allocator& allocator = document.GetAllocator();
  for (const std::int64_t edge :
       {std::numeric_limits<std::int64_t>::min(), std::int64_t{-2147483649LL}, std::int64_t{-2147483648LL},
        std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}, std::int64_t{2147483647}, std::int64_t{4294967295LL},
        std::int64_t{4294967296LL}, std::numeric_limits<std::int64_t>::max()}) {
    document.PushBack(json::Value(edge), allocator);
  }
  document.PushBack(json::Value(std::numeric_limits<std::uint64_t>::max()), allocator);
  document.PushBack(json::Value(std::uint64_t{9223372036854775808ULL}), allocator);
  for (const double edge : {0.0, -0.0, 1.0, -1.5, 0.1, 1e-7, 1e21, 1e22, 123456789012345678.0, 5e-324,
                            std::numeric_limits<double>::max(), std::numeric_limits<double>::min()}) {
    document.PushBack(json::Value(edge), allocator);
  }
  std::mt19937_64 random(20261128);
  for (int round = 0; round < 20000; ++round) {
    const std::uint64_t bits = random();
    double number = 0;
    std::memcpy(&number, &bits, sizeof(number));
    if (std::isfinite(number)) {
      document.PushBack(json::Value(number), allocator);
    }
    document.PushBack(json::Value(static_cast<std::int64_t>(bits)), allocator);
    document.PushBack(json::Value(static_cast<double>(static_cast<std::int32_t>(bits)) / 1000.0), allocator);
  }
  EXPECT_EQ(json::to_string(document), char_by_char(document));
}

TEST(JsonWriter, PlainRunEndsAtTheFirstCharacterThatNeedsAnEscape) {
  const std::string text = std::string(37, 'p') + "\"" + std::string(5, 'q');
  EXPECT_EQ(json::plain_run_end(text.data(), text.data() + text.size()), text.data() + 37);
  EXPECT_EQ(json::plain_run_end(text.data() + 38, text.data() + text.size()), text.data() + text.size());
  EXPECT_EQ(json::plain_run_end(text.data(), text.data()), text.data());
  const std::string high = std::string(33, '\x80') + "\x7f\xff";  // bytes >= 0x7F are written as they are
  EXPECT_EQ(json::plain_run_end(high.data(), high.data() + high.size()), high.data() + high.size());
}

TEST(JsonWriter, PlainRunEndFindsTheFirstEscapeAtEveryLengthAndPosition) {
  // Every length through the 16-byte blocks, the overlapping tail and the 8-byte words, with
  // fillers that border the special bytes' values.
  for (const char filler : {'a', '\x20', '\x21', '\x7f', '\x80', '\xff', '\x5b', '\x23'}) {
    for (std::size_t length = 0; length <= 40; ++length) {
      for (std::size_t position = 0; position <= length; ++position) {
        for (const char special : {'"', '\\', '\x00', '\x01', '\x1a', '\x1f'}) {
          std::string text(length, filler);
          if (position < length) {
            text[position] = special;
            if (position + 1 < length) {
              text[length - 1] = special;  // a later one must not win
            }
          }
          const char* stop = json::plain_run_end(text.data(), text.data() + text.size());
          ASSERT_EQ(stop - text.data(), static_cast<std::ptrdiff_t>(position))
              << "filler " << static_cast<int>(filler) << " length " << length << " special "
              << static_cast<int>(special);
        }
      }
    }
  }
}

TEST(JsonWriter, SinkAppendsToWhatTheStringHeld) {
  std::string out = "prefix:";
  json::StringSink sink(out);
  rapidjson::Writer<json::StringSink> writer(sink);
  writer.StartArray();
  writer.Int(1);
  writer.String("two");
  writer.EndArray();
  sink.finish();
  EXPECT_EQ(out, R"(prefix:[1,"two"])");
}

TEST(JsonWriter, ObjectTextWritesMembersInOrderAsTheWriterWritesThem) {
  std::string out = "prefix:";
  json::ObjectText object(out);
  object.text("na\"me", "line\nbreak\x01");
  object.integer("min", std::numeric_limits<std::int64_t>::min());
  object.integer("max", std::numeric_limits<std::int64_t>::max());
  object.boolean("yes", true);
  object.boolean("no", false);
  {
    json::ObjectText inner(object.key("inner"));
    inner.close();
  }
  object.key("raw") += "[1]";
  object.close();

  std::string expected;
  json::StringSink sink(expected);
  rapidjson::Writer<json::StringSink> writer(sink);
  writer.StartObject();
  writer.Key("na\"me");
  writer.String("line\nbreak\x01");
  writer.Key("min");
  writer.Int64(std::numeric_limits<std::int64_t>::min());
  writer.Key("max");
  writer.Int64(std::numeric_limits<std::int64_t>::max());
  writer.Key("yes");
  writer.Bool(true);
  writer.Key("no");
  writer.Bool(false);
  writer.Key("inner");
  writer.StartObject();
  writer.EndObject();
  writer.Key("raw");
  writer.StartArray();
  writer.Int(1);
  writer.EndArray();
  writer.EndObject();
  sink.finish();
  const std::string_view prefix = "prefix:";
  EXPECT_EQ(out, std::string(prefix) + expected);
  EXPECT_TRUE(parse(out.substr(prefix.size())).IsObject());
}

}  // namespace
}  // namespace vmgate::testing
