#pragma once
// The three preference values the VM mutating webhook writes into the stored VM
// (KubeVirt pkg/instancetype/webhooks/vm/mutator.go: mutateArch, mutateMachineType,
// mutateDataVolumeTemplates).
#include "vmgate/common/json.hpp"

namespace vmgate::admission::preference {

/// `preference` may be null (lookup failed or no matcher): then nothing changes.
void persist_into_vm(const json::Value* preference, json::Value& vm, json::Allocator& allocator);

}  // namespace vmgate::admission::preference
