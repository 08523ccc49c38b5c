#pragma once
// JSON text written straight into a std::string: json::StringSink, the output stream every
// RapidJSON Writer of vmgate's writes to.
//
// Not RapidJSON's own StringBuffer: with SSE2 (json.hpp turns it on) RapidJSON 1.1.0's
// Writer<StringBuffer> copies a string's characters 16 bytes at a time past its first aligned
// address, and its test for a control character compares with 0x19, so a raw 0x1A..0x1F there
// goes out unescaped, which JSON forbids (and Go's decoder refuses). The Writer<StringSink>
// specialisation below scans as fast, with the right bound.
#include <algorithm>
#include <cstddef>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "vmgate/common/json.hpp"

namespace vmgate::json {

/// RapidJSON output stream appending to a std::string, without a buffer in between. As with
/// RapidJSON's StringBuffer, the Writer reserves room for a whole token (PutReserve) and then
/// stores each character unchecked (PutUnsafe); finish() drops the unused reserve and must be
/// called before the string is read.
class StringSink {
 public:
  using Ch = char;
  explicit StringSink(std::string& out) : out_(&out), used_(out.size()) {}
  void Put(char c) {
    reserve(1);
    put_unchecked(c);
  }
  void Flush() {}
  void reserve(std::size_t count) {
    if (out_->size() - used_ < count) {
      out_->resize(std::max(used_ + count, 2 * out_->size()));
    }
  }
  void put_unchecked(char c) { (*out_)[used_++] = c; }
  /// The next `count` bytes of the output, for the caller to fill.
  std::span<char> take(std::size_t count) {
    reserve(count);
    const std::span<char> room(out_->data() + used_, count);
    used_ += count;
    return room;
  }
  void finish() { out_->resize(used_); }

 private:
  std::string* out_;
  std::size_t used_;
};

// Found by argument-dependent lookup from RapidJSON's Writer, ahead of its generic templates.
inline void PutReserve(StringSink& sink, std::size_t count) {
  sink.reserve(count);
}
inline void PutUnsafe(StringSink& sink, char c) {
  sink.put_unchecked(c);
}

/// Whether `c` must be escaped in a JSON string (RFC 8259: control characters, '"' and '\\').
constexpr bool needs_escape(char c) {
  return static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\';
}

/// The bytes of [begin, end) before the first one that needs an escape: 16 at a time with SSE2,
/// the last 16 of a longer run overlapping what was checked, shorter runs 8 at a time.
inline const char* plain_run_end(const char* begin, const char* end) {
  const char* p = begin;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i last_control = _mm_set1_epi8(0x1F);
  // A bit for each of the 16 bytes at `at` that needs an escape.
  const auto special_bits = [&](const char* at) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    // Unsigned c <= 0x1F exactly when min(c, 0x1F) == c.
    const __m128i control = _mm_cmpeq_epi8(_mm_min_epu8(chunk, last_control), chunk);
    const __m128i special =
        _mm_or_si128(control, _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)));
    return static_cast<unsigned>(_mm_movemask_epi8(special));
  };
  while (end - p >= 16) {
    if (const unsigned mask = special_bits(p); mask != 0) {
      return p + __builtin_ctz(mask);
    }
    p += 16;
  }
  if (p != end && end - begin >= 16) {
    // The tail as the last 16 bytes of the text: those before p were checked already.
    const char* const last = end - 16;
    const unsigned mask = special_bits(last) >> static_cast<unsigned>(p - last);
    return mask != 0 ? p + __builtin_ctz(mask) : end;
  }
#endif
  // Eight bytes as one word (little-endian: the first byte lowest). Each test flags its lowest
  // matching byte exactly (a borrow only runs upward from a byte that matched), and only the
  // lowest flag is used.
  static_assert(std::endian::native == std::endian::little, "the first byte is the lowest");
  constexpr std::uint64_t ones = 0x0101010101010101ULL;
  constexpr std::uint64_t highs = 0x8080808080808080ULL;
  const auto zero_bytes = [](std::uint64_t word) { return (word - ones) & ~word & highs; };
  while (end - p >= 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, p, sizeof(word));
    const std::uint64_t flags =
        ((word - 0x20 * ones) & ~word & highs) | zero_bytes(word ^ ('"' * ones)) | zero_bytes(word ^ ('\\' * ones));
    if (flags != 0) {
      return p + __builtin_ctzll(flags) / 8;
    }
    p += 8;
  }
  while (p != end && !needs_escape(*p)) {
    ++p;
  }
  return p;
}

/// Appends `text` as a JSON string, quotes included, byte for byte as RapidJSON's Writer writes
/// it (\" \\ \b \f \n \r \t, other control characters as \u00XX, every other byte as it is):
/// for text written without a Writer (kube::LogLine writes a line per admission).
inline void append_quoted(std::string& out, std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  out += '"';
  const char* p = text.data();
  const char* const end = p + text.size();
  for (;;) {
    const char* const stop = plain_run_end(p, end);
    out.append(p, static_cast<std::size_t>(stop - p));
    if (stop == end) {
      break;
    }
    const auto c = static_cast<unsigned char>(*stop);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        const char escape[] = {'\\', 'u', '0', '0', hex[c >> 4U], hex[c & 0xFU]};
        out.append(escape, sizeof(escape));
      }
    }
    p = stop + 1;
  }
  out += '"';
}

/// One JSON object written member by member, in order, straight into a string ('{' when
/// constructed, '}' by close()): names and string values escaped by append_quoted. For text
/// written per request without a Writer (the webhook's answer, kube::LogLine).
class ObjectText {
 public:
  explicit ObjectText(std::string& out) : out_(out) { out_ += '{'; }
  ObjectText(const ObjectText&) = delete;
  ObjectText& operator=(const ObjectText&) = delete;

  /// Writes the member's name and ':'; the caller writes its value into the returned string.
  std::string& key(std::string_view name) {
    if (!first_) {
      out_ += ',';
    }
    first_ = false;
    append_quoted(out_, name);
    out_ += ':';
    return out_;
  }
  void text(std::string_view name, std::string_view value) { append_quoted(key(name), value); }
  void integer(std::string_view name, std::int64_t value) {
    std::string& out = key(name);
    char digits[24];
    out.append(digits, std::to_chars(digits, digits + sizeof(digits), value).ptr);
  }
  void boolean(std::string_view name, bool value) { key(name) += value ? "true" : "false"; }
  void close() { out_ += '}'; }

 private:
  std::string& out_;
  bool first_ = true;
};

}  // namespace vmgate::json

// Writer::WriteString asks this for the run of characters it may copy as they are before it
// escapes the next one (and asks again after it); it has reserved room for the whole string.
// RapidJSON's generic version copies one character per call.
template <>
inline bool rapidjson::Writer<vmgate::json::StringSink>::ScanWriteUnescapedString(StringStream& is,
                                                                                  std::size_t length) {
  const char* const start = is.src_;
  const char* const end = is.head_ + length;
  const char* const stop = vmgate::json::plain_run_end(start, end);
  if (stop != start) {
    const std::span<char> room = os_->take(static_cast<std::size_t>(stop - start));
    std::memcpy(room.data(), start, room.size());
  }
  is.src_ = stop;
  return stop != end;
}
