#pragma once
// Preference application (KubeVirt pkg/instancetype/preference/apply/*.go). Each function
// fills fields of a VirtualMachineInstanceSpec that the user left unset; the few that override
// user values say so. `preference` is the preference's `spec`.
#include "vmgate/admission/release.hpp"
#include "vmgate/common/json.hpp"

namespace vmgate::admission::preference {

/// vmi.go: the whole preference, in KubeVirt's fixed order. `metadata` receives annotations
/// (the VMI's metadata, or the VM template's metadata for the admission copy).
/// `release` leaves out what that release does not apply (v1.8: preferredVideoType,
/// preferredLaunchSecurity, and a panic device the preference creates).
void apply(const json::Value& preference, json::Value& vmi_spec, json::Value& metadata, json::Allocator& allocator,
           Release release = newest_release);

/// cpu.go: preferredCPUFeatures appended when no feature of that name exists (creates cpu:{},
/// where KubeVirt would dereference nil).
void apply_cpu(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator);
/// device.go: preferredAutoattach* when the VMI value is nil.
void apply_autoattach(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator);
/// device.go, disk.go, interface.go: every devices.preferred* field (includes apply_autoattach).
void apply_devices(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator,
                   Release release = newest_release);
/// features.go: preferredAcpi OVERRIDES; apic, kvm, pvspinlock, smm, hyperv sub-features if nil.
/// v1.7's tlbflush is a FeatureState: decoding the preference keeps only its `enabled`.
void apply_features(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator,
                    Release release = newest_release);
/// firmware.go: bios / biosSerial / efi / deprecated useEfi and useSecureBoot.
void apply_firmware(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator);
/// machine.go: preferredMachineType when machine.type is empty.
void apply_machine(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator);
/// clock.go: preferredClockOffset only when neither utc nor timezone is set; preferredTimer if nil.
void apply_clock(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator);
/// subdomain.go, termination.go, architecture.go, launchsecurity.go, annotations.go.
void apply_subdomain(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator);
void apply_termination_grace_period(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator);
void apply_architecture(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator);
/// Not at v1.8, which has no preferredLaunchSecurity (added with PR #17551).
void apply_launch_security(const json::Value& preference, json::Value& vmi_spec, json::Allocator& allocator,
                           Release release = newest_release);
void apply_annotations(const json::Value& preference, json::Value& metadata, json::Allocator& allocator);

}  // namespace vmgate::admission::preference
