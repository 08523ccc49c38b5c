#include "vmgate/admission/semantic_equal.hpp"

#include "vmgate/admission/quantity.hpp"

namespace vmgate::admission {

namespace {

bool is_semantic_zero(const json::Value& value) {
  return json::is_zero(&value) || (value.IsArray() && value.Empty());
}

bool members_covered(const json::Value& from, const json::Value& other) {
  for (const auto& member : from.GetObject()) {
    if (is_semantic_zero(member.value)) {
      continue;
    }
    const json::Value* counterpart = json::find(other, json::as_view(member.name));
    if (counterpart == nullptr || !semantically_equal(member.value, *counterpart)) {
      return false;
    }
  }
  return true;
}

// resource.Quantity's semantic equality is Cmp() == 0.
bool equal_quantities(std::string_view a, std::string_view b) {
  const Result<Quantity> left = Quantity::parse(a);
  const Result<Quantity> right = Quantity::parse(b);
  if (!left || !right) {
    return false;
  }
  const Result<Quantity> difference = left->sub(*right);
  return difference && difference->is_zero();
}

}  // namespace

bool semantically_equal(const json::Value& a, const json::Value& b) {
  if (a.IsObject() && b.IsObject()) {
    return members_covered(a, b) && members_covered(b, a);
  }
  if (a.IsArray() && b.IsArray()) {
    if (a.Size() != b.Size()) {
      return false;
    }
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      if (!semantically_equal(a[i], b[i])) {
        return false;
      }
    }
    return true;
  }
  if (a.IsString() && b.IsString() && !json::equal(a, b)) {
    return equal_quantities(json::as_view(a), json::as_view(b));
  }
  return json::equal(a, b) || (is_semantic_zero(a) && is_semantic_zero(b));
}

}  // namespace vmgate::admission
