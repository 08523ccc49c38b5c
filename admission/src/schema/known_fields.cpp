#include "vmgate/admission/schema/known_fields.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vmgate/admission/schema/name_table.hpp"

namespace vmgate::admission {

namespace {

// Adjacent raw string literals: one JSON document.
constexpr std::string_view known_fields_text =
#include "schema/schemas/known_fields.inc"
    ;

[[noreturn]] void tree_bug(const std::string& what) {
  throw std::logic_error("vmgate embedded known-fields tree: " + what);
}

// A required member is missing when absent or null: kube-apiserver deletes a null that the
// CRD's structural schema does not mark nullable before any webhook runs
// (apiextensions-apiserver pkg/apiserver/schema/defaulting/prunenulls.go
// PruneNonNullableNullsWithoutDefaults), and KubeVirt's CRDs mark none of the required members
// nullable; so KubeVirt's check reports `devices: null` as "... in body is required".
bool missing(const json::Value& object, std::string_view name) {
  const json::Value* member = json::find(object, name);
  return member == nullptr || member->IsNull();
}

// The first release whose API has `property` of `definition`: the tree is KubeVirt main's API,
// and older releases' CRD schemas refuse the members added since as unknown.
Release first_release_with(std::string_view definition, std::string_view property) {
  // Not in v1.8's API (api/core/v1 at v1.8.2).
  if ((definition == "v1.VirtualMachineInstanceSpec" && property == "serviceAccountName") ||
      (definition == "v1.Interface" && property == "portRanges")) {
    return Release::main;
  }
  // Not in v1.7's API (api/openapi-spec/swagger.json at v1.7.0 against v1.8.2). v1.7's hyperv
  // tlbflush is a plain FeatureState.
  if ((definition == "v1.DomainSpec" && property == "rebootPolicy") ||
      (definition == "v1.Interface" && property == "passtBinding") ||
      (definition == "v1.Memory" && property == "reservedOverhead") ||
      (definition == "v1.VirtualMachineInstanceSpec" && property == "utilityVolumes") ||
      (definition == "v1.Volume" && property == "containerPath") ||
      (definition == "v1beta1.DataVolumeSourceImageIO" && property == "insecureSkipVerify") ||
      (definition == "v1.TLBFlush" && (property == "direct" || property == "extended"))) {
    return Release::v1_8;
  }
  return Release::v1_7;
}

}  // namespace

// What a property holds (see tools/gen-known-fields): nothing to check below it, an object of
// a definition, an array of something or a map of something.
struct KnownFields::Tree {
  struct Holds;
  struct Property {
    std::string_view name;
    const Holds* holds = nullptr;
    Release since = Release::v1_7;   // older releases refuse the member as unknown
    std::uint64_t required_bit = 0;  // its bit in the walk's masks, 0 when optional
  };
  struct Required {
    std::string_view name;
    std::uint64_t bit = 0;
  };
  struct Definition {
    std::string_view definition_name;  // "v1.Interface"
    std::vector<Property> properties;
    NameTable property_names;  // positions in `properties`
    std::vector<Required> required;
  };
  struct Holds {
    using Shape = Position::Shape;
    Shape shape = Shape::anything;
    const Definition* object = nullptr;  // Shape::object
    const Holds* element = nullptr;      // Shape::array and Shape::map
    std::size_t index = 0;               // in all_holds
  };

  json::Document document;  // the names below are views into it
  std::unordered_map<std::string_view, Definition> definitions;
  std::vector<std::unique_ptr<Holds>> all_holds;  // owns every Holds below
  const Definition* vm_spec = nullptr;
  const Definition* vmi_spec = nullptr;
  const Holds* vm_spec_holds = nullptr;  // what `spec` holds: vm_spec as a Holds
  const Holds* vmi_spec_holds = nullptr;

  const Holds* compile_holds(const json::Value& value) {
    auto compiled = std::make_unique<Holds>();
    if (value.IsString()) {
      const auto found = definitions.find(json::as_view(value));
      if (found == definitions.end()) {
        tree_bug("unknown definition " + json::to_string(value));
      }
      compiled->shape = Holds::Shape::object;
      compiled->object = &found->second;
    } else if (value.IsArray()) {
      if (value.Size() != 1) {
        tree_bug("an array shape has one element");
      }
      compiled->shape = Holds::Shape::array;
      compiled->element = compile_holds(value[0]);
    } else if (value.IsObject()) {
      const json::Value* element = json::find(value, "*");
      if (element == nullptr || value.MemberCount() != 1) {
        tree_bug("a map shape is {\"*\": ...}");
      }
      compiled->shape = Holds::Shape::map;
      compiled->element = compile_holds(*element);
    } else if (!(value.IsInt() && value.GetInt() == 0)) {
      tree_bug("unknown shape " + json::to_string(value));
    }
    return own(std::move(compiled));
  }

  const Holds* object_holds(const Definition& definition) {
    auto holds = std::make_unique<Holds>();
    holds->shape = Holds::Shape::object;
    holds->object = &definition;
    return own(std::move(holds));
  }

  const Holds* own(std::unique_ptr<Holds> holds) {
    holds->index = all_holds.size();
    all_holds.push_back(std::move(holds));
    return all_holds.back().get();
  }

  const Definition& root(std::string_view kind) const {
    const json::Value* roots = json::find_object(document, "roots");
    const std::string_view name = roots != nullptr ? json::find_string(*roots, kind) : "";
    const auto found = definitions.find(name);
    if (found == definitions.end()) {
      tree_bug("no root for " + std::string(kind));
    }
    return found->second;
  }

  // Where the walk is. Most objects are sound, so the path's text is built only for an error.
  struct Segment {
    enum class Kind { member, index, key } kind;
    std::string_view name;  // member and key
    std::size_t index;      // index
  };

  class Walk {
   public:
    // Room for a VM's nesting and its open objects' members at once rather than by doubling
    // (a dozen allocations per request otherwise).
    Walk(ErrorList& errors, Release release) : errors_(errors), release_(release) {
      path_.reserve(16);
      found_.reserve(128);
    }

    // go-openapi's object validator: the members no property declares, then the required
    // ones missing; then each member's own value.
    void object(const Definition& definition, const json::Value& value) {
      // One lookup per member, kept for the descent below; it also tells which required members
      // are there (the first of a name counts, as for json::find) and not null.
      const std::size_t first = found_.size();
      std::uint64_t required_seen = 0;
      std::uint64_t required_given = 0;
      // MemberEnd() once per loop: it asserts that `value` is an object, and g++ re-evaluates
      // it on every iteration of a loop that writes memory (2 % of a large VM's whole request).
      const auto end = value.MemberEnd();
      for (auto it = value.MemberBegin(); it != end; ++it) {
        const std::string_view name = json::as_view(it->name);
        const Holds* holds = nullptr;
        if (const std::size_t position = definition.property_names.find(name); position != NameTable::absent) {
          const Property& property = definition.properties[position];
          if ((required_seen & property.required_bit) == 0) {
            required_seen |= property.required_bit;
            required_given |= it->value.IsNull() ? 0 : property.required_bit;
          }
          holds = release_ < property.since ? nullptr : property.holds;
        }
        found_.push_back(holds);
        if (holds == nullptr) {
          errors_.push_back({CauseType::field_value_forbidden, path_with(name),
                             openapi_path_with(name) + " in body is a forbidden property"});
        }
      }
      for (const Required& required : definition.required) {
        if ((required_given & required.bit) == 0) {
          errors_.push_back({CauseType::field_value_required, path_with(required.name),
                             openapi_path_with(required.name) + " in body is required"});
        }
      }
      std::size_t index = first;
      for (auto it = value.MemberBegin(); it != end; ++it, ++index) {
        if (const Holds* holds = found_[index]; holds != nullptr && holds->shape != Holds::Shape::anything) {
          path_.push_back(Segment{Segment::Kind::member, json::as_view(it->name), 0});
          this->value(*holds, it->value);
          path_.pop_back();
        }
      }
      found_.resize(first);
    }

    // The walk follows the value only where it has the JSON type the definition expects; a
    // wrong type is StructureValidator's error. Depth is bounded by the definitions' nesting
    // (they have no cycles), each level being one member of the value.
    void value(const Holds& holds, const json::Value& value) {
      switch (holds.shape) {
        case Holds::Shape::anything:
          return;
        case Holds::Shape::object:
          if (value.IsObject()) {
            object(*holds.object, value);
          }
          return;
        case Holds::Shape::array:
          if (value.IsArray()) {
            for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
              path_.push_back(Segment{Segment::Kind::index, {}, i});
              this->value(*holds.element, value[i]);
              path_.pop_back();
            }
          }
          return;
        case Holds::Shape::map:
          if (value.IsObject()) {
            const auto end = value.MemberEnd();
            for (auto it = value.MemberBegin(); it != end; ++it) {
              path_.push_back(Segment{Segment::Kind::key, json::as_view(it->name), 0});
              this->value(*holds.element, it->value);
              path_.pop_back();
            }
          }
          return;
      }
    }

    void enter(std::string_view member) { path_.push_back(Segment{Segment::Kind::member, member, 0}); }

   private:
    // The Kubernetes field path of `member` of the current object.
    [[nodiscard]] std::string path_with(std::string_view member) const {
      FieldPath path;
      for (const Segment& segment : path_) {
        switch (segment.kind) {
          case Segment::Kind::member:
            path = path.child(segment.name);
            break;
          case Segment::Kind::index:
            path = path.index(segment.index);
            break;
          case Segment::Kind::key:
            path = path.key(segment.name);
            break;
        }
      }
      return path.child(member).str();
    }

    // The same path as go-openapi/validate v0.24.0 writes it in its messages: members and map
    // keys joined by '.', no list index (its slice validator builds each item's validators with
    // the list's own path; structure.cpp, openapi_child).
    [[nodiscard]] std::string openapi_path_with(std::string_view member) const {
      std::string path;
      for (const Segment& segment : path_) {
        if (segment.kind != Segment::Kind::index) {
          path.append(path.empty() ? "" : ".").append(segment.name);
        }
      }
      return path.append(path.empty() ? "" : ".").append(member);
    }

    ErrorList& errors_;
    Release release_;
    std::vector<Segment> path_;
    std::vector<const Holds*> found_;  // per open object, what each member holds
  };
};

KnownFields::KnownFields() {
  auto tree = std::make_shared<Tree>();
  tree->document.Parse(known_fields_text.data(), known_fields_text.size());
  const json::Value* definitions =
      tree->document.HasParseError() ? nullptr : json::find_object(tree->document, "definitions");
  if (definitions == nullptr) {
    tree_bug("does not parse or has no definitions");
  }
  // Every definition first, so that properties can point at any of them.
  for (auto it = definitions->MemberBegin(); it != definitions->MemberEnd(); ++it) {
    tree->definitions.try_emplace(json::as_view(it->name));
  }
  for (auto it = definitions->MemberBegin(); it != definitions->MemberEnd(); ++it) {
    Tree::Definition& definition = tree->definitions[json::as_view(it->name)];
    definition.definition_name = json::as_view(it->name);
    const json::Value* properties = json::find_object(it->value, "properties");
    if (properties == nullptr) {
      tree_bug(json::to_string(it->name) + " has no properties object");
    }
    std::vector<std::string_view> names;
    for (auto p = properties->MemberBegin(); p != properties->MemberEnd(); ++p) {
      const std::string_view name = json::as_view(p->name);
      definition.properties.push_back(
          Tree::Property{name, tree->compile_holds(p->value), first_release_with(definition.definition_name, name)});
      names.push_back(name);
    }
    definition.property_names = NameTable(names);
    if (const json::Value* required = json::find(it->value, "required")) {
      std::uint64_t next_bit = 1;
      for (const json::Value& name : required->GetArray()) {
        const std::size_t position = definition.property_names.find(json::as_view(name));
        if (position == NameTable::absent) {
          tree_bug(json::to_string(it->name) + " requires " + json::to_string(name) + ", which is no property");
        }
        Tree::Property& property = definition.properties[position];
        if (property.required_bit == 0) {
          if (next_bit == 0) {
            tree_bug(json::to_string(it->name) + " requires more than 64 members");
          }
          property.required_bit = next_bit;
          next_bit <<= 1U;
        }
        definition.required.push_back(Tree::Required{property.name, property.required_bit});
      }
    }
  }
  tree->vm_spec = &tree->root("VirtualMachine");
  tree->vmi_spec = &tree->root("VirtualMachineInstance");
  tree->vm_spec_holds = tree->object_holds(*tree->vm_spec);
  tree->vmi_spec_holds = tree->object_holds(*tree->vmi_spec);
  tree_ = std::move(tree);
}

KnownFields::Position KnownFields::spec(KnownFieldsKind kind) const {
  return {*tree_, (kind == KnownFieldsKind::virtual_machine ? tree_->vm_spec_holds : tree_->vmi_spec_holds)->index};
}

KnownFields::Position::Shape KnownFields::Position::shape() const {
  return tree_->all_holds[holds_]->shape;
}

std::vector<KnownFields::Position::Property> KnownFields::Position::properties() const {
  std::vector<Property> properties;
  if (const Tree::Definition* definition = tree_->all_holds[holds_]->object) {
    for (const Tree::Property& property : definition->properties) {
      const bool required =
          std::any_of(definition->required.begin(), definition->required.end(),
                      [&property](const Tree::Required& listed) { return listed.name == property.name; });
      properties.push_back(Property{property.name, property.since, required});
    }
  }
  return properties;
}

KnownFields::Position KnownFields::Position::holds(std::size_t property) const {
  const Tree::Definition* definition = tree_->all_holds[holds_]->object;
  if (definition == nullptr) {
    throw std::logic_error("KnownFields::Position::holds of a position that holds no object");
  }
  return {*tree_, definition->properties.at(property).holds->index};
}

KnownFields::Position KnownFields::Position::element() const {
  const Tree::Holds* element = tree_->all_holds[holds_]->element;
  if (element == nullptr) {
    throw std::logic_error("KnownFields::Position::element of a position that holds no array or map");
  }
  return {*tree_, element->index};
}

ErrorList KnownFields::check(KnownFieldsKind kind, const json::Value& object, Release release) const {
  ErrorList errors;
  if (!object.IsObject()) {
    return errors;  // StructureValidator reports a non-object root
  }
  // openapi.go Validate: the top-level keys, spec required, then the spec's definitions.
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    const std::string_view name = json::as_view(it->name);
    if (name != "apiVersion" && name != "kind" && name != "metadata" && name != "spec" && name != "status") {
      errors.push_back({CauseType::field_value_forbidden, std::string(name),
                        "." + std::string(name) + " in body is a forbidden property"});
    }
  }
  const json::Value* spec = json::find(object, "spec");
  if (missing(object, "spec")) {
    errors.push_back({CauseType::field_value_required, "spec", "spec in body is required"});
    return errors;
  }
  Tree::Walk walk(errors, release);
  walk.enter("spec");
  if (spec->IsObject()) {
    walk.object(kind == KnownFieldsKind::virtual_machine ? *tree_->vm_spec : *tree_->vmi_spec, *spec);
  }
  return errors;
}

}  // namespace vmgate::admission
