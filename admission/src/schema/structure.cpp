// Structural validation: the only translation unit that includes valijson.
//
// At construction the embedded JSON Schemas (schemas/*.inc) are merged, every "$ref" is
// inlined, "null" is added to the type of every optional property, array item and map value
// (Go decodes null as unset), and each root is compiled twice from that one expanded schema:
//   - into a tree of checks (TreeChecker), the fast path: one walk over the object that
//     looks up only the members the schema declares and answers "surely valid" or "not sure"
//     (under 1 us for a 3 KB VirtualMachine);
//   - by valijson, run only when the tree is not sure: it decides, and reports every error
//     with its context, translated into FieldErrors with kube-openapi's wording (valijson 1.0
//     copies its context vector of strings for every node it visits: about 50 us for a
//     20 KB VirtualMachine, paid only by objects that are, or look, invalid).
// valijson is the authority: the tree only ever answers "valid" for objects valijson accepts,
// so the fast path makes validation faster, never different.
//
// For VMs and VMIs the tree also carries KubeVirt's names check (known_fields.hpp), laid over
// its nodes at construction (TreeChecker::align_names), so that a sound object is told sound by
// one walk with one lookup per member (surely_sound) instead of two walks. Where that walk is not
// sure, each check runs on its own as before (validate_each_check_apart) and decides.

// json.hpp first: it defines RAPIDJSON_ASSERT for every translation unit (one definition,
// no ODR split) and has already included RapidJSON. valijson's RapidJSON adapter, seeing a
// RAPIDJSON_ASSERT, emits `#warning "RAPIDJSON_ASSERT already defined"` (fatal under
// -Werror); otherwise it defines its own. `#pragma GCC diagnostic ignored "-Wcpp"` cannot
// silence a #warning in g++ 12 (GCC bug 53431, fixed in 13), so the macro is hidden while the
// adapter is read: the adapter itself never expands it, and RapidJSON's inline code was
// already compiled with ours (include guards), so nothing changes but the warning. Ours is
// restored right after; valijson's leftover rapidjson_assert() template is unused.
#include "vmgate/common/json.hpp"

#pragma push_macro("RAPIDJSON_ASSERT")
#undef RAPIDJSON_ASSERT
#include <valijson/adapters/rapidjson_adapter.hpp>
#undef RAPIDJSON_ASSERT
#pragma pop_macro("RAPIDJSON_ASSERT")
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vmgate/admission/schema/known_fields.hpp"
#include "vmgate/admission/schema/name_table.hpp"
#include "vmgate/admission/schema/structure.hpp"

namespace vmgate::admission {

namespace {

// The embedded schemas: raw string literals, so admission/ reads no files at run time.
constexpr std::string_view common_schema_text =
#include "schema/schemas/common.inc"
    ;
constexpr std::string_view virtual_machine_schema_text =
#include "schema/schemas/virtualmachine.inc"
    ;
constexpr std::string_view instancetype_schema_text =
#include "schema/schemas/instancetype.inc"
    ;

constexpr std::size_t kind_count = 4;

std::size_t kind_index(StructureKind kind) {
  switch (kind) {
    case StructureKind::virtual_machine:
      return 0;
    case StructureKind::virtual_machine_instance:
      return 1;
    case StructureKind::instancetype_spec:
      return 2;
    case StructureKind::preference_spec:
      return 3;
  }
  return 0;
}

// The root definition of each StructureKind, in kind_index order.
constexpr std::array<std::string_view, kind_count> root_definitions = {"VirtualMachine", "VirtualMachineInstance",
                                                                       "Instancetype", "Preference"};

// ---------------------------------------------------------------------------------------
// Schema preparation (start-up only; every failure is a vmgate bug: std::logic_error).

[[noreturn]] void schema_bug(const std::string& what) {
  throw std::logic_error("vmgate embedded structure schema: " + what);
}

bool contains_string(const json::Value* array, std::string_view text) {
  if (array == nullptr || !array->IsArray()) {
    return false;
  }
  return std::any_of(array->Begin(), array->End(),
                     [&](const json::Value& item) { return item.IsString() && json::as_view(item) == text; });
}

class SchemaExpander {
 public:
  explicit SchemaExpander(const json::Value& definitions) : definitions_(definitions) {}

  // A copy of `node` with every "$ref" inlined and, when `nullable`, null admitted.
  json::Value expand(const json::Value& node, bool nullable, int depth, json::Allocator& allocator) const {
    // The schemas are a few levels deep; only a recursive "$ref" gets anywhere near this.
    constexpr int max_depth = 64;
    if (depth > max_depth) {
      schema_bug("nesting deeper than " + std::to_string(max_depth) + " (a recursive $ref?)");
    }
    if (!node.IsObject()) {
      schema_bug("a schema is not an object: " + json::to_string(node));
    }
    if (const json::Value* ref = json::find(node, "$ref")) {
      return expand(resolve(*ref), nullable, depth + 1, allocator);
    }
    const json::Value* required = json::find(node, "required");
    const json::Value* properties = json::find(node, "properties");
    if (required != nullptr) {
      if (!required->IsArray()) {
        schema_bug("\"required\" is not an array");
      }
      for (const json::Value& name : required->GetArray()) {
        if (!name.IsString() || properties == nullptr || json::find(*properties, json::as_view(name)) == nullptr) {
          schema_bug("required member " + json::to_string(name) + " is not a declared property");
        }
      }
    }

    json::Value out(rapidjson::kObjectType);
    for (auto it = node.MemberBegin(); it != node.MemberEnd(); ++it) {
      const std::string_view keyword = json::as_view(it->name);
      if (keyword == "pattern" || keyword == "patternProperties") {
        // valijson evaluates these with std::regex: slow and recursive on long input.
        schema_bug("\"" + std::string(keyword) + "\" is not allowed");
      }
      if (keyword == "definitions") {
        continue;
      }
      json::Value value;
      if (keyword == "properties") {
        if (!it->value.IsObject()) {
          schema_bug("\"properties\" is not an object");
        }
        value.SetObject();
        for (auto p = it->value.MemberBegin(); p != it->value.MemberEnd(); ++p) {
          const bool optional = !contains_string(required, json::as_view(p->name));
          value.AddMember(json::Value(p->name, allocator), expand(p->value, optional, depth + 1, allocator), allocator);
        }
      } else if (keyword == "items" || (keyword == "additionalProperties" && it->value.IsObject())) {
        value = expand(it->value, true, depth + 1, allocator);
      } else {
        value.CopyFrom(it->value, allocator);
      }
      out.AddMember(json::Value(it->name, allocator), std::move(value), allocator);
    }
    if (nullable) {
      admit_null(out, allocator);
    }
    return out;
  }

 private:
  const json::Value& resolve(const json::Value& ref) const {
    constexpr std::string_view prefix = "#/definitions/";
    if (!ref.IsString() || json::as_view(ref).substr(0, prefix.size()) != prefix) {
      schema_bug("unsupported $ref " + json::to_string(ref));
    }
    const json::Value* target = json::find(definitions_, json::as_view(ref).substr(prefix.size()));
    if (target == nullptr) {
      schema_bug("unknown $ref " + json::to_string(ref));
    }
    return *target;
  }

  static void admit_null(json::Value& schema, json::Allocator& allocator) {
    if (json::Value* type = json::find(schema, "type")) {
      if (type->IsString()) {
        json::Value types(rapidjson::kArrayType);
        types.PushBack(json::Value(*type, allocator), allocator);
        *type = std::move(types);
      }
      if (!type->IsArray()) {
        schema_bug("\"type\" is neither a string nor an array");
      }
      if (!contains_string(type, "null")) {
        type->PushBack(json::Value("null"), allocator);
      }
    }
    if (json::Value* values = json::find(schema, "enum")) {
      if (!values->IsArray()) {
        schema_bug("\"enum\" is not an array");
      }
      values->PushBack(json::Value(rapidjson::kNullType), allocator);
    }
  }

  const json::Value& definitions_;
};

json::Document parse_schema_text(std::string_view text, std::string_view name) {
  json::Document document;
  document.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (document.HasParseError()) {
    schema_bug(std::string(name) + " does not parse (offset " + std::to_string(document.GetErrorOffset()) + ")");
  }
  return document;
}

// ---------------------------------------------------------------------------------------
// Translation of valijson's results into FieldErrors.

std::string_view actual_type(const json::Value& value) {
  // go-openapi's names for decoded JSON (every number decodes to float64: "number").
  switch (value.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "boolean";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
  }
  return "null";
}

std::string expected_types(const json::Value* schema) {
  const json::Value* type = schema == nullptr ? nullptr : json::find(*schema, "type");
  if (type == nullptr) {
    return "unknown";  // not reached: a type error comes from a schema with a "type"
  }
  if (type->IsString()) {
    return std::string(json::as_view(*type));
  }
  std::string joined;
  if (type->IsArray()) {
    for (const json::Value& name : type->GetArray()) {
      if (!name.IsString() || json::as_view(name) == "null") {
        continue;  // null is vmgate's addition for optional fields, not the field's type
      }
      if (!joined.empty()) {
        joined.push_back(',');
      }
      joined.append(json::as_view(name));
    }
  }
  return joined;
}

std::string number_text(const json::Value* number) {
  if (number == nullptr || !number->IsNumber()) {
    return "?";
  }
  if (number->IsInt64()) {
    return std::to_string(number->GetInt64());
  }
  if (number->IsUint64()) {
    return std::to_string(number->GetUint64());
  }
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), number->GetDouble());
  return std::string(buffer.data(), result.ptr);
}

std::string enum_text(const json::Value* schema) {
  // go-openapi prints the allowed values with %v: "[Always IfNotPresent Never]".
  std::string text = "[";
  const json::Value* values = schema == nullptr ? nullptr : json::find(*schema, "enum");
  if (values != nullptr && values->IsArray()) {
    bool first = true;
    for (const json::Value& value : values->GetArray()) {
      if (value.IsNull()) {
        continue;  // vmgate's addition for optional fields
      }
      if (!first) {
        text.push_back(' ');
      }
      first = false;
      text.append(value.IsString() ? std::string(json::as_view(value)) : json::to_string(value));
    }
  }
  text.push_back(']');
  return text;
}

// Exact order of two JSON numbers: negative, zero or positive as a <, ==, > b.
int compare_numbers(const json::Value& a, const json::Value& b) {
  if (a.IsInt64() && b.IsInt64()) {
    return a.GetInt64() < b.GetInt64() ? -1 : (a.GetInt64() > b.GetInt64() ? 1 : 0);
  }
  if (a.IsUint64() && b.IsUint64()) {
    return a.GetUint64() < b.GetUint64() ? -1 : (a.GetUint64() > b.GetUint64() ? 1 : 0);
  }
  if (a.IsInt64() && b.IsUint64()) {
    return -1;  // a is negative (else both would be uint64), b is above INT64_MAX
  }
  if (a.IsUint64() && b.IsInt64()) {
    return 1;
  }
  const double x = a.GetDouble();
  const double y = b.GetDouble();
  return x < y ? -1 : (x > y ? 1 : 0);
}

// "greater than or equal to 0" when `value` breaks a bound of `schema`, in go-openapi's words.
std::optional<std::string> range_violation(const json::Value* value, const json::Value* schema) {
  if (value == nullptr || schema == nullptr || !value->IsNumber()) {
    return std::nullopt;
  }
  const auto bound = [&](std::string_view keyword) -> const json::Value* {
    const json::Value* number = json::find(*schema, keyword);
    return number != nullptr && number->IsNumber() ? number : nullptr;
  };
  if (const json::Value* minimum = bound("minimum"); minimum != nullptr && compare_numbers(*value, *minimum) < 0) {
    return "greater than or equal to " + number_text(minimum);
  }
  if (const json::Value* minimum = bound("exclusiveMinimum");
      minimum != nullptr && compare_numbers(*value, *minimum) <= 0) {
    return "greater than " + number_text(minimum);
  }
  if (const json::Value* maximum = bound("maximum"); maximum != nullptr && compare_numbers(*value, *maximum) > 0) {
    return "less than or equal to " + number_text(maximum);
  }
  if (const json::Value* maximum = bound("exclusiveMaximum");
      maximum != nullptr && compare_numbers(*value, *maximum) >= 0) {
    return "less than " + number_text(maximum);
  }
  return std::nullopt;
}

// A member's path in go-openapi/validate's messages (v0.24.0, the version KubeVirt vendors at
// v1.8.2 and at d923fdb815): members and map keys joined by '.', and no list index. Its slice
// validator gives each item's SchemaValidator the "<list>.<i>" path through SetPath only after
// newSchemaValidator has built the item's type, object, string... validators with the list's
// own path, and those report: "spec.domain.devices.disks.bootOrder in body must be of type
// integer", whichever disk it is.
std::string openapi_child(const std::string& path, std::string_view member) {
  return path.empty() ? std::string(member) : path + "." + std::string(member);
}

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

class Translator {
 public:
  Translator(const json::Value& root, const json::Value& root_schema) : root_(root), root_schema_(root_schema) {}

  void add(const valijson::ValidationResults::Error& error) {
    const std::string_view description = error.description;
    if (starts_with(description, "Failed to validate") || starts_with(description, "Cannot validate")) {
      return;  // a link of the chain that leads to the leaf error, reported on its own
    }
    Location at = locate(error.context);
    constexpr std::string_view missing = "Missing required property '";
    if (starts_with(description, missing)) {
      std::string_view name = description.substr(missing.size());
      name = name.substr(0, name.rfind('\''));
      at.path = at.path.child(name);
      at.openapi = openapi_child(at.openapi, name);
      at.order.push_back(std::numeric_limits<std::size_t>::max());  // after present siblings
      std::string message = at.openapi + " in body is required";
      record(std::move(at), priority_required, CauseType::field_value_required, std::move(message));
      return;
    }
    const std::string subject = at.openapi.empty() ? "body" : at.openapi + " in body";
    constexpr std::string_view type_error = "Value type not permitted by 'type' constraint.";
    if (description == type_error && at.value != nullptr && at.value->IsNull() && !at.order.empty()) {
      // Every optional member admits null, so this is a required one. kube-apiserver deletes
      // such a null before any webhook runs (apiextensions-apiserver defaulting/prunenulls.go
      // PruneNonNullableNullsWithoutDefaults): KubeVirt finds the member missing.
      at.order.back() = std::numeric_limits<std::size_t>::max();  // where a missing one sorts
      std::string message = at.openapi + " in body is required";
      record(std::move(at), priority_required, CauseType::field_value_required, std::move(message));
      return;
    }
    if (description == type_error) {
      std::string message = subject + " must be of type " + expected_types(at.schema) + ": \"" +
                            std::string(at.value != nullptr ? actual_type(*at.value) : "null") + "\"";
      record(std::move(at), priority_type, CauseType::field_value_invalid, std::move(message));
    } else if (description == "Failed to match against any enum values.") {
      std::string message = subject + " should be one of " + enum_text(at.schema);
      record(std::move(at), priority_enum, CauseType::field_value_not_supported, std::move(message));
    } else if (starts_with(description, "Expected number")) {
      // valijson compares as double after reading every integer as int64 (a uint64 above
      // INT64_MAX wraps negative), so the bound is found again here with exact arithmetic.
      std::optional<std::string> violation = range_violation(at.value, at.schema);
      if (!violation) {
        return;  // valijson's conversion artefact: the value is within its bounds
      }
      std::string message = subject + " should be " + *violation;
      record(std::move(at), priority_range, CauseType::field_value_invalid, std::move(message));
    } else {
      // A constraint the schemas do not use today: keep valijson's own words.
      std::string message = subject + " is invalid: " + std::string(description);
      record(std::move(at), priority_other, CauseType::field_value_invalid, std::move(message));
    }
  }

  ErrorList finish() {
    std::stable_sort(causes_.begin(), causes_.end(), [](const Cause& a, const Cause& b) { return a.order < b.order; });
    ErrorList errors;
    errors.reserve(causes_.size());
    for (Cause& cause : causes_) {
      errors.push_back(std::move(cause.error));
    }
    return errors;
  }

 private:
  // Lower wins when one path collects several errors: a value of the wrong type also fails
  // its enum, and the type is what the user has to fix.
  static constexpr int priority_type = 0;
  static constexpr int priority_required = 1;
  static constexpr int priority_enum = 2;
  static constexpr int priority_range = 3;
  static constexpr int priority_other = 4;

  struct Location {
    FieldPath path;                       // with list indices: tells causes at different items apart
    std::string openapi;                  // the path as go-openapi writes it in the message (openapi_child)
    std::vector<std::size_t> order;       // member / item positions from the root
    const json::Value* value = nullptr;   // null when the context could not be followed
    const json::Value* schema = nullptr;  // null for a field the schema does not declare
  };

  struct Cause {
    std::vector<std::size_t> order;
    int priority = 0;
    FieldError error;
  };

  void record(Location at, int priority, CauseType type, std::string message) {
    auto [slot, inserted] = by_path_.try_emplace(at.path.str(), causes_.size());
    if (!inserted) {
      Cause& existing = causes_[slot->second];
      if (priority < existing.priority) {
        existing.priority = priority;
        existing.error.type = type;
        existing.error.message = std::move(message);
      }
      return;
    }
    causes_.push_back(Cause{std::move(at.order), priority, FieldError{type, at.path.str(), std::move(message)}});
  }

  // Follows valijson's context (["<root>", "[spec]", "[template]", ..., "[3]"]) through the
  // document and the schema at once: the schema tells a declared property (a.b) from a map
  // entry (a[key]), the document gives positions for document order.
  Location locate(const std::vector<std::string>& context) {
    Location at;
    at.value = &root_;
    at.schema = &root_schema_;
    for (std::size_t i = 1; i < context.size(); ++i) {
      std::string_view segment = context[i];
      if (segment.size() >= 2 && segment.front() == '[' && segment.back() == ']') {
        segment = segment.substr(1, segment.size() - 2);
      }
      if (at.value != nullptr && at.value->IsArray()) {
        std::size_t index = 0;
        const auto [end, ec] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
        if (ec == std::errc{} && end == segment.data() + segment.size() && index < at.value->Size()) {
          at.path = at.path.index(index);
          at.order.push_back(index);
          at.value = &(*at.value)[static_cast<rapidjson::SizeType>(index)];
          at.schema = at.schema == nullptr ? nullptr : json::find(*at.schema, "items");
          continue;
        }
      }
      const json::Value* declared = nullptr;
      const json::Value* map_values = nullptr;
      if (at.schema != nullptr) {
        if (const json::Value* properties = json::find(*at.schema, "properties")) {
          declared = json::find(*properties, segment);
        }
        map_values = json::find_object(*at.schema, "additionalProperties");
      }
      at.path = declared == nullptr && map_values != nullptr ? at.path.key(segment) : at.path.child(segment);
      at.openapi = openapi_child(at.openapi, segment);
      at.schema = declared != nullptr ? declared : map_values;
      if (at.value != nullptr && at.value->IsObject()) {
        const std::size_t position = member_position(*at.value, segment);
        at.order.push_back(position);
        at.value = position < at.value->MemberCount()
                       ? &(at.value->MemberBegin() + static_cast<std::ptrdiff_t>(position))->value
                       : nullptr;
      } else {
        at.order.push_back(std::numeric_limits<std::size_t>::max());
        at.value = nullptr;
      }
    }
    return at;
  }

  // Position of the first member named `key` (valijson also validates the first), or
  // MemberCount() when absent. Large objects get an index, so a map with many wrong values
  // stays linear rather than quadratic.
  std::size_t member_position(const json::Value& object, std::string_view key) {
    constexpr rapidjson::SizeType scan_limit = 16;
    if (object.MemberCount() <= scan_limit) {
      std::size_t position = 0;
      for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it, ++position) {
        if (json::as_view(it->name) == key) {
          return position;
        }
      }
      return position;
    }
    auto [entry, inserted] = member_index_.try_emplace(&object);
    if (inserted) {
      std::size_t position = 0;
      for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it, ++position) {
        entry->second.try_emplace(json::as_view(it->name), position);
      }
    }
    const auto found = entry->second.find(key);
    return found == entry->second.end() ? object.MemberCount() : found->second;
  }

  const json::Value& root_;
  const json::Value& root_schema_;
  std::vector<Cause> causes_;
  std::unordered_map<std::string, std::size_t> by_path_;
  std::unordered_map<const json::Value*, std::unordered_map<std::string_view, std::size_t>> member_index_;
};

// ---------------------------------------------------------------------------------------

// The fast path: the expanded schema compiled into a tree of checks that walks the object
// once, looking up only the members the schema declares. It understands exactly the keywords
// the embedded schemas use (type, properties, required, items, additionalProperties, enum,
// minimum, maximum) and answers only "valid" when it is sure; anything else (a violation, an
// integer bound given as a fraction, a keyword it does not know) sends the object to
// valijson, which decides and explains. So it can make validation faster, never different.
class TreeChecker {
 public:
  explicit TreeChecker(const json::Value& schema) { root_ = compile(schema); }

  [[nodiscard]] bool surely_valid(const json::Value& value) const {
    return root_ && check<false>(*root_, value, newest_release);
  }

  /// Marks where KubeVirt's names check (KnownFields) walks a VM or VMI, so that surely_sound
  /// answers for both checks in one walk. `spec`: what the root's spec holds.
  void align_names(const KnownFields::Position& spec) {
    if (root_) {
      align_root(*root_, spec);
    }
  }

  /// surely_valid, and KnownFields::check would find nothing: one lookup per member serves
  /// both. Only after align_names; "not sure" (false) wherever the two schemas do not line up.
  [[nodiscard]] bool surely_sound(const json::Value& value, Release release) const {
    return root_ && root_->names == Names::checked && check<true>(*root_, value, release);
  }

 private:
  enum TypeBit : unsigned {
    null_bit = 1U << 0U,
    boolean_bit = 1U << 1U,
    object_bit = 1U << 2U,
    array_bit = 1U << 3U,
    string_bit = 1U << 4U,
    integer_bit = 1U << 5U,
    number_bit = 1U << 6U,
    any_type = 0x7FU,
  };

  // Whether KubeVirt's names check walks an object at this node: not at all, in step with
  // this node's properties, or in a way this tree does not follow (surely_sound is not sure).
  enum class Names : std::uint8_t { unchecked, checked, unaligned };

  struct Node;
  struct Property {
    std::string_view name;
    std::unique_ptr<Node> node;
    std::uint64_t required_bit = 0;  // this property's bit in Node::all_required, 0 when optional
    // Under a node whose names are checked: whether KubeVirt's API has this member, from which
    // release, and its bit in Node::names_required (0 when the API does not require it).
    bool names_known = false;
    Release names_since = Release::v1_7;
    std::uint64_t names_required_bit = 0;
  };

  struct Node {
    unsigned types = any_type;
    std::vector<Property> properties;
    NameTable property_names;        // positions in `properties`
    std::uint64_t all_required = 0;  // one bit per required property
    std::unique_ptr<Node> items;
    std::unique_ptr<Node> additional;
    const json::Value* enum_values = nullptr;
    const json::Value* minimum = nullptr;
    const json::Value* maximum = nullptr;
    // Nothing to check but the JSON type (most leaves: strings, booleans, plain integers):
    // checked in the parent's loop, without a call.
    bool type_only = false;
    Names names = Names::unchecked;
    std::uint64_t names_required = 0;  // the API's required members here (null counts as missing)
  };

  static unsigned type_bit(std::string_view name) {
    if (name == "null") {
      return null_bit;
    }
    if (name == "boolean") {
      return boolean_bit;
    }
    if (name == "object") {
      return object_bit;
    }
    if (name == "array") {
      return array_bit;
    }
    if (name == "string") {
      return string_bit;
    }
    if (name == "integer") {
      return integer_bit;
    }
    if (name == "number") {
      return number_bit | integer_bit;
    }
    return 0;
  }

  // nullptr when the schema uses something this checker does not model.
  static std::unique_ptr<Node> compile(const json::Value& schema) {
    if (!schema.IsObject()) {
      return nullptr;
    }
    auto node = std::make_unique<Node>();
    const json::Value* required = nullptr;  // marked once the properties are known
    for (auto it = schema.MemberBegin(); it != schema.MemberEnd(); ++it) {
      const std::string_view keyword = json::as_view(it->name);
      const json::Value& value = it->value;
      if (keyword == "type") {
        node->types = 0;
        if (value.IsString()) {
          node->types = type_bit(json::as_view(value));
        } else if (value.IsArray()) {
          for (const json::Value& type : value.GetArray()) {
            node->types |= type.IsString() ? type_bit(json::as_view(type)) : 0;
          }
        }
        if (node->types == 0) {
          return nullptr;
        }
      } else if (keyword == "properties" && value.IsObject()) {
        for (auto p = value.MemberBegin(); p != value.MemberEnd(); ++p) {
          std::unique_ptr<Node> child = compile(p->value);
          if (!child) {
            return nullptr;
          }
          node->properties.push_back(Property{json::as_view(p->name), std::move(child)});
        }
      } else if (keyword == "required" && value.IsArray()) {
        required = &value;
      } else if (keyword == "items" || keyword == "additionalProperties") {
        std::unique_ptr<Node> child = compile(value);
        if (!child) {
          return nullptr;
        }
        (keyword == "items" ? node->items : node->additional) = std::move(child);
      } else if (keyword == "enum" && value.IsArray()) {
        node->enum_values = &value;
      } else if ((keyword == "minimum" || keyword == "maximum") && (value.IsInt64() || value.IsUint64())) {
        (keyword == "minimum" ? node->minimum : node->maximum) = &value;
      } else if (keyword != "default" && keyword != "description" && keyword != "title") {
        return nullptr;
      }
    }
    std::vector<std::string_view> names;
    names.reserve(node->properties.size());
    for (const Property& property : node->properties) {
      names.push_back(property.name);
    }
    node->property_names = NameTable(names);
    if (required != nullptr && !mark_required(*node, *required)) {
      return nullptr;
    }
    node->type_only = node->properties.empty() && node->all_required == 0 && !node->items && !node->additional &&
                      node->enum_values == nullptr && node->minimum == nullptr && node->maximum == nullptr;
    return node;
  }

  // Gives each required property a bit, so that the walk learns which are present from the
  // lookups it makes anyway instead of searching the object for each. false (not modelled)
  // for a required name that is no property, or for more than 64 of them.
  static bool mark_required(Node& node, const json::Value& required) {
    std::uint64_t next_bit = 1;
    for (const json::Value& name : required.GetArray()) {
      const std::size_t position = name.IsString() ? node.property_names.find(json::as_view(name)) : NameTable::absent;
      if (position == NameTable::absent) {
        return false;
      }
      Property& property = node.properties[position];
      if (property.required_bit == 0) {
        if (next_bit == 0) {
          return false;
        }
        property.required_bit = next_bit;
        node.all_required |= next_bit;
        next_bit <<= 1U;
      }
    }
    return true;
  }

  static unsigned type_of(const json::Value& value) {
    switch (value.GetType()) {
      case rapidjson::kNullType:
        return null_bit;
      case rapidjson::kFalseType:
      case rapidjson::kTrueType:
        return boolean_bit;
      case rapidjson::kObjectType:
        return object_bit;
      case rapidjson::kArrayType:
        return array_bit;
      case rapidjson::kStringType:
        return string_bit;
      case rapidjson::kNumberType:
        return value.IsDouble() ? number_bit : (integer_bit | number_bit);
    }
    return 0;
  }

  // value >= bound (or <= with `upper`), for integer values and integer bounds only.
  static bool within(const json::Value& value, const json::Value& bound, bool upper) {
    if (value.IsDouble()) {
      return false;  // not sure: let valijson decide
    }
    if (value.IsInt64() && bound.IsInt64()) {
      return upper ? value.GetInt64() <= bound.GetInt64() : value.GetInt64() >= bound.GetInt64();
    }
    if (value.IsUint64() && bound.IsUint64()) {
      return upper ? value.GetUint64() <= bound.GetUint64() : value.GetUint64() >= bound.GetUint64();
    }
    return false;
  }

  // Where the names check walks and the CRD schema describes nothing (the API has members its
  // CRD schema does not list, and arrays or maps whose elements it leaves open), the alignment
  // adds a node that accepts any value: it never makes surely_valid stricter or looser, and
  // carries the names check below it.
  static std::unique_ptr<Node> accepting_anything() {
    auto node = std::make_unique<Node>();
    node->type_only = true;
    return node;
  }

  // The names the names check allows at the top of a VM or VMI (openapi.go Validate); it walks
  // only spec, which it requires.
  static void align_root(Node& root, const KnownFields::Position& spec) {
    const std::array<std::string_view, 5> top_level = {"apiVersion", "kind", "metadata", "spec", "status"};
    for (const std::string_view name : top_level) {
      if (!add_missing_property(root, name)) {
        mark_unaligned(root);
        return;
      }
    }
    root.names = Names::checked;
    root.type_only = false;
    for (Property& property : root.properties) {
      property.names_known = std::find(top_level.begin(), top_level.end(), property.name) != top_level.end();
      if (property.name == "spec") {
        property.names_required_bit = 1;
        root.names_required = 1;
        align(*property.node, spec);
      }
    }
  }

  // Gives `node` a property `name` accepting anything unless it has one: false (the walk cannot
  // follow) when the node checks undeclared members against additionalProperties.
  static bool add_missing_property(Node& node, std::string_view name) {
    if (node.property_names.find(name) != NameTable::absent) {
      return true;
    }
    if (node.additional) {
      return false;
    }
    node.properties.push_back(Property{name, accepting_anything()});
    std::vector<std::string_view> names;
    names.reserve(node.properties.size());
    for (const Property& property : node.properties) {
      names.push_back(property.name);
    }
    node.property_names = NameTable(names);
    return true;
  }

  // Lays what the names check holds at a place over this tree's node for it.
  static void align(Node& node, const KnownFields::Position& position) {
    switch (position.shape()) {
      case KnownFields::Position::Shape::anything:
        return;
      case KnownFields::Position::Shape::object:
        align_object(node, position);
        return;
      case KnownFields::Position::Shape::array:
        if (!node.items) {
          node.items = accepting_anything();
          node.type_only = false;
        }
        align(*node.items, position.element());
        return;
      case KnownFields::Position::Shape::map:
        if (!node.properties.empty()) {
          mark_unaligned(node);
          return;
        }
        if (!node.additional) {
          node.additional = accepting_anything();
          node.type_only = false;
        }
        align(*node.additional, position.element());
        return;
    }
  }

  // Every member the names check allows becomes a property of the node (see accepting_anything);
  // any other member is one the API does not have, and surely_sound is not sure of it.
  static void align_object(Node& node, const KnownFields::Position& position) {
    const std::vector<KnownFields::Position::Property> api_properties = position.properties();
    for (const KnownFields::Position::Property& api_property : api_properties) {
      if (!add_missing_property(node, api_property.name)) {
        mark_unaligned(node);
        return;
      }
    }
    node.names = Names::checked;
    node.type_only = false;
    std::uint64_t next_bit = 1;
    for (std::size_t index = 0; index < api_properties.size(); ++index) {
      const KnownFields::Position::Property& api_property = api_properties[index];
      Property& property = node.properties[node.property_names.find(api_property.name)];
      property.names_known = true;
      property.names_since = api_property.since;
      if (api_property.required) {
        if (next_bit == 0) {
          mark_unaligned(node);
          return;
        }
        property.names_required_bit = next_bit;
        node.names_required |= next_bit;
        next_bit <<= 1U;
      }
      align(*property.node, position.holds(index));
    }
  }

  static void mark_unaligned(Node& node) {
    node.names = Names::unaligned;
    node.type_only = false;
  }

  template <bool with_names>
  static bool check_child(const Node& node, const json::Value& value, Release release) {
    return node.type_only ? (type_of(value) & node.types) != 0 : check<with_names>(node, value, release);
  }

  // with_names: also KnownFields::check's conditions where align_names marked them.
  template <bool with_names>
  static bool check(const Node& node, const json::Value& value, Release release) {
    if constexpr (with_names) {
      if (node.names == Names::unaligned) {
        return false;
      }
    }
    if ((type_of(value) & node.types) == 0) {
      return false;
    }
    if (node.enum_values != nullptr) {
      bool listed = false;
      for (const json::Value& allowed : node.enum_values->GetArray()) {
        listed = listed || json::equal(allowed, value);
      }
      if (!listed) {
        return false;
      }
    }
    if (value.IsNumber() && ((node.minimum != nullptr && !within(value, *node.minimum, false)) ||
                             (node.maximum != nullptr && !within(value, *node.maximum, true)))) {
      return false;
    }
    if (value.IsObject()) {
      const bool names_checked = with_names && node.names == Names::checked;
      std::uint64_t required_present = 0;
      // KnownFields: the first member of a name counts, and a null one is missing.
      std::uint64_t names_seen = 0;
      std::uint64_t names_given = 0;
      const auto end = value.MemberEnd();  // once: g++ re-evaluates it (an assertion) per iteration
      for (auto it = value.MemberBegin(); it != end; ++it) {
        const Node* child = node.additional.get();
        if (const std::size_t position = node.property_names.find(json::as_view(it->name));
            position != NameTable::absent) {
          const Property& property = node.properties[position];
          required_present |= property.required_bit;
          child = property.node.get();
          if (names_checked) {
            if (!property.names_known || release < property.names_since) {
              return false;
            }
            if ((names_seen & property.names_required_bit) == 0) {
              names_seen |= property.names_required_bit;
              names_given |= it->value.IsNull() ? 0 : property.names_required_bit;
            }
          }
        } else if (names_checked) {
          return false;
        }
        if (child != nullptr && !check_child<with_names>(*child, it->value, release)) {
          return false;
        }
      }
      if (required_present != node.all_required || (names_checked && names_given != node.names_required)) {
        return false;
      }
    } else if (value.IsArray() && node.items) {
      for (const json::Value& item : value.GetArray()) {
        if (!check_child<with_names>(*node.items, item, release)) {
          return false;
        }
      }
    }
    return true;
  }

  std::unique_ptr<Node> root_;
};

}  // namespace

// ---------------------------------------------------------------------------------------

struct StructureValidator::Schemas {
  struct Compiled {
    json::Document expanded;            // the schema both compiled; walked again for messages
    std::unique_ptr<TreeChecker> tree;  // reads `expanded`
    valijson::Schema schema;
  };
  std::array<std::unique_ptr<Compiled>, kind_count> compiled;
  KnownFields known_fields;
};

StructureValidator::StructureValidator() {
  auto schemas = std::make_shared<Schemas>();

  // All definitions in one namespace, so that any schema may refer to any definition.
  json::Document definitions(rapidjson::kObjectType);
  const std::array<std::pair<std::string_view, std::string_view>, 3> texts = {{
      {"common.inc", common_schema_text},
      {"virtualmachine.inc", virtual_machine_schema_text},
      {"instancetype.inc", instancetype_schema_text},
  }};
  for (const auto& [name, text] : texts) {
    json::Document document = parse_schema_text(text, name);
    const json::Value* found = json::find_object(document, "definitions");
    if (found == nullptr) {
      schema_bug(std::string(name) + " has no \"definitions\" object");
    }
    for (auto it = found->MemberBegin(); it != found->MemberEnd(); ++it) {
      if (json::find(definitions, json::as_view(it->name)) != nullptr) {
        schema_bug("definition " + json::to_string(it->name) + " is defined twice");
      }
      definitions.AddMember(json::Value(it->name, definitions.GetAllocator()),
                            json::Value(it->value, definitions.GetAllocator()), definitions.GetAllocator());
    }
  }

  const SchemaExpander expander(definitions);
  for (std::size_t i = 0; i < kind_count; ++i) {
    auto compiled = std::make_unique<Schemas::Compiled>();
    const json::Value* root = json::find(definitions, root_definitions[i]);
    if (root == nullptr) {
      schema_bug("no definition " + std::string(root_definitions[i]));
    }
    static_cast<json::Value&>(compiled->expanded) = expander.expand(*root, false, 0, compiled->expanded.GetAllocator());
    try {
      compiled->tree = std::make_unique<TreeChecker>(compiled->expanded);
      valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
      const valijson::adapters::RapidJsonAdapter adapter(compiled->expanded);
      parser.populateSchema(adapter, compiled->schema);
    } catch (const std::logic_error&) {
      throw;
    } catch (const std::exception& e) {
      schema_bug(std::string(root_definitions[i]) + " does not compile: " + e.what());
    }
    schemas->compiled[i] = std::move(compiled);
  }
  schemas->compiled[kind_index(StructureKind::virtual_machine)]->tree->align_names(
      schemas->known_fields.spec(KnownFieldsKind::virtual_machine));
  schemas->compiled[kind_index(StructureKind::virtual_machine_instance)]->tree->align_names(
      schemas->known_fields.spec(KnownFieldsKind::virtual_machine_instance));
  schemas_ = std::move(schemas);
}

StructureValidator::~StructureValidator() = default;
StructureValidator::StructureValidator(const StructureValidator& other) = default;
StructureValidator& StructureValidator::operator=(const StructureValidator& other) = default;

namespace {

bool names_checked(StructureKind kind) {
  return kind == StructureKind::virtual_machine || kind == StructureKind::virtual_machine_instance;
}

// Field names first, as KubeVirt's openapi.go reports them before its schema's other errors;
// a "required" that both checks find is reported once.
ErrorList merged(ErrorList names, ErrorList types) {
  for (FieldError& error : types) {
    const bool repeated = std::any_of(names.begin(), names.end(),
                                      [&error](const FieldError& name) { return name.message == error.message; });
    if (!repeated) {
      names.push_back(std::move(error));
    }
  }
  return names;
}

}  // namespace

bool StructureValidator::surely_sound(StructureKind kind, const json::Value& object, Release release) const {
  const TreeChecker& tree = *schemas_->compiled[kind_index(kind)]->tree;
  return names_checked(kind) ? tree.surely_sound(object, release) : tree.surely_valid(object);
}

ErrorList StructureValidator::validate(StructureKind kind, const json::Value& object, Release release) const {
  if (names_checked(kind) && schemas_->compiled[kind_index(kind)]->tree->surely_sound(object, release)) {
    return {};
  }
  return validate_each_check_apart(kind, object, release);
}

ErrorList StructureValidator::validate_each_check_apart(StructureKind kind, const json::Value& object,
                                                        Release release) const {
  const Schemas::Compiled& compiled = *schemas_->compiled[kind_index(kind)];
  try {
    ErrorList names;
    if (names_checked(kind)) {
      names = schemas_->known_fields.check(kind == StructureKind::virtual_machine
                                               ? KnownFieldsKind::virtual_machine
                                               : KnownFieldsKind::virtual_machine_instance,
                                           object, release);
    }
    if (compiled.tree->surely_valid(object)) {
      return names;
    }
    // One Validator per call: valijson keeps a (regex) cache in it, so it is not shareable
    // between threads; the compiled Schema is only read.
    valijson::Validator validator(valijson::Validator::kStrongTypes);
    valijson::ValidationResults results;
    const valijson::adapters::RapidJsonAdapter target(object);
    if (validator.validate(compiled.schema, target, &results)) {
      return names;
    }
    Translator translator(object, compiled.expanded);
    for (const valijson::ValidationResults::Error& error : results) {
      translator.add(error);
    }
    return merged(std::move(names), translator.finish());
  } catch (const std::exception& e) {
    // Not expected for any input; a denial is better than an exception across the pipeline.
    return {FieldError{CauseType::field_value_invalid, "",
                       std::string("the object's structure could not be validated: ") + e.what()}};
  } catch (...) {
    return {FieldError{CauseType::field_value_invalid, "", "the object's structure could not be validated"}};
  }
}

}  // namespace vmgate::admission
