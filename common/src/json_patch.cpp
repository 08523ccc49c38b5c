#include "vmgate/common/json_patch.hpp"
#include "vmgate/common/json_text.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vmgate::json {

namespace {

// ---------------------------------------------------------------------------------------------
// diff

// Text equality that first compares addresses: the mutated object is a json::copy of the
// original, which shares the original's decoded strings, so most compares need no byte compare.
bool same_text(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.data() == b.data() || a == b);
}

// Whether two members (or values) are the same bits: the same scalar, or a string or container
// at the same address, so equal without looking further. Most of a mutated copy is: json::copy
// shares its original's strings, and its scalars are copied bit for bit. Bits that differ say
// nothing (a container copied elsewhere, a short string with other padding): compared the long way.
// No byte read is indeterminate: every RapidJSON value constructor zero-fills its 16 bytes first.
template <typename T>
bool same_bits(const T& a, const T& b) {
  static_assert(sizeof(Value) == 16, "a RapidJSON value is 16 bytes with no padding");
  return std::memcmp(&a, &b, sizeof(T)) == 0;  // NOLINT(bugprone-suspicious-memory-comparison): see above
}

// Member lookup by key. json::find is a linear scan, which makes a per-key diff of two large
// objects quadratic; beyond a few dozen members a hash index pays for itself.
class MemberIndex {
 public:
  explicit MemberIndex(const Value& object) : object_(object) {
    constexpr rapidjson::SizeType small = 32;
    if (object.MemberCount() > small) {
      by_key_.reserve(object.MemberCount());
      for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
        by_key_.emplace(as_view(it->name), &it->value);  // keeps the first of duplicates, like find
      }
    }
  }

  [[nodiscard]] const Value* find(std::string_view key) const {
    if (by_key_.empty()) {
      return json::find(object_, key);
    }
    auto it = by_key_.find(key);
    return it == by_key_.end() ? nullptr : it->second;
  }

 private:
  const Value& object_;
  std::unordered_map<std::string_view, const Value*> by_key_;
};

// Where the Differ's operations go: each is {"op", "path"[, "value"]}, its path a JSON Pointer.
// As values of a patch Document (diff), or as that Document's text (append_diff).
class DocumentOperations {
 public:
  explicit DocumentOperations(Document& patch) : patch_(patch), allocator_(patch.GetAllocator()) {}

  void operation(std::string_view op, std::string_view path, const Value* value) {
    Value operation(rapidjson::kObjectType);
    operation.AddMember("op", make_string(op, allocator_), allocator_);
    operation.AddMember("path", make_string(path, allocator_), allocator_);
    if (value != nullptr) {
      operation.AddMember("value", copy(*value, allocator_), allocator_);
    }
    patch_.PushBack(operation, allocator_);
  }

 private:
  Document& patch_;
  Allocator& allocator_;
};

// The bytes append_text writes of the patch DocumentOperations builds, written as the walk finds
// them: no operation objects, no copies of the values, no second walk over the patch.
class TextOperations {
 public:
  explicit TextOperations(std::string& out) : out_(out) {}

  void operation(std::string_view op, std::string_view path, const Value* value) {
    if (count_ != 0) {
      out_ += ',';
    }
    ++count_;
    out_ += "{\"op\":\"";
    out_ += op;  // "add", "remove" or "replace": nothing to escape
    out_ += "\",\"path\":";
    append_quoted(out_, path);
    if (value != nullptr) {
      out_ += ",\"value\":";
      append_text(out_, *value);
    }
    out_ += '}';
  }

  [[nodiscard]] std::size_t count() const { return count_; }

 private:
  std::string& out_;
  std::size_t count_ = 0;
};

template <typename Operations>
class Differ {
 public:
  explicit Differ(Operations& operations) : operations_(operations) {
    // Room for a Kubernetes object's depth at once rather than by doubling from empty.
    segments_.reserve(16);
  }

  void value(const Value& from, const Value& to) {
    if (from.IsObject() && to.IsObject()) {
      object(from, to);
    } else if (from.IsArray() && to.IsArray()) {
      array(from, to);
    } else if (from.IsString() && to.IsString()) {
      if (!same_text(as_view(from), as_view(to))) {
        emit("replace", &to);
      }
    } else if (!equal(from, to)) {
      emit("replace", &to);
    }
  }

 private:
  // The mutated object is a copy of the original with members changed in place and new ones
  // appended, so members are matched position by position first (no lookup at all for the
  // common case) and by name only where the orders differ.
  void object(const Value& from, const Value& to) {
    const rapidjson::SizeType from_count = from.MemberCount();
    const rapidjson::SizeType to_count = to.MemberCount();
    const rapidjson::SizeType common = std::min(from_count, to_count);
    // While every member so far sits where it sat, the second loop has nothing to look at below
    // `common`: the usual case, a copy with members changed in place and new ones appended.
    bool all_in_place = true;
    std::optional<MemberIndex> to_index;
    for (rapidjson::SizeType i = 0; i < from_count; ++i) {
      const auto member = from.MemberBegin() + i;
      if (i < to_count && same_bits(*member, *(to.MemberBegin() + i))) {
        continue;
      }
      // The name at the same place is mostly the very same string (the copy shares it): its
      // bits decide without reading the text.
      const Value* target = nullptr;
      if (i < to_count && same_name(member->name, (to.MemberBegin() + i)->name)) {
        target = &(to.MemberBegin() + i)->value;
      } else {
        all_in_place = all_in_place && i >= common;
        if (!to_index) {
          to_index.emplace(to);
        }
        target = to_index->find(as_view(member->name));
      }
      // An unchanged string (mostly one the copy shares with the original) emits nothing: no
      // need to note where the walk is.
      if (target != nullptr && target->IsString() && member->value.IsString() &&
          same_text(as_view(member->value), as_view(*target))) {
        continue;
      }
      segments_.push_back(Segment{&member->name, 0});
      if (target != nullptr) {
        value(member->value, *target);
      } else {
        emit("remove", nullptr);
      }
      segments_.pop_back();
    }
    std::optional<MemberIndex> from_index;
    for (rapidjson::SizeType i = all_in_place ? common : 0; i < to_count; ++i) {
      const auto member = to.MemberBegin() + i;
      if (i < from_count && same_name((from.MemberBegin() + i)->name, member->name)) {
        continue;  // matched in place above
      }
      if (!from_index) {
        from_index.emplace(from);
      }
      if (from_index->find(as_view(member->name)) == nullptr) {
        segments_.push_back(Segment{&member->name, 0});
        emit("add", &member->value);
        segments_.pop_back();
      }
    }
  }

  void array(const Value& from, const Value& to) {
    const rapidjson::SizeType common = std::min(from.Size(), to.Size());
    for (rapidjson::SizeType i = 0; i < common; ++i) {
      if (same_bits(from[i], to[i])) {
        continue;
      }
      segments_.push_back(Segment{nullptr, i});
      value(from[i], to[i]);
      segments_.pop_back();
    }
    // Explicit indices rather than "-": each add lands at the current end, and a reader of
    // the patch sees where every element goes.
    for (rapidjson::SizeType i = common; i < to.Size(); ++i) {
      segments_.push_back(Segment{nullptr, i});
      emit("add", &to[i]);
      segments_.pop_back();
    }
    // Highest index first, so that each remove leaves the indices still to remove in place.
    for (rapidjson::SizeType i = from.Size(); i > common; --i) {
      segments_.push_back(Segment{nullptr, i - 1});
      emit("remove", nullptr);
      segments_.pop_back();
    }
  }

  // Where the walk is: the pointer text is built only when an operation is emitted, since most
  // members visited are equal. A member's name value (its text read only then), or an index.
  struct Segment {
    const Value* name;  // null for an array index
    rapidjson::SizeType index;
  };

  // Two member names, equal when the same bits (the copy shares the original's names) or else
  // the same text.
  static bool same_name(const Value& a, const Value& b) { return same_bits(a, b) || same_text(as_view(a), as_view(b)); }

  // Into one buffer the Differ keeps: no allocation per operation.
  [[nodiscard]] std::string_view pointer() {
    std::string& path = pointer_;
    path.clear();
    path.reserve(128);  // once per diff: most pointers fit, rather than doubling from 15 bytes
    for (const Segment& segment : segments_) {
      path += '/';
      if (segment.name == nullptr) {
        char digits[16];
        path.append(digits, std::to_chars(digits, digits + sizeof(digits), segment.index).ptr);
        continue;
      }
      const std::string_view key = as_view(*segment.name);
      // Most names have neither '~' nor '/': two libc scans, then one append.
      if (key.empty() || (std::memchr(key.data(), '~', key.size()) == nullptr &&
                          std::memchr(key.data(), '/', key.size()) == nullptr)) {
        path.append(key);
        continue;
      }
      std::size_t run = 0;  // the start of the characters not yet appended
      for (std::size_t i = 0; i < key.size(); ++i) {
        if (key[i] == '~' || key[i] == '/') {
          path.append(key.data() + run, i - run);
          path += key[i] == '~' ? "~0" : "~1";
          run = i + 1;
        }
      }
      path.append(key.data() + run, key.size() - run);
    }
    return path;
  }

  void emit(std::string_view op, const Value* value) { operations_.operation(op, pointer(), value); }

  Operations& operations_;
  std::vector<Segment> segments_;
  std::string pointer_;
};

}  // namespace

Document diff(const Value& from, const Value& to, Allocator* allocator) {
  Document patch(allocator);
  patch.SetArray();
  DocumentOperations operations(patch);
  Differ(operations).value(from, to);
  return patch;
}

std::size_t append_diff(std::string& out, const Value& from, const Value& to) {
  out += '[';
  TextOperations operations(out);
  Differ(operations).value(from, to);
  out += ']';
  return operations.count();
}

}  // namespace vmgate::json
