// A VMI's phase transition list (phase_transitions.hpp).
#include "vmgate/controller/phase_transitions.hpp"

namespace vmgate::controller {
namespace {

// A stored list grows by one entry per phase change; a list this long was not written by
// KubeVirt's components and is not copied further.
constexpr rapidjson::SizeType max_transitions = 64;

const json::Value* transitions_of(const json::Value& vmi) {
  const json::Value* list = json::find_path(vmi, {"status", "phaseTransitionTimestamps"});
  return list != nullptr && list->IsArray() ? list : nullptr;
}

}  // namespace

json::Value phase_transitions_with(const json::Value& vmi, std::string_view phase, std::string_view now,
                                   json::Allocator& allocator) {
  json::Value out(rapidjson::kArrayType);
  if (const json::Value* list = transitions_of(vmi); list != nullptr) {
    const rapidjson::SizeType size = list->Size();
    for (rapidjson::SizeType i = size > max_transitions ? size - max_transitions : 0; i < size; ++i) {
      out.PushBack(json::copy((*list)[i], allocator), allocator);
    }
  }
  json::Value entry(rapidjson::kObjectType);
  json::set_string(entry, "phase", phase, allocator);
  json::set_string(entry, "phaseTransitionTimestamp", now, allocator);
  out.PushBack(entry, allocator);
  return out;
}

bool phase_transition_missing(const json::Value& vmi) {
  const json::Value* status = json::find_object(vmi, "status");
  const std::string_view phase = status == nullptr ? std::string_view() : json::find_string(*status, "phase");
  if (phase.empty()) {
    return false;
  }
  const json::Value* list = transitions_of(vmi);
  if (list == nullptr || list->Empty()) {
    return true;
  }
  const json::Value& last = (*list)[list->Size() - 1];
  return !last.IsObject() || json::find_string(last, "phase") != phase;
}

}  // namespace vmgate::controller
