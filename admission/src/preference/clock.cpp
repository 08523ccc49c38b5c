// Reads: preference spec.clock.{preferredClockOffset, preferredTimer}; writes spec.domain.clock.
// Follows pkg/instancetype/preference/apply/clock.go: the offset is copied only when neither
// utc nor timezone is set, never merged.
#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::preference {

void apply_clock(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator) {
  const json::Value* preferred = json::find_object(preference, "clock");
  if (preferred == nullptr) {
    return;
  }
  json::Value& clock = json::ensure_object(spec::domain(vmi_spec, allocator), "clock", allocator);
  const json::Value* offset = json::find_object(*preferred, "preferredClockOffset");
  if (offset != nullptr && spec::unset(clock, "utc") && spec::unset(clock, "timezone")) {
    // ClockOffset is inlined into Clock: its members (utc, timezone) sit directly under clock.
    for (auto it = offset->MemberBegin(); it != offset->MemberEnd(); ++it) {
      if (!it->value.IsNull()) {
        json::set(clock, json::as_view(it->name), json::copy(it->value, allocator), allocator);
      }
    }
  }
  spec::copy_if_unset(*preferred, "preferredTimer", clock, "timer", allocator);
}

}  // namespace vmgate::admission::preference
