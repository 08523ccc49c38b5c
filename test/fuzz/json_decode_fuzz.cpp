// libFuzzer target: arbitrary bytes through both decoders behind json::parse_json_in_place, the
// single pass of vmgate's own and RapidJSON's in-situ parse. Whatever the single pass accepts,
// RapidJSON must accept as the same document (value types, member order, strings at the same
// places in the buffer, the same bytes written in place); whatever RapidJSON refuses, the single
// pass must decline. Any disagreement aborts (test/common/json_decode_differential_test.cpp runs
// the same comparison over fixed inputs).
//
//   build-asan/test/fuzz/json_decode_fuzz -max_total_time=60 CORPUS_DIR test/fixtures/webhook
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "vmgate/common/json_decode.hpp"

namespace {

// Whether `a` (in `a_buffer`) and `b` (in `b_buffer`) are the same value built the same way.
// Recursive: both documents passed the depth limit.
bool same(const vmgate::json::Value& a, const char* a_buffer, const vmgate::json::Value& b, const char* b_buffer) {
  if (a.GetType() != b.GetType()) {
    return false;
  }
  switch (a.GetType()) {
    case rapidjson::kStringType:
      return a.GetString() - a_buffer == b.GetString() - b_buffer && a.GetStringLength() == b.GetStringLength() &&
             std::memcmp(a.GetString(), b.GetString(), a.GetStringLength()) == 0;
    case rapidjson::kNumberType: {
      if (a.IsInt() != b.IsInt() || a.IsUint() != b.IsUint() || a.IsInt64() != b.IsInt64() ||
          a.IsUint64() != b.IsUint64() || a.IsDouble() != b.IsDouble()) {
        return false;
      }
      if (a.IsDouble()) {  // bit for bit: -0.0 is not 0.0
        return std::bit_cast<std::uint64_t>(a.GetDouble()) == std::bit_cast<std::uint64_t>(b.GetDouble());
      }
      return a.IsUint64() ? a.GetUint64() == b.GetUint64() : a.GetInt64() == b.GetInt64();
    }
    case rapidjson::kArrayType:
      if (a.Size() != b.Size()) {
        return false;
      }
      for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
        if (!same(a[i], a_buffer, b[i], b_buffer)) {
          return false;
        }
      }
      return true;
    case rapidjson::kObjectType:
      if (a.MemberCount() != b.MemberCount()) {
        return false;
      }
      for (auto x = a.MemberBegin(), y = b.MemberBegin(); x != a.MemberEnd(); ++x, ++y) {
        if (!same(x->name, a_buffer, y->name, b_buffer) || !same(x->value, a_buffer, y->value, b_buffer)) {
          return false;
        }
      }
      return true;
    default:
      return true;  // null, false, true: the type says it all
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);  // NOLINT: the fuzzer's bytes
  // A small limit as well as the default, so that the depth check is reached.
  for (const vmgate::json::DecodeLimits limits : {vmgate::json::DecodeLimits{}, vmgate::json::DecodeLimits{3}}) {
    std::string single_storage;
    const std::optional<vmgate::json::Document> single =
        vmgate::json::detail::decode_in_place_single_pass(text, single_storage, limits);
    std::string reference_storage;
    const auto reference = vmgate::json::detail::decode_in_place_with_rapidjson(text, reference_storage, limits);
    if (!single) {
      continue;  // declined: parse_json_in_place answers with `reference`
    }
    if (!reference.ok() || !same(*single, single_storage.data(), *reference, reference_storage.data()) ||
        std::memcmp(single_storage.data(), reference_storage.data(), size + 1) != 0) {
      std::abort();
    }
  }
  return 0;
}
