#pragma once
// apimachinery's equality.Semantic.DeepEqual on objects KubeVirt decoded from JSON, which is how
// its webhooks compare specs and statuses.
#include "vmgate/common/json.hpp"

namespace vmgate::admission {

/// Equal after decoding: a member holding Go's zero value (null, false, 0, "", an empty list or
/// map) equals an absent one, and strings that are Kubernetes quantities compare by value
/// ("1Gi" equals "1024Mi"). An empty object still differs from an absent one: KubeVirt decodes it
/// into a set pointer.
bool semantically_equal(const json::Value& a, const json::Value& b);

}  // namespace vmgate::admission
