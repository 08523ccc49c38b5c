// Reads: preference spec.features.*; writes spec.domain.features.
// Follows pkg/instancetype/preference/apply/features.go.
#include <array>
#include <string_view>

#include "vmgate/admission/preference/apply.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::preference {

void apply_features(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator, Release release) {
  const json::Value* preferred = json::find_object(preference, "features");
  if (preferred == nullptr) {
    return;
  }
  json::Value& features = json::ensure_object(spec::domain(vmi_spec, allocator), "features", allocator);
  // features.acpi is a non-pointer FeatureState in the VMI: KubeVirt cannot tell "unset", so it overrides.
  if (const json::Value* acpi = json::find(*preferred, "preferredAcpi"); acpi != nullptr && !acpi->IsNull()) {
    json::set(features, "acpi", json::copy(*acpi, allocator), allocator);
  }
  spec::copy_if_unset(*preferred, "preferredApic", features, "apic", allocator);
  if (const json::Value* hyperv = json::find_object(*preferred, "preferredHyperv")) {
    json::Value& target = json::ensure_object(features, "hyperv", allocator);
    constexpr std::array<std::string_view, 14> sub_features{
        "evmcs",     "frequencies", "ipi",        "reenlightenment", "relaxed", "reset",   "runtime",
        "spinlocks", "synic",       "synictimer", "tlbflush",        "vapic",   "vpindex", "vendorid"};
    const json::Value* own_tlbflush = json::find(target, "tlbflush");
    const bool had_tlbflush = own_tlbflush != nullptr && !own_tlbflush->IsNull();
    for (std::string_view name : sub_features) {
      spec::copy_if_unset(*hyperv, name, target, name, allocator);
    }
    // v1.7.0's FeatureHyperv.TLBFlush is a *FeatureState: the preference's direct and extended do
    // not survive decoding.
    json::Value* tlbflush = json::find(target, "tlbflush");
    if (release <= Release::v1_7 && !had_tlbflush && tlbflush != nullptr && tlbflush->IsObject()) {
      tlbflush->RemoveMember("direct");
      tlbflush->RemoveMember("extended");
    }
  }
  spec::copy_if_unset(*preferred, "preferredKvm", features, "kvm", allocator);
  spec::copy_if_unset(*preferred, "preferredPvspinlock", features, "pvspinlock", allocator);
  spec::copy_if_unset(*preferred, "preferredSmm", features, "smm", allocator);
}

}  // namespace vmgate::admission::preference
