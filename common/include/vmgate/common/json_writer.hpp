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
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "vmgate/common/json.hpp"
#include "vmgate/common/json_text.hpp"

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
