#pragma once
// JSON Patch (RFC 6902): a minimal diff for mutating webhook responses and an applier to check
// them (and to replay patches in tests the way kube-apiserver would).
#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::json {

/// Minimal RFC 6902 patch turning `from` into `to`: only changed paths, never a whole-object replace when
/// a deeper op suffices. Objects: recurse per key ("remove" for keys gone, "add" for new keys, recurse when
/// both values are objects or both arrays, "replace" otherwise). Arrays: common prefix handled element-wise
/// (recursing), extra trailing elements of `to` as "add" at explicit indices in increasing order, surplus
/// elements of `from` as "remove" from the highest index down. Deterministic: member order of `from`, then
/// new keys in `to`'s order. Numbers compare by value (json::equal). Returns an array Document ([] if equal).
/// Each operation is {"op", "path"[, "value"]} in that member order. Recursion depth is the nesting
/// depth of the inputs (bounded by parse_json's limit). Thread-safe.
Document diff(const Value& from, const Value& to);

/// Applies a patch (add, remove, replace, move, copy, test) to a copy of `target`; `target` is never
/// modified. Errors name the operation's 0-based index in the patch, its op and path, and the reason:
/// "operation 2 (remove /spec/x): path does not exist". The first failing operation stops the patch
/// (RFC 6902 section 5: the whole patch then fails). Thread-safe.
Result<Document> apply_patch(const Value& target, const Value& patch);

}  // namespace vmgate::json
