#pragma once
// JSON Patch (RFC 6902) applier for tests: replays the webhook's patches the way kube-apiserver
// would, to check what they produce.
#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::testing {

/// Applies a patch (add, remove, replace, move, copy, test) to a copy of `target`; `target` is never
/// modified. Errors name the operation's 0-based index in the patch, its op and path, and the reason:
/// "operation 2 (remove /spec/x): path does not exist". The first failing operation stops the patch
/// (RFC 6902 section 5: the whole patch then fails). Thread-safe.
Result<json::Document> apply_patch(const json::Value& target, const json::Value& patch);

}  // namespace vmgate::testing
