// json::StringSink and its Writer's 16-byte string scan.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "vmgate/common/json.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/common/json_writer.hpp"

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

TEST(JsonWriter, PlainRunEndsAtTheFirstCharacterThatNeedsAnEscape) {
  const std::string text = std::string(37, 'p') + "\"" + std::string(5, 'q');
  EXPECT_EQ(json::plain_run_end(text.data(), text.data() + text.size()), text.data() + 37);
  EXPECT_EQ(json::plain_run_end(text.data() + 38, text.data() + text.size()), text.data() + text.size());
  EXPECT_EQ(json::plain_run_end(text.data(), text.data()), text.data());
  const std::string high = std::string(33, '\x80') + "\x7f\xff";  // bytes >= 0x7F are written as they are
  EXPECT_EQ(json::plain_run_end(high.data(), high.data() + high.size()), high.data() + high.size());
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

}  // namespace
}  // namespace vmgate::testing
