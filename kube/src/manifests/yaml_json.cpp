// YAML <-> JSON conversion (see yaml_json.hpp). Kubernetes reads manifests with sigs.k8s.io/yaml:
// go-yaml v2 decodes into interface{}, convertToJSONableObject turns map keys into strings, and
// encoding/json writes the result. This file reproduces that pipeline on yaml-cpp's events.
#include "vmgate/kube/yaml_json.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/emitter.h>
#include <yaml-cpp/emittermanip.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <istream>
#include <optional>
#include <streambuf>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "vmgate/common/utf8.hpp"
#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/yaml_scalar.hpp"

namespace vmgate::kube {

namespace {

// A read-only stream over the caller's text (yaml-cpp wants an istream; no copy of the input).
class ViewBuffer final : public std::streambuf {
 public:
  explicit ViewBuffer(std::string_view text) {
    // std::streambuf's get area is char*; nothing ever writes through it.
    char* begin = const_cast<char*>(text.data());  // NOLINT(cppcoreguidelines-pro-type-const-cast)
    setg(begin, begin, begin + text.size());
  }
};

// Thrown from inside the event handler to stop yaml-cpp at the first conversion error.
struct ConversionError {
  YAML::Mark mark;
  std::string message;
};

constexpr std::size_t value_bytes = 16;  // sizeof(json::Value) on 64-bit

std::size_t one_based(int zero_based) {
  return zero_based < 0 ? 0 : static_cast<std::size_t>(zero_based) + 1;
}

std::string quoted(std::string_view text) {
  return json::to_string(json::Value(rapidjson::StringRef(text.data(), static_cast<rapidjson::SizeType>(text.size()))));
}

// encoding/json writes a float64 without a fraction or exponent when it is integral and below
// 1e21, so Kubernetes reads `1e3` back as the integer 1000.
json::Value json_number(double value) {
  constexpr double two_to_63 = 9223372036854775808.0;
  constexpr double two_to_64 = 18446744073709551616.0;
  json::Value number;
  if (value == std::trunc(value) && std::fabs(value) < 1e21) {
    if (value >= -two_to_63 && value < two_to_63) {
      number.SetInt64(static_cast<std::int64_t>(value));
      return number;
    }
    if (value >= 0 && value < two_to_64) {
      number.SetUint64(static_cast<std::uint64_t>(value));
      return number;
    }
  }
  number.SetDouble(value);
  return number;
}

struct Anchored {
  json::Value value;
  std::size_t height = 0;  // containers on the deepest path inside (scalar: 0)
  std::size_t weight = 0;  // what copying it costs against max_document_bytes
};

struct Merge {
  std::size_t position = 0;  // members written before the `<<` entry
  json::Value source;        // an object
};

struct Frame {
  bool mapping = false;
  json::Value value;
  YAML::anchor_t anchor = YAML::NullAnchor;
  std::size_t weight_at_start = 0;
  std::size_t height = 1;
  YAML::Mark mark;
  // mapping only
  bool has_key = false;
  bool key_is_merge = false;
  std::string key;
  YAML::Mark key_mark;
  std::unordered_set<std::string> keys;  // explicit keys so far
  std::vector<Merge> merges;
};

// Every document of the stream goes into one json::Document, an array of them, so that they
// share its allocator: a json::Document each costs a 64 KiB memory pool (a page of it touched)
// and its own bookkeeping, ~5 KiB of memory for a `---` and a line (measured: a 46 MB stream of
// a million small documents took 5 GB). A document is built in a scratch pool, where objects
// and arrays grow by doubling from 16 members, then copied into the stream's at its exact size
// (~1 KiB less for a two-member object) and the scratch pool is emptied for the next one.
class Converter final : public YAML::EventHandler {
 public:
  explicit Converter(const YamlLimits& limits) : limits_(limits), stream_(std::make_shared<json::Document>()) {
    stream_->SetArray();
  }

  // Pointers into the array are taken only now: appending may have moved its elements.
  std::vector<YamlDocument> take_documents() {
    std::vector<YamlDocument> documents;
    documents.reserve(positions_.size());
    const std::shared_ptr<const json::Document> stream = std::move(stream_);
    for (rapidjson::SizeType i = 0; i < positions_.size(); ++i) {
      documents.push_back(YamlDocument{std::shared_ptr<const json::Value>(stream, &(*stream)[i]), positions_[i].first,
                                       positions_[i].second});
    }
    return documents;
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    root_.SetNull();
    frames_.clear();
    anchors_.clear();
    scratch_.Clear();
    weight_ = 0;
    start_ = mark;
    have_root_mark_ = false;
  }

  void OnDocumentEnd() override {
    if (std::optional<json::DecodeError> error = json::check_structure(root_, {limits_.max_depth})) {
      throw ConversionError{start_, error->message};
    }
    json::Value exact(root_, stream_->GetAllocator());  // RapidJSON's SAX copy: exact sizes
    stream_->PushBack(exact, stream_->GetAllocator());
    positions_.emplace_back(one_based(start_.line), one_based(start_.column));
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    note_root(mark);
    if (in_key_position()) {
      throw ConversionError{mark, "a map key is null; keys must be strings, numbers or booleans"};
    }
    const std::size_t before = weight_;
    charge(value_bytes, mark);
    complete(json::Value(), 0, anchor, before, mark);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    note_root(mark);
    auto found = anchors_.find(anchor);
    if (found == anchors_.end()) {
      throw ConversionError{mark, "alias to a node that contains it"};
    }
    const Anchored& anchored = found->second;
    if (frames_.size() + anchored.height > limits_.max_depth) {
      throw ConversionError{mark, depth_message()};
    }
    charge(anchored.weight, mark);
    json::Value copy(anchored.value, allocator());
    if (in_key_position()) {
      set_key(key_from_json(copy, mark), mark);
      return;
    }
    attach(std::move(copy), anchored.height, mark);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& text) override {
    note_root(mark);
    if (in_key_position()) {
      if ((tag == plain_tag && text == "<<") || tag == std::string(yaml_tag_prefix) + "merge") {
        Frame& top = frames_.back();
        top.has_key = true;
        top.key_is_merge = true;
        top.key_mark = mark;
        return;
      }
      const Scalar scalar = resolve(tag, text, mark);
      if (anchor != YAML::NullAnchor) {  // `&k key: v`, used later as `*k`
        const std::size_t weight = value_bytes + text.size();
        charge(weight, mark);
        anchors_.insert_or_assign(anchor, Anchored{to_json(scalar, mark), 0, weight});
      }
      set_key(key_from_scalar(scalar, mark), mark);
      return;
    }
    const std::size_t before = weight_;
    json::Value value = to_json(resolve(tag, text, mark), mark);
    charge(value_bytes + (value.IsString() ? value.GetStringLength() : 0), mark);
    complete(std::move(value), 0, anchor, before, mark);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    open(false, mark, anchor);
  }

  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    open(true, mark, anchor);
  }

  void OnMapEnd() override { close(); }

 private:
  json::Allocator& allocator() { return scratch_; }

  // Where the document's content starts (yaml-cpp's document mark is the `---` line).
  void note_root(const YAML::Mark& mark) {
    if (frames_.empty() && !have_root_mark_) {
      start_ = mark;
      have_root_mark_ = true;
    }
  }

  [[nodiscard]] bool in_key_position() const {
    return !frames_.empty() && frames_.back().mapping && !frames_.back().has_key;
  }

  [[nodiscard]] std::string depth_message() const {
    return "nesting deeper than " + std::to_string(limits_.max_depth) + " levels";
  }

  void charge(std::size_t bytes, const YAML::Mark& mark) {
    weight_ += bytes;
    stream_weight_ += bytes;
    if (weight_ > limits_.max_document_bytes) {
      throw ConversionError{mark, "document larger than " + std::to_string(limits_.max_document_bytes >> 20U) +
                                      " MiB once aliases are expanded"};
    }
    if (stream_weight_ > limits_.max_stream_bytes) {
      throw ConversionError{mark, "documents larger than " + std::to_string(limits_.max_stream_bytes >> 20U) +
                                      " MiB in all once aliases are expanded"};
    }
  }

  static Scalar resolve(const std::string& tag, const std::string& text, const YAML::Mark& mark) {
    Result<Scalar> scalar = resolve_scalar(tag, text);
    if (!scalar) {
      throw ConversionError{mark, scalar.error().message};
    }
    if (scalar->kind == Scalar::Kind::string) {
      if (common::first_invalid_utf8(scalar->string)) {
        throw ConversionError{mark, "invalid UTF-8 in a string"};
      }
    }
    return std::move(scalar.value());
  }

  json::Value to_json(const Scalar& scalar, const YAML::Mark& mark) {
    json::Value value;
    switch (scalar.kind) {
      case Scalar::Kind::null_value:
        break;
      case Scalar::Kind::boolean:
        value.SetBool(scalar.boolean);
        break;
      case Scalar::Kind::int64:
        value.SetInt64(scalar.int64);
        break;
      case Scalar::Kind::uint64:
        value.SetUint64(scalar.uint64);
        break;
      case Scalar::Kind::float64:
        if (!std::isfinite(scalar.float64)) {
          throw ConversionError{
              mark, std::string(std::isnan(scalar.float64) ? "NaN" : "infinity") + " cannot be represented in JSON"};
        }
        value = json_number(scalar.float64);
        break;
      case Scalar::Kind::string:
        value.SetString(scalar.string.data(), static_cast<rapidjson::SizeType>(scalar.string.size()), allocator());
        break;
    }
    return value;
  }

  // convertToJSONableObject: string keys as they are, ints in decimal, bools as true/false,
  // floats with FormatFloat('g', -1, 32); anything else is unsupported.
  static std::string key_from_scalar(const Scalar& scalar, const YAML::Mark& mark) {
    switch (scalar.kind) {
      case Scalar::Kind::string:
        return scalar.string;
      case Scalar::Kind::boolean:
        return scalar.boolean ? "true" : "false";
      case Scalar::Kind::int64:
        return std::to_string(scalar.int64);
      case Scalar::Kind::float64:
        return float_key(scalar.float64);
      case Scalar::Kind::uint64:
        throw ConversionError{mark, "map key " + std::to_string(scalar.uint64) + " is beyond int64"};
      case Scalar::Kind::null_value:
        break;
    }
    throw ConversionError{mark, "a map key is null; keys must be strings, numbers or booleans"};
  }

  static std::string key_from_json(const json::Value& value, const YAML::Mark& mark) {
    if (value.IsString()) {
      return std::string(json::as_view(value));
    }
    if (value.IsBool()) {
      return value.GetBool() ? "true" : "false";
    }
    if (value.IsInt64()) {
      return std::to_string(value.GetInt64());
    }
    if (value.IsUint64()) {
      throw ConversionError{mark, "map key " + std::to_string(value.GetUint64()) + " is beyond int64"};
    }
    if (value.IsNumber()) {
      return float_key(value.GetDouble());
    }
    if (value.IsNull()) {
      throw ConversionError{mark, "a map key is null; keys must be strings, numbers or booleans"};
    }
    throw ConversionError{
        mark, std::string("a map key is a ") + (value.IsObject() ? "mapping" : "sequence") + "; keys must be scalars"};
  }

  void set_key(std::string key, const YAML::Mark& mark) {
    Frame& top = frames_.back();
    charge(value_bytes + key.size(), mark);
    if (!top.keys.insert(key).second) {
      throw ConversionError{mark, "duplicate key " + quoted(key)};
    }
    top.key = std::move(key);
    top.key_mark = mark;
    top.has_key = true;
  }

  void open(bool mapping, const YAML::Mark& mark, YAML::anchor_t anchor) {
    note_root(mark);
    if (in_key_position()) {
      throw ConversionError{
          mark, std::string("a map key is a ") + (mapping ? "mapping" : "sequence") + "; keys must be scalars"};
    }
    if (frames_.size() + 1 > limits_.max_depth) {
      throw ConversionError{mark, depth_message()};
    }
    const std::size_t before = weight_;
    charge(value_bytes, mark);
    Frame frame;
    frame.mapping = mapping;
    frame.value = json::Value(mapping ? rapidjson::kObjectType : rapidjson::kArrayType);
    frame.anchor = anchor;
    frame.weight_at_start = before;
    frame.mark = mark;
    frames_.push_back(std::move(frame));
  }

  void close() {
    Frame frame = std::move(frames_.back());
    frames_.pop_back();
    if (frame.mapping && !frame.merges.empty()) {
      apply_merges(frame);
    }
    complete(std::move(frame.value), frame.height, frame.anchor, frame.weight_at_start, frame.mark);
  }

  // A finished value: remembered when anchored, then placed into its parent.
  void complete(json::Value&& value, std::size_t height, YAML::anchor_t anchor, std::size_t weight_before,
                const YAML::Mark& mark) {
    if (anchor != YAML::NullAnchor) {
      const std::size_t weight = weight_ - weight_before;
      charge(weight, mark);  // the remembered copy
      anchors_.insert_or_assign(anchor, Anchored{json::Value(value, allocator()), height, weight});
    }
    attach(std::move(value), height, mark);
  }

  void attach(json::Value&& value, std::size_t height, const YAML::Mark& mark) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return;
    }
    Frame& top = frames_.back();
    if (!top.mapping) {
      top.height = std::max(top.height, height + 1);
      top.value.PushBack(value, allocator());
      return;
    }
    if (top.key_is_merge) {
      add_merge(top, std::move(value), height, mark);
    } else {
      top.height = std::max(top.height, height + 1);
      json::Value name(top.key.data(), static_cast<rapidjson::SizeType>(top.key.size()), allocator());
      top.value.AddMember(name, value, allocator());
    }
    top.has_key = false;
    top.key_is_merge = false;
  }

  static void add_merge(Frame& top, json::Value&& value, std::size_t height, const YAML::Mark& mark) {
    const std::size_t position = top.value.MemberCount();
    const std::string wrong = "the value of a merge key (<<) must be a mapping or a sequence of mappings";
    if (value.IsObject()) {
      top.height = std::max(top.height, height);
      top.merges.push_back(Merge{position, std::move(value)});
      return;
    }
    if (!value.IsArray()) {
      throw ConversionError{mark, wrong};
    }
    for (json::Value& element : value.GetArray()) {
      if (!element.IsObject()) {
        throw ConversionError{mark, wrong};
      }
    }
    top.height = std::max(top.height, height > 0 ? height - 1 : 0);
    for (json::Value& element : value.GetArray()) {
      top.merges.push_back(Merge{position, std::move(element)});
    }
  }

  // Keys written in the mapping win wherever `<<` stands; among merged mappings the earlier one
  // wins. Merged members take the place of their `<<` entry.
  void apply_merges(Frame& frame) {
    std::unordered_set<std::string>& seen = frame.keys;
    json::Value merged(rapidjson::kObjectType);
    std::size_t next = 0;
    auto emit_merges_at = [&](std::size_t position) {
      for (; next < frame.merges.size() && frame.merges[next].position == position; ++next) {
        json::Value& source = frame.merges[next].source;
        // Index loops: clang 14 rejects comparing RapidJSON's mutable member iterators in C++20.
        for (rapidjson::SizeType i = 0; i < source.MemberCount(); ++i) {
          auto member = source.MemberBegin() + i;
          if (seen.insert(std::string(json::as_view(member->name))).second) {
            merged.AddMember(member->name, member->value, allocator());
          }
        }
      }
    };
    std::size_t index = 0;
    for (rapidjson::SizeType i = 0; i < frame.value.MemberCount(); ++i, ++index) {
      auto member = frame.value.MemberBegin() + i;
      emit_merges_at(index);
      merged.AddMember(member->name, member->value, allocator());
    }
    emit_merges_at(index);
    frame.value = std::move(merged);
  }

  const YamlLimits& limits_;
  std::shared_ptr<json::Document> stream_;                      // an array: one element per document
  json::Allocator scratch_;                                     // the document being read
  std::vector<std::pair<std::size_t, std::size_t>> positions_;  // line and column of each
  json::Value root_;                                            // the document being read
  std::vector<Frame> frames_;
  std::unordered_map<YAML::anchor_t, Anchored> anchors_;
  std::size_t weight_ = 0;         // of the document being read
  std::size_t stream_weight_ = 0;  // of every document so far
  YAML::Mark start_;
  bool have_root_mark_ = false;
};

bool starts_with_utf16_or_32_bom(std::string_view text) {
  return text.starts_with("\xFE\xFF") || text.starts_with("\xFF\xFE") ||
         text.starts_with(std::string_view("\x00\x00\xFE\xFF", 4));
}

YamlError error_at(const YAML::Mark& mark, std::string message) {
  return YamlError{one_based(mark.line), one_based(mark.column), std::move(message)};
}

}  // namespace

Result<std::vector<YamlDocument>, YamlError> yaml_to_json(std::string_view text, const YamlLimits& limits) {
  if (!starts_with_utf16_or_32_bom(text)) {
    if (std::optional<std::size_t> bad = common::first_invalid_utf8(text)) {
      const common::TextPosition at = common::position_of(text, *bad);
      return YamlError{at.line, at.column, "invalid UTF-8"};
    }
  }
  ViewBuffer buffer(text);
  std::istream in(&buffer);
  Converter converter(limits);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(converter)) {
    }
  } catch (const ConversionError& error) {
    return error_at(error.mark, error.message);
  } catch (const YAML::DeepRecursion& error) {
    return error_at(error.mark, "nesting too deep for the YAML parser (yaml-cpp stops at about 500 levels)");
  } catch (const YAML::Exception& error) {
    return error_at(error.mark, error.msg);
  }
  return converter.take_documents();
}

namespace {

// Strings yaml-cpp would write raw although a YAML reader must not see them raw: C0 and C1
// controls, DEL, and the characters YAML 1.1 counts as line breaks or byte-order marks.
bool needs_escapes(std::string_view text) {
  constexpr std::array<std::string_view, 4> sequences{"\xE2\x80\xA8", "\xE2\x80\xA9", "\xEF\xBB\xBF", "\xC2\x85"};
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20U || byte == 0x7FU) {
      return true;
    }
    if (byte == 0xC2U && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80U && next <= 0x9FU) {
        return true;
      }
    }
  }
  return std::any_of(sequences.begin(), sequences.end(),
                     [text](std::string_view s) { return text.find(s) != std::string_view::npos; });
}

void emit_string(YAML::Emitter& out, std::string_view text) {
  const std::string copy(text);
  if (needs_escapes(text)) {
    out << YAML::EscapeNonAscii << YAML::DoubleQuoted << copy;
  } else if (!plain_scalar_is_string(text)) {
    out << YAML::DoubleQuoted << copy;
  } else {
    out << copy;
  }
}

Result<bool> emit_scalar(YAML::Emitter& out, const json::Value& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      out << YAML::Null;
      break;
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      out << value.GetBool();
      break;
    case rapidjson::kStringType:
      emit_string(out, json::as_view(value));
      break;
    case rapidjson::kNumberType:
      if (value.IsInt64()) {
        out << static_cast<long long>(value.GetInt64());
      } else if (value.IsUint64()) {
        out << static_cast<unsigned long long>(value.GetUint64());
      } else {
        const double number = value.GetDouble();
        if (!std::isfinite(number)) {
          return Error{"a number that is not finite cannot be written"};
        }
        std::array<char, 64> buffer{};
        const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), number);
        if (error != std::errc{}) {
          return Error{"cannot format a number"};
        }
        // The shortest text that reads back as the same double; a plain scalar, so unquoted.
        out << std::string(buffer.data(), end);
      }
      break;
    case rapidjson::kObjectType:
    case rapidjson::kArrayType:
      break;
  }
  return true;
}

}  // namespace

Result<std::string> json_to_yaml(const json::Value& root) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetMapFormat(YAML::Block);
  out.SetSeqFormat(YAML::Block);
  struct Step {
    enum class Kind { value, key, end_map, end_sequence } kind;
    const json::Value* value;
  };
  std::vector<Step> steps{{Step::Kind::value, &root}};
  while (!steps.empty()) {
    const Step step = steps.back();
    steps.pop_back();
    switch (step.kind) {
      case Step::Kind::end_map:
        out << YAML::EndMap;
        continue;
      case Step::Kind::end_sequence:
        out << YAML::EndSeq;
        continue;
      case Step::Kind::key:
        emit_string(out, json::as_view(*step.value));
        continue;
      case Step::Kind::value:
        break;
    }
    const json::Value& v = *step.value;
    if (v.IsObject()) {
      if (v.MemberCount() == 0) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        continue;
      }
      out << YAML::BeginMap;
      steps.push_back({Step::Kind::end_map, nullptr});
      for (auto member = v.MemberEnd(); member != v.MemberBegin();) {
        --member;
        steps.push_back({Step::Kind::value, &member->value});
        steps.push_back({Step::Kind::key, &member->name});
      }
    } else if (v.IsArray()) {
      if (v.Empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        continue;
      }
      out << YAML::BeginSeq;
      steps.push_back({Step::Kind::end_sequence, nullptr});
      for (rapidjson::SizeType i = v.Size(); i > 0; --i) {
        steps.push_back({Step::Kind::value, &v[i - 1]});
      }
    } else {
      Result<bool> written = emit_scalar(out, v);
      if (!written) {
        return written.error();
      }
    }
  }
  if (!out.good()) {
    return Error{"cannot write YAML: " + out.GetLastError()};
  }
  std::string text(out.c_str(), out.size());
  text += '\n';
  return text;
}

}  // namespace vmgate::kube
