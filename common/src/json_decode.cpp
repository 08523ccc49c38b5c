#include "vmgate/common/json_decode.hpp"
#include "vmgate/common/utf8.hpp"

// After json.hpp (through json_decode.hpp): RapidJSON must see vmgate's RAPIDJSON_ASSERT.
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#if defined(RAPIDJSON_SSE2)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>
#include <system_error>
#include <type_traits>
#include <cstring>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace vmgate::json {

namespace {

// RapidJSON's InsituStringStream, as a type of vmgate's own so that the reader's string scan can
// be specialised for it (below). The members are those RapidJSON's in-situ parse uses.
struct InPlaceStream {
  using Ch = char;
  explicit InPlaceStream(char* text) : src_(text), head_(text) {}
  [[nodiscard]] Ch Peek() const { return *src_; }
  Ch Take() { return *src_++; }
  [[nodiscard]] std::size_t Tell() const { return static_cast<std::size_t>(src_ - head_); }
  void Put(Ch c) { *dst_++ = c; }
  Ch* PutBegin() { return dst_ = src_; }
  std::size_t PutEnd(const Ch* begin) const { return static_cast<std::size_t>(dst_ - begin); }
  void Flush() {}
  Ch* Push(std::size_t count) {
    Ch* begin = dst_;
    dst_ += count;
    return begin;
  }
  void Pop(std::size_t count) { dst_ -= count; }

  // Public, as RapidJSON's streams have them: its SIMD helpers below move src_ and dst_.
  Ch* src_;
  Ch* dst_ = nullptr;
  Ch* head_;
};

#if defined(RAPIDJSON_SSE2)
// Moves `p` (and the write position `q`, copying the bytes down once an escape has shortened the
// string) over a string's run of plain characters, up to the next '"', '\\' or control character
// and, when StopAboveAscii, byte above 0x7F, 16 bytes at a time from the first byte on. The
// unaligned loads may read up to 15 bytes past the terminating NUL: parse_json_in_place keeps
// them inside the buffer's allocation.
template <bool StopAboveAscii>
inline void copy_plain_run(char*& p, char*& q) {
  const bool moving = p != q;
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (;; p += 16, q += 16) {
    const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i stops = _mm_or_si128(_mm_cmpeq_epi8(block, quote), _mm_cmpeq_epi8(block, backslash));
    if constexpr (StopAboveAscii) {
      // As signed bytes, both the control characters and the bytes above 0x7F are below 0x20.
      stops = _mm_or_si128(stops, _mm_cmplt_epi8(block, _mm_set1_epi8(0x20)));
    } else {
      // Unsigned c <= 0x1F exactly when max(c, 0x1F) == 0x1F.
      const __m128i last_control = _mm_set1_epi8(0x1F);
      stops = _mm_or_si128(stops, _mm_cmpeq_epi8(_mm_max_epu8(block, last_control), last_control));
    }
    const auto stop = static_cast<unsigned>(_mm_movemask_epi8(stops));
    if (stop != 0) {
      const auto length = static_cast<std::size_t>(__builtin_ctz(stop));
      if (moving) {
        std::memmove(q, p, length);
      }
      p += length;
      q += length;
      return;
    }
    if (moving) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q), block);
    }
  }
}
#endif

}  // namespace

}  // namespace vmgate::json

namespace rapidjson {

template <>
struct StreamTraits<vmgate::json::InPlaceStream> {
  enum { copyOptimization = 1 };  // as InsituStringStream: the reader works on a local copy
};

#if defined(RAPIDJSON_SSE2)
// Whitespace as RapidJSON skips it for an InsituStringStream.
template <>
inline void SkipWhitespace(vmgate::json::InPlaceStream& is) {
  is.src_ = const_cast<char*>(SkipWhitespace_SIMD(is.src_));
}

// The run of a string's characters up to the next '"', '\\' or control character, skipped (or
// moved down to the write position once an escape has shortened the string), 16 bytes at a time
// from the first byte on. RapidJSON 1.1.0's scan for InsituStringStream goes byte by byte up to
// the next 16-byte boundary first (to keep its aligned loads inside the page), which for the
// short keys and values of a Kubernetes object is most of each string: about 6 % of a small VM's
// admission. Unaligned loads may read up to 15 bytes past the terminating NUL:
// json::parse_json_in_place keeps them inside the buffer's allocation.
//
// Every control character (below 0x20) stops the scan, so that RapidJSON refuses it as the JSON
// grammar says. RapidJSON 1.1.0's own SIMD loop compares with 0x19 instead, so that 0x1A..0x1F
// past a string's first 16-byte boundary were taken as ordinary characters: the webhook admitted
// bodies `vmgate check` refuses (JsonDecodeStrings.InPlaceScanRefusesEveryControlCharacter).
template <>
template <>
inline void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ScanCopyUnescapedString(vmgate::json::InPlaceStream& is,
                                                                                 vmgate::json::InPlaceStream& os) {
  (void)os;  // the same stream: RapidJSON parses in place through one stream
  char* p = is.src_;
  char* q = is.dst_;
  vmgate::json::copy_plain_run<false>(p, q);
  is.src_ = p;
  is.dst_ = q;
}
#endif

}  // namespace rapidjson

namespace vmgate::json {

namespace {

using ParseOutcome = Result<Document, DecodeError>;

// Iterative so that hostile nesting cannot overflow the C++ stack; full precision so that a
// number read back equals the text the user wrote (Kubernetes compares what it stores).
// UTF-8 is validated by common::first_invalid_utf8 over the whole input, 8 bytes at a time, instead of
// RapidJSON's kParseValidateEncodingFlag, which checks character by character inside every
// string (a sixth of the time of a whole admission).
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag;

// The handler reads the input position while RapidJSON is inside a string, to name where a
// key or string it refuses starts. A stream RapidJSON copies into a local there (copy
// optimisation: InPlaceStream) still shows the opening quote; one it does not
// (MemoryStream) shows the position after the closing quote, and the handler scans back.
static_assert(rapidjson::StreamTraits<rapidjson::MemoryStream>::copyOptimization == 0);
static_assert(rapidjson::StreamTraits<InPlaceStream>::copyOptimization == 1);

DecodeError positional_error(std::string_view text, std::size_t offset, std::string message) {
  const common::TextPosition at = common::position_of(text, offset);
  message += " (line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + ")";
  return DecodeError{at.line, at.column, std::move(message)};
}

std::string depth_message(std::size_t max_depth) {
  return "nesting deeper than " + std::to_string(max_depth) + " levels";
}

// The key as a JSON string literal: keys come from the request and may hold quotes or
// control characters that would garble a plain-text message.
std::string quoted(std::string_view key) {
  return to_string(Value(rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size()))));
}

std::string duplicate_message(std::string_view key, const std::string& object_path) {
  std::string message = "duplicate key " + quoted(key) + " in ";
  if (object_path.empty()) {
    message += "the top-level object";
  } else {
    message += "object at " + object_path;
  }
  return message;
}

// Field-path style (a.b[2].c) as in KubeVirt's field errors. A key that would make the path
// ambiguous goes in brackets, the way apimachinery's field.Path renders map keys.
void append_field(std::string& path, std::string_view key) {
  const bool plain = !key.empty() && key.find_first_of(".[]") == std::string_view::npos;
  if (!plain) {
    path += '[';
    path += key;
    path += ']';
    return;
  }
  if (!path.empty()) {
    path += '.';
  }
  path += key;
}

void append_index(std::string& path, std::size_t index) {
  path += '[';
  path += std::to_string(index);
  path += ']';
}

// RFC 8259 strings carry Unicode scalar values. RapidJSON 1.1.0 rejects an unpaired high
// surrogate escape but encodes a lone low one ("\udc00") as the bytes ED B0 80, which is not
// UTF-8. The source bytes are validated, and valid UTF-8 never has ED followed by A0..BF, so
// such a pair in the decoded text can only come from a surrogate escape.
bool has_surrogate(std::string_view decoded) {
  constexpr char lead = static_cast<char>(0xED);
  for (std::size_t at = decoded.find(lead); at != std::string_view::npos; at = decoded.find(lead, at + 1)) {
    if (at + 1 < decoded.size() && static_cast<unsigned char>(decoded[at + 1]) >= 0xA0) {
      return true;
    }
  }
  return false;
}

// Offset of the opening quote of the string that ends just before `end`. Inside a JSON string
// every '"' is escaped, so the backslashes in front of it form an odd run; the first quote
// found scanning backwards with an even run (usually none) is the opening one.
std::size_t string_start(std::string_view text, std::size_t end) {
  std::size_t at = end == 0 ? 0 : end - 1;  // the closing quote
  while (at > 0) {
    --at;
    if (text[at] != '"') {
      continue;
    }
    std::size_t backslashes = 0;
    while (backslashes < at && text[at - 1 - backslashes] == '\\') {
      ++backslashes;
    }
    if (backslashes % 2 == 0) {
      return at;
    }
  }
  return 0;
}

std::string rapidjson_message(rapidjson::ParseErrorCode code) {
  std::string message = rapidjson::GetParseError_En(code);
  if (!message.empty() && message.back() == '.') {
    message.pop_back();  // a position follows
  }
  return message;
}

// Whether a JSON number that std::from_chars found out of range is too large (rather than too
// small): the position of its first significant digit relative to the decimal point, plus its
// exponent, is positive.
bool beyond_double_range(std::string_view number) {
  std::size_t i = number.front() == '-' ? std::size_t{1} : std::size_t{0};
  std::int64_t magnitude = 0;  // digits of the integer part once a significant one was seen
  bool significant = false;
  for (; i < number.size() && number[i] >= '0' && number[i] <= '9'; ++i) {
    significant = significant || number[i] != '0';
    magnitude += significant ? 1 : 0;
  }
  if (i < number.size() && number[i] == '.') {
    for (++i; i < number.size() && number[i] >= '0' && number[i] <= '9'; ++i) {
      if (significant) {
        continue;
      }
      significant = number[i] != '0';
      magnitude -= significant ? 0 : 1;
    }
  }
  std::int64_t exponent = 0;
  if (i < number.size() && (number[i] == 'e' || number[i] == 'E')) {
    ++i;
    const bool negative = i < number.size() && number[i] == '-';
    if (i < number.size() && (number[i] == '-' || number[i] == '+')) {
      ++i;
    }
    for (; i < number.size() && number[i] >= '0' && number[i] <= '9'; ++i) {
      exponent = std::min<std::int64_t>(exponent * 10 + (number[i] - '0'), std::int64_t{1} << 40);
    }
    exponent = negative ? -exponent : exponent;
  }
  return significant && magnitude + exponent > 0;  // all zeros is zero, whatever the exponent
}

enum class NumberStored { yes, too_big, malformed };

// A JSON number's text (valid by the grammar; `integer`: without fraction or exponent) as the
// value RapidJSON would give, converted with std::from_chars (correctly rounded): RapidJSON
// 1.1.0's own full-precision strtod has undefined behaviour on inputs the fuzzer found
// ("0E0090": clz(0); a long mantissa with e-333: an index below its power table). Int or Uint
// when the integer fits 32 bits, Int64/Uint64 when it fits 64, otherwise a double; a double
// beyond the range is "Number too big", one below it is ±0. Both decoders store numbers here.
NumberStored store_number(Document& document, std::string_view text, bool integer) {
  const bool negative = !text.empty() && text.front() == '-';
  if (integer) {
    if (negative) {
      std::int64_t value = 0;
      if (std::from_chars(text.data(), text.data() + text.size(), value).ec == std::errc{}) {
        if (value >= std::numeric_limits<std::int32_t>::min()) {
          document.Int(static_cast<int>(value));
        } else {
          document.Int64(value);
        }
        return NumberStored::yes;
      }
    } else {
      std::uint64_t value = 0;
      if (std::from_chars(text.data(), text.data() + text.size(), value).ec == std::errc{}) {
        if (value <= std::numeric_limits<std::uint32_t>::max()) {
          document.Uint(static_cast<unsigned>(value));
        } else {
          document.Uint64(value);
        }
        return NumberStored::yes;
      }
    }
  }
  double value = 0;
  const std::from_chars_result result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    if (beyond_double_range(text)) {
      return NumberStored::too_big;
    }
    value = negative ? -0.0 : 0.0;
  } else if (result.ec != std::errc{}) {
    return NumberStored::malformed;
  }
  document.Double(value);
  return NumberStored::yes;
}

// SAX handler in front of the Document: it enforces the depth limit before a container is
// opened (so a 100 000-deep input costs only max_depth steps) and tracks, per open object,
// the keys seen so far and, per container, where the parser is, to name the path of an error.
template <class Stream>
class CheckingHandler {
 public:
  CheckingHandler(Document& document, Stream& stream, std::string_view text, std::size_t max_depth)
      : document_(document),
        stream_(stream),
        text_(text),
        max_depth_(max_depth),
        may_decode_surrogates_(text.find("\\u") != std::string_view::npos) {
    if constexpr (keys_stay_in_place) {
      in_place_base_ = stream.src_;
    }
  }

  bool Null() {
    begin_value();
    return document_.Null();
  }
  bool Bool(bool b) {
    begin_value();
    return document_.Bool(b);
  }
  bool Int(int i) {
    begin_value();
    return document_.Int(i);
  }
  bool Uint(unsigned u) {
    begin_value();
    return document_.Uint(u);
  }
  bool Int64(std::int64_t i) {
    begin_value();
    return document_.Int64(i);
  }
  bool Uint64(std::uint64_t u) {
    begin_value();
    return document_.Uint64(u);
  }
  bool Double(double d) {
    begin_value();
    return document_.Double(d);
  }
  // Every number arrives as its text (kParseNumbersAsStringsFlag) and is converted by
  // store_number.
  bool RawNumber(const char* str, rapidjson::SizeType length, bool /*copy*/) {
    begin_value();
    const std::string_view text(str, length);
    const NumberStored stored = store_number(document_, text, text.find_first_of(".eE") == std::string_view::npos);
    if (stored == NumberStored::yes) {
      return true;
    }
    failure_offset_ = stream_.Tell() - length;
    // kParseErrorNumberMissFraction is not reached: the reader only hands over valid JSON numbers.
    failure_message_ = rapidjson_message(stored == NumberStored::too_big ? rapidjson::kParseErrorNumberTooBig
                                                                         : rapidjson::kParseErrorNumberMissFraction);
    return false;
  }

  bool String(const char* str, rapidjson::SizeType length, bool copy) {
    begin_value();
    return check_surrogates(str, length) && document_.String(str, length, copy);
  }

  bool Key(const char* str, rapidjson::SizeType length, bool copy) {
    if (!check_surrogates(str, length)) {
      return false;
    }
    Frame& frame = frames_[depth_ - 1];
    const std::string_view key(str, length);
    if (is_duplicate(frame, key)) {
      failure_offset_ = current_string_start();
      failure_message_ = duplicate_message(key, path_of_open_container());
      return false;
    }
    frame.key_index = keys_.size();
    if constexpr (keys_stay_in_place) {
      keys_.push_back(KeyRef{static_cast<std::size_t>(str - in_place_base_), key.size()});
    } else {
      keys_.push_back(KeyRef{key_bytes_.size(), key.size()});
      key_bytes_.append(key);
    }
    return document_.Key(str, length, copy);
  }

  bool StartObject() { return open(true) && document_.StartObject(); }
  bool StartArray() { return open(false) && document_.StartArray(); }
  bool EndObject(rapidjson::SizeType count) {
    --depth_;
    const Frame& frame = frames_[depth_];
    keys_.resize(frame.first_key);  // the keys of the open objects form a stack
    key_bytes_.resize(frame.first_key_byte);
    return document_.EndObject(count);
  }
  bool EndArray(rapidjson::SizeType count) {
    --depth_;
    return document_.EndArray(count);
  }

  /// Set when a check of this handler (not RapidJSON's grammar) stopped the parse.
  [[nodiscard]] bool failed() const { return !failure_message_.empty(); }
  [[nodiscard]] std::size_t failure_offset() const { return failure_offset_; }
  std::string take_failure_message() { return std::move(failure_message_); }

 private:
  // Parsing in place, a key's decoded bytes stay where the parser wrote them (its write position
  // only moves forward), so only a copying stream (whose strings live in a scratch buffer) has
  // the keys copied into key_bytes_.
  static constexpr bool keys_stay_in_place = std::is_same_v<Stream, InPlaceStream>;

  // A key of an open object: its bytes in the in-place buffer or in key_bytes_.
  struct KeyRef {
    std::size_t offset;
    std::size_t length;
  };

  struct Frame {
    bool is_object = false;
    std::size_t next_index = 0;    // arrays: elements begun so far
    std::size_t key_index = npos;  // objects: the member being parsed, in keys_
    std::size_t first_key = 0;     // objects: where this object's keys start in keys_ and key_bytes_
    std::size_t first_key_byte = 0;
    // Objects with many members: their keys hashed, so that duplicate detection stays linear on
    // hostile input (100 000 members).
    std::unique_ptr<std::unordered_set<std::string>> many;
  };

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  // Up to this many members, comparing the new key with each earlier one (length first) beats
  // hashing; Kubernetes objects rarely have more at one level.
  static constexpr std::size_t linear_keys = 32;

  [[nodiscard]] std::string_view key_at(std::size_t index) const {
    const KeyRef& ref = keys_[index];
    if constexpr (keys_stay_in_place) {
      return {in_place_base_ + ref.offset, ref.length};
    }
    return std::string_view(key_bytes_).substr(ref.offset, ref.length);
  }

  bool is_duplicate(Frame& frame, std::string_view key) {
    const std::size_t count = keys_.size() - frame.first_key;
    if (count < linear_keys) {
      for (std::size_t index = frame.first_key; index < keys_.size(); ++index) {
        if (keys_[index].length == key.size() && key_at(index) == key) {
          return true;
        }
      }
      return false;
    }
    if (!frame.many) {
      frame.many = std::make_unique<std::unordered_set<std::string>>();
      for (std::size_t index = frame.first_key; index < keys_.size(); ++index) {
        frame.many->emplace(key_at(index));
      }
    }
    return !frame.many->emplace(key).second;
  }

  // Every value inside an array moves that array's index on, for the path of a later error.
  void begin_value() {
    if (depth_ > 0 && !frames_[depth_ - 1].is_object) {
      ++frames_[depth_ - 1].next_index;
    }
  }

  bool open(bool is_object) {
    begin_value();
    if (depth_ >= max_depth_) {
      failure_offset_ = stream_.Tell();  // the '[' or '{' not yet consumed
      failure_message_ = depth_message(max_depth_);
      return false;
    }
    // Frames are reused, not popped, so a document of many small objects does not allocate a
    // fresh key set for each.
    if (depth_ == frames_.size()) {
      frames_.emplace_back();
    }
    Frame& frame = frames_[depth_];
    frame.is_object = is_object;
    frame.next_index = 0;
    frame.key_index = npos;
    frame.first_key = keys_.size();
    frame.first_key_byte = key_bytes_.size();
    frame.many.reset();
    ++depth_;
    return true;
  }

  bool check_surrogates(const char* str, rapidjson::SizeType length) {
    // A surrogate can only come from a \u escape (the input is valid UTF-8): one scan of the
    // whole input spares a scan of every string when there is none, the usual case.
    if (!may_decode_surrogates_ || !has_surrogate(std::string_view(str, length))) {
      return true;
    }
    failure_offset_ = current_string_start();
    failure_message_ = "The surrogate pair in string is invalid";
    return false;
  }

  // Path of the innermost open container, from the parents' current member or element.
  [[nodiscard]] std::string path_of_open_container() const {
    std::string path;
    for (std::size_t level = 0; level + 1 < depth_; ++level) {
      const Frame& parent = frames_[level];
      if (parent.is_object) {
        append_field(path, parent.key_index == npos ? std::string_view{} : key_at(parent.key_index));
      } else {
        append_index(path, parent.next_index - 1);
      }
    }
    return path;
  }

  // Where the string being handled starts (its opening quote).
  std::size_t current_string_start() {
    if constexpr (rapidjson::StreamTraits<Stream>::copyOptimization != 0) {
      return stream_.Tell();
    } else {
      return string_start(text_, stream_.Tell());
    }
  }

  Document& document_;
  Stream& stream_;
  std::string_view text_;
  std::size_t max_depth_;
  bool may_decode_surrogates_;
  std::size_t depth_ = 0;
  std::vector<Frame> frames_;
  std::vector<KeyRef> keys_;
  std::string key_bytes_;
  const char* in_place_base_ = nullptr;  // the in-place buffer's first byte (keys_stay_in_place)
  std::size_t failure_offset_ = 0;
  std::string failure_message_;
};

// ---------------------------------------------------------------- the single-pass decoder
//
// parse_json_in_place first runs this decoder of vmgate's own: one pass over the copied body,
// strings unescaped in place, the Document built through its SAX interface with the events (and
// so the values, their types and member order) RapidJSON's reader and CheckingHandler give it.
// It only ever accepts: at the first thing that is not a plain valid document (a grammar error,
// invalid UTF-8, a control character, a surrogate escape that is not a pair, a duplicate key, the
// depth limit, a number RapidJSON or store_number might refuse) it declines, and the caller runs
// RapidJSON's parse over a fresh copy for the refusal's exact message and position. The
// RapidJSON path took 82 000 of the 192 000 instructions of a small VM's webhook::review (its
// reader's per-character dispatch, the handler's bookkeeping for error paths, a separate UTF-8
// pass); this one checks UTF-8 inside strings only (a byte above 0x7F anywhere else is a grammar
// error), keeps no paths, and takes about 48 000.

#if defined(RAPIDJSON_SSE2)
// Moves `p` (and the write position `q`) over a string's run of printable ASCII: up to the next
// '"', '\\', control character or byte above 0x7F (copy_plain_run).
inline void skip_plain_run(char*& p, char*& q) {
  copy_plain_run<true>(p, q);
}
#else
inline void skip_plain_run(char*& p, char*& q) {
  for (;;) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20 || c > 0x7F) {
      return;
    }
    *q++ = *p++;
  }
}
#endif

// The four hex digits of a \u escape at `p`, or nullopt (read in order: the NUL stops them).
inline std::optional<unsigned> hex4(const char* p) {
  unsigned value = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = p[i];
    unsigned digit = 0;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      digit = static_cast<unsigned>(c - 'A' + 10);
    } else {
      return std::nullopt;
    }
    value = value * 16 + digit;
  }
  return value;
}

// A code point as RapidJSON's UTF8<>::Encode writes it.
inline char* put_utf8(char* q, unsigned codepoint) {
  const auto byte = [](unsigned value) { return static_cast<char>(static_cast<unsigned char>(value)); };
  if (codepoint < 0x80) {
    *q++ = byte(codepoint);
  } else if (codepoint < 0x800) {
    *q++ = byte(0xC0 | (codepoint >> 6));
    *q++ = byte(0x80 | (codepoint & 0x3F));
  } else if (codepoint < 0x10000) {
    *q++ = byte(0xE0 | (codepoint >> 12));
    *q++ = byte(0x80 | ((codepoint >> 6) & 0x3F));
    *q++ = byte(0x80 | (codepoint & 0x3F));
  } else {
    *q++ = byte(0xF0 | (codepoint >> 18));
    *q++ = byte(0x80 | ((codepoint >> 12) & 0x3F));
    *q++ = byte(0x80 | ((codepoint >> 6) & 0x3F));
    *q++ = byte(0x80 | (codepoint & 0x3F));
  }
  return q;
}

class SinglePassDecoder {
 public:
  // `text`: the body's copy, with a NUL at text[size] and 15 readable bytes after it.
  SinglePassDecoder(char* text, std::size_t size, std::size_t max_depth)
      : p_(text), end_(text + size), max_depth_(max_depth) {
    // Room for a Kubernetes object's nesting and open keys at once rather than by doubling.
    frames_.reserve(16);
    keys_.reserve(64);
  }

  /// Feeds `document` the events of the whole input; false when the decoder declines it (the
  /// document is then to be thrown away, and the text has been partly overwritten).
  bool run(Document& document) {
    skip_whitespace();
    if (p_ == end_) {
      return false;  // "empty input"
    }
    for (;;) {
      // A value starts at p_.
      const char c = *p_;
      if (c == '{' || c == '[') {
        if (depth_ >= max_depth_) {
          return false;
        }
        ++p_;
        skip_whitespace();
        open(c == '{');
        if (c == '{') {
          document.StartObject();
          if (*p_ != '}') {
            if (!member_name(document)) {
              return false;
            }
            continue;  // to the member's value
          }
        } else {
          document.StartArray();
          if (*p_ != ']') {
            ++frames_[depth_ - 1].count;
            continue;  // to the first element
          }
        }
        // An empty container: closed below.
      } else if (!scalar(document)) {
        return false;
      }
      // A value ended: close the containers it completes, then go on to the next value.
      for (;;) {
        skip_whitespace();
        if (depth_ == 0) {
          return p_ == end_;  // a NUL inside the text, or anything else after the root: declined
        }
        Frame& frame = frames_[depth_ - 1];
        if (*p_ == ',') {
          ++p_;
          skip_whitespace();
          if (frame.is_object) {
            if (!member_name(document)) {
              return false;
            }
          } else {
            ++frame.count;
          }
          break;
        }
        if (*p_ != (frame.is_object ? '}' : ']')) {
          return false;
        }
        ++p_;
        --depth_;
        if (frame.is_object) {
          keys_.resize(frame.first_key);
          document.EndObject(frame.count);
        } else {
          document.EndArray(frame.count);
        }
      }
    }
  }

 private:
  struct Frame {
    bool is_object = false;
    rapidjson::SizeType count = 0;  // members or elements so far
    std::size_t first_key = 0;      // objects: where this object's keys start in keys_
    // Objects: one bit per key seen so far, chosen by its head. Equal keys have equal heads, so a
    // key whose bit is clear is no duplicate: most keys are told so without the scan.
    std::uint64_t head_bits = 0;
    // Objects with many members: their keys hashed, as CheckingHandler does.
    std::unique_ptr<std::unordered_set<std::string_view>> many;
  };

  // As CheckingHandler: up to this many members, comparing the new key with each earlier one.
  static constexpr std::size_t linear_keys = 32;

  void skip_whitespace() {
    // Whitespace is at most ' ': one compare says "none here", the usual answer in compact JSON.
    if (static_cast<unsigned char>(*p_) > ' ') {
      return;
    }
    while (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t') {
      ++p_;
    }
  }

  void open(bool is_object) {
    // Frames are reused, not popped, so that their key sets are not allocated again.
    if (depth_ == frames_.size()) {
      frames_.emplace_back();
    }
    Frame& frame = frames_[depth_];
    frame.is_object = is_object;
    frame.count = 0;
    frame.first_key = keys_.size();
    frame.head_bits = 0;
    frame.many.reset();
    ++depth_;
  }

  // A member's name, the ':' and the whitespace up to its value, in the innermost (object) frame.
  [[gnu::always_inline]] bool member_name(Document& document) {
    if (*p_ != '"') {
      return false;
    }
    ++p_;
    std::string_view key;
    std::uint64_t head = 0;
    if (!string(key, &head)) {
      return false;
    }
    Frame& frame = frames_[depth_ - 1];
    // Stored first, then compared where it lies: a copy made on the stack and pushed afterwards
    // was read back whole before its parts were written out (a stalled load per key).
    keys_.push_back(KeyName{key, head});
    if (is_duplicate(frame)) {
      return false;
    }
    ++frame.count;
    document.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()), false);
    skip_whitespace();
    if (*p_ != ':') {
      return false;
    }
    ++p_;
    skip_whitespace();
    return true;
  }

  // A key and its first (up to) eight bytes: two keys of an object mostly differ there, so the
  // linear scan compares one word and calls memcmp only for keys longer than that.
  struct KeyName {
    std::string_view text;
    std::uint64_t head;
  };

  // The first min(size, 8) bytes at `begin`, the rest zero. Reads eight bytes: a string starts
  // inside the text, which is followed by a NUL and 15 readable bytes.
  static std::uint64_t head_of(const char* begin, std::size_t size) {
    static_assert(std::endian::native == std::endian::little, "the mask keeps the low bytes");
    std::uint64_t word = 0;
    std::memcpy(&word, begin, sizeof(word));
    if (size < sizeof(word)) {
      word &= (std::uint64_t{1} << (8 * size)) - 1;  // little-endian: the first bytes are low
    }
    return word;
  }

  // Whether the last key of keys_ is one of the object's earlier ones. Inline, the common case
  // (a key whose bit is clear) is a few instructions; as a call it cost forty (the slow path's
  // registers saved and restored around it).
  [[gnu::always_inline]] bool is_duplicate(Frame& frame) {
    const std::size_t last = keys_.size() - 1;
    if (last - frame.first_key < linear_keys) {
      // The head's top six bits after a multiplicative (Fibonacci) hash pick the bit.
      constexpr std::uint64_t golden = 0x9E3779B97F4A7C15;
      const std::uint64_t bit = std::uint64_t{1} << ((keys_.back().head * golden) >> 58U);
      if ((frame.head_bits & bit) == 0) {
        frame.head_bits |= bit;
        return false;
      }
    }
    return is_duplicate_slow(frame);
  }

  // is_duplicate past its bit test: the key's bit was set by an earlier key, or the object has
  // more keys than a scan suits.
  [[gnu::noinline]] bool is_duplicate_slow(Frame& frame) {
    const KeyName& key = keys_.back();
    const std::size_t last = keys_.size() - 1;
    if (last - frame.first_key < linear_keys) {
      for (std::size_t index = frame.first_key; index < last; ++index) {
        const KeyName& earlier = keys_[index];
        if (earlier.head == key.head && earlier.text.size() == key.text.size() &&
            (key.text.size() <= sizeof(key.head) ||
             std::memcmp(earlier.text.data() + sizeof(key.head), key.text.data() + sizeof(key.head),
                         key.text.size() - sizeof(key.head)) == 0)) {
          return true;
        }
      }
      return false;
    }
    if (!frame.many) {
      frame.many = std::make_unique<std::unordered_set<std::string_view>>();
      frame.many->reserve(2 * linear_keys);
      for (std::size_t index = frame.first_key; index < last; ++index) {
        frame.many->insert(keys_[index].text);
      }
    }
    return !frame.many->insert(key.text).second;
  }

  // A string's characters from p_ (after the opening quote) unescaped in place, as RapidJSON's
  // in-situ parse writes them: from the first character on, followed by a NUL. Inlined: most
  // strings are a key of a few letters, one block for skip_plain_run. `head`: where a key's
  // head_of goes, read before the NUL is written into those bytes (a load over a store just
  // made to part of it stalls until the store is done, once per key).
  [[gnu::always_inline]] bool string(std::string_view& decoded, std::uint64_t* head = nullptr) {
    char* p = p_;
    char* q = p;
    char* const begin = p;
    for (;;) {
      skip_plain_run(p, q);
      if (*p == '"') {
        if (head != nullptr) {
          *head = head_of(begin, static_cast<std::size_t>(q - begin));
        }
        *q = '\0';
        decoded = std::string_view(begin, static_cast<std::size_t>(q - begin));
        p_ = p + 1;
        return true;
      }
      if (!unusual_character(p, q)) {
        return false;
      }
    }
  }

  // What stopped skip_plain_run inside a string, other than its end: an escape or a UTF-8
  // sequence (written at q), or a control character or the NUL at the end (false).
  static bool unusual_character(char*& p, char*& q) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '\\') {
      return unescape(p, q);
    }
    if (c > 0x7F) {
      // The NUL after the input ends the check there: the bytes are read in order and the
      // first one that is not a continuation byte stops it.
      constexpr std::size_t longest_sequence = 4;
      const std::size_t length =
          common::utf8_sequence_length(reinterpret_cast<const unsigned char*>(p), longest_sequence);
      for (std::size_t i = 0; i < length; ++i) {
        *q++ = *p++;
      }
      return length != 0;
    }
    return false;
  }

  // The escape at p (a backslash), written at q.
  static bool unescape(char*& p, char*& q) {
    const char escaped = p[1];
    char plain = 0;
    switch (escaped) {
      case '"':
      case '\\':
      case '/':
        plain = escaped;
        break;
      case 'b':
        plain = '\b';
        break;
      case 'f':
        plain = '\f';
        break;
      case 'n':
        plain = '\n';
        break;
      case 'r':
        plain = '\r';
        break;
      case 't':
        plain = '\t';
        break;
      case 'u':
        return unescape_unicode(p, q);
      default:
        return false;
    }
    *q++ = plain;
    p += 2;
    return true;
  }

  // \uXXXX, or a surrogate pair \uD8xx\uDCxx. A lone surrogate is declined (RapidJSON refuses a
  // high one; CheckingHandler the low one RapidJSON encodes).
  static bool unescape_unicode(char*& p, char*& q) {
    std::optional<unsigned> codepoint = hex4(p + 2);
    if (!codepoint) {
      return false;
    }
    if (*codepoint >= 0xD800 && *codepoint <= 0xDFFF) {
      if (*codepoint >= 0xDC00 || p[6] != '\\' || p[7] != 'u') {
        return false;
      }
      const std::optional<unsigned> low = hex4(p + 8);
      if (!low || *low < 0xDC00 || *low > 0xDFFF) {
        return false;
      }
      codepoint = (((*codepoint - 0xD800) << 10) | (*low - 0xDC00)) + 0x10000;
      p += 6;
    }
    p += 6;
    q = put_utf8(q, *codepoint);
    return true;
  }

  bool literal(std::string_view word) {
    for (const char c : word) {
      if (*p_ != c) {
        return false;
      }
      ++p_;
    }
    return true;
  }

  bool scalar(Document& document) {
    switch (*p_) {
      case '"': {
        ++p_;
        std::string_view text;
        if (!string(text)) {
          return false;
        }
        document.String(text.data(), static_cast<rapidjson::SizeType>(text.size()), false);
        return true;
      }
      case 't':
        return literal("true") && document.Bool(true);
      case 'f':
        return literal("false") && document.Bool(false);
      case 'n':
        return literal("null") && document.Null();
      default:
        return number(document);
    }
  }

  // The number grammar RapidJSON reads, and its refusals: "Number too big" for a positive
  // exponent above 308 minus the fraction's digits it counts, or for an integer part that reaches
  // DBL_MAX / 10 digit by digit. Declined rather than reproduced: any positive exponent above
  // 308, any integer part of more than 300 digits (below 1e300, far from that bound).
  bool number(Document& document) {
    const char* const begin = p_;
    const auto digit = [this] { return *p_ >= '0' && *p_ <= '9'; };
    if (*p_ == '-') {
      ++p_;
    }
    if (*p_ == '0') {
      ++p_;
    } else if (digit()) {
      const char* const first = p_;
      while (digit()) {
        ++p_;
      }
      if (p_ - first > 300) {
        return false;
      }
    } else {
      return false;
    }
    bool integer = true;
    if (*p_ == '.') {
      ++p_;
      if (!digit()) {
        return false;
      }
      while (digit()) {
        ++p_;
      }
      integer = false;
    }
    if (*p_ == 'e' || *p_ == 'E') {
      ++p_;
      const bool negative = *p_ == '-';
      if (*p_ == '-' || *p_ == '+') {
        ++p_;
      }
      if (!digit()) {
        return false;
      }
      int exponent = 0;
      while (digit()) {
        exponent = std::min(exponent * 10 + (*p_ - '0'), 1000);
        ++p_;
      }
      if (!negative && exponent > 308) {
        return false;
      }
      integer = false;
    }
    const std::string_view text(begin, static_cast<std::size_t>(p_ - begin));
    return store_number(document, text, integer) == NumberStored::yes;
  }

  char* p_;
  const char* const end_;
  std::size_t max_depth_;
  std::size_t depth_ = 0;
  std::vector<Frame> frames_;
  std::vector<KeyName> keys_;  // the names of the open objects' members so far, in place
};

// Duplicate keys among the members of `object`, the second occurrence in member order.
const Value* find_duplicate_key(const Value& object) {
  const auto begin = object.MemberBegin();
  const auto end = object.MemberEnd();
  // Most Kubernetes objects have a handful of members: comparing pairs beats hashing there.
  constexpr rapidjson::SizeType small = 16;
  if (object.MemberCount() <= small) {
    for (auto it = begin; it != end; ++it) {
      for (auto earlier = begin; earlier != it; ++earlier) {
        if (as_view(earlier->name) == as_view(it->name)) {
          return &it->name;
        }
      }
    }
    return nullptr;
  }
  std::unordered_set<std::string_view> seen;
  seen.reserve(object.MemberCount());
  for (auto it = begin; it != end; ++it) {
    if (!seen.insert(as_view(it->name)).second) {
      return &it->name;
    }
  }
  return nullptr;
}

// `text` is the input as the user sent it (for positions and UTF-8 validation); `stream` reads
// either it (copying strings) or an in-situ copy of it.
template <unsigned Flags, class Stream>
Result<Document, DecodeError> parse_stream(std::string_view text, Stream& stream, const DecodeLimits& limits,
                                           Allocator* allocator = nullptr) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return DecodeError{0, 0, "empty input"};
  }
  rapidjson::Reader reader;
  rapidjson::ParseResult parsed;
  Document document(allocator);
  std::optional<DecodeError> failure;
  auto generate = [&](Document& target) {
    CheckingHandler<Stream> handler(target, stream, text, limits.max_depth);
    parsed = reader.Parse<Flags>(stream, handler);
    if (handler.failed()) {
      failure = positional_error(text, handler.failure_offset(), handler.take_failure_message());
    }
    return !parsed.IsError();
  };
  document.Populate(generate);
  // An invalid UTF-8 sequence before the point where the parse stopped is what RapidJSON's
  // own validation would have reported first (a stray byte outside a string stops the parse
  // right there, as a syntax error).
  const std::size_t stopped = failure || parsed.IsError() ? stream.Tell() : text.size();
  if (const std::optional<std::size_t> invalid = common::first_invalid_utf8(text.substr(0, stopped))) {
    return positional_error(text, *invalid, rapidjson_message(rapidjson::kParseErrorStringInvalidEncoding));
  }
  if (failure) {
    return std::move(*failure);
  }
  if (parsed.IsError()) {
    return positional_error(text, parsed.Offset(), rapidjson_message(parsed.Code()));
  }
  // The streams report a NUL byte as the end of input, so "{}\0junk" would parse as "{}".
  if (stream.Tell() != text.size()) {
    return positional_error(text, stream.Tell(), rapidjson_message(rapidjson::kParseErrorDocumentRootNotSingular));
  }
  return ParseOutcome(std::move(document));
}

}  // namespace

Result<Document, DecodeError> parse_json(std::string_view text, const DecodeLimits& limits) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  return parse_stream<kParseFlags>(text, stream, limits);
}

namespace detail {

// RAPIDJSON_SSE2 scans strings and whitespace 16 bytes at a time (and so does
// skip_plain_run), which may read up to 15 bytes past the terminating NUL: keep them inside the
// allocation.
void copy_for_decoding(std::string_view text, std::string& storage) {
  storage.reserve(text.size() + 16);
  storage.assign(text);
}

std::optional<Document> decode_in_place_single_pass(std::string_view text, std::string& storage,
                                                    const DecodeLimits& limits, Allocator* allocator) {
  if (text.size() >= std::numeric_limits<rapidjson::SizeType>::max()) {
    return std::nullopt;  // RapidJSON's string lengths are 32 bits
  }
  copy_for_decoding(text, storage);
  SinglePassDecoder decoder(storage.data(), text.size(), limits.max_depth);
  bool decoded = false;
  auto generate = [&](Document& target) {
    decoded = decoder.run(target);
    return decoded;
  };
  Document document(allocator);
  document.Populate(generate);
  if (!decoded) {
    return std::nullopt;
  }
  return std::optional<Document>(std::move(document));
}

Result<Document, DecodeError> decode_in_place_with_rapidjson(std::string_view text, std::string& storage,
                                                             const DecodeLimits& limits, Allocator* allocator) {
  copy_for_decoding(text, storage);
  InPlaceStream stream(storage.data());
  return parse_stream<kParseFlags | rapidjson::kParseInsituFlag>(text, stream, limits, allocator);
}

}  // namespace detail

Result<Document, DecodeError> parse_json_in_place(std::string_view text, std::string& storage,
                                                  const DecodeLimits& limits, Allocator* allocator) {
  if (std::optional<Document> decoded = detail::decode_in_place_single_pass(text, storage, limits, allocator)) {
    return ParseOutcome(std::move(*decoded));
  }
  // Declined (mostly input to refuse): RapidJSON's parse over a fresh copy (the first pass wrote
  // into `storage`) says what is wrong and where.
  return detail::decode_in_place_with_rapidjson(text, storage, limits, allocator);
}

std::optional<DecodeError> check_structure(const Value& value, const DecodeLimits& limits) {
  if (!value.IsObject() && !value.IsArray()) {
    return std::nullopt;
  }
  struct Frame {
    const Value* container;
    rapidjson::SizeType next;  // index of the next member or element to visit
  };
  std::vector<Frame> stack;
  auto path = [&stack] {
    std::string text;
    for (const Frame& frame : stack) {
      if (frame.container->IsObject()) {
        append_field(text, as_view((frame.container->MemberBegin() + frame.next - 1)->name));
      } else {
        append_index(text, frame.next - 1);
      }
    }
    return text;
  };
  // Checks `container` before it is visited: its depth, then its keys.
  auto enter = [&](const Value& container) -> std::optional<DecodeError> {
    if (stack.size() >= limits.max_depth) {
      return DecodeError{0, 0, depth_message(limits.max_depth)};
    }
    if (container.IsObject()) {
      if (const Value* duplicate = find_duplicate_key(container)) {
        return DecodeError{0, 0, duplicate_message(as_view(*duplicate), path())};
      }
    }
    stack.push_back(Frame{&container, 0});
    return std::nullopt;
  };

  if (auto error = enter(value)) {
    return error;
  }
  while (!stack.empty()) {
    Frame& top = stack.back();
    const Value& container = *top.container;
    const rapidjson::SizeType count = container.IsObject() ? container.MemberCount() : container.Size();
    if (top.next == count) {
      stack.pop_back();
      continue;
    }
    const Value& child = container.IsObject() ? (container.MemberBegin() + top.next)->value : container[top.next];
    ++top.next;
    if (child.IsObject() || child.IsArray()) {
      if (auto error = enter(child)) {
        return error;
      }
    }
  }
  return std::nullopt;
}

}  // namespace vmgate::json
