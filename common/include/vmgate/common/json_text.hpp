#pragma once
// JSON text written straight into a std::string without RapidJSON: strings quoted and escaped
// as RapidJSON's Writer escapes them (append_quoted) and objects written member by member
// (ObjectText), for the text vmgate writes per request (the webhook's answer, its log lines).
// json_writer.hpp has the RapidJSON side (the Writer's output stream).
#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vmgate::json {

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
