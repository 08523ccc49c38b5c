#pragma once
// JSON Patch (RFC 6902): a minimal diff for mutating webhook responses. Applying a patch is
// kube-apiserver's part, so the applier that replays patches lives with the tests.
#include <cstddef>
#include <string>

#include "vmgate/common/json.hpp"

namespace vmgate::json {

/// Minimal RFC 6902 patch turning `from` into `to`: only changed paths, never a whole-object replace when
/// a deeper op suffices. Objects: recurse per key ("remove" for keys gone, "add" for new keys, recurse when
/// both values are objects or both arrays, "replace" otherwise). Arrays: common prefix handled element-wise
/// (recursing), extra trailing elements of `to` as "add" at explicit indices in increasing order, surplus
/// elements of `from` as "remove" from the highest index down. Deterministic: member order of `from`, then
/// new keys in `to`'s order. Numbers compare by value (json::equal). Returns an array Document ([] if equal).
/// Each operation is {"op", "path"[, "value"]} in that member order. Recursion depth is the nesting
/// depth of the inputs (bounded by parse_json's limit). The patch allocates from `allocator` when
/// given (which must then outlive it), else from its own. Thread-safe.
Document diff(const Value& from, const Value& to, Allocator* allocator = nullptr);

/// diff(from, to) as JSON text, appended to `out`: the bytes append_text(out, diff(from, to))
/// appends ("[]" when equal), written as the walk finds each operation, for a caller that only
/// sends the patch on (the webhook: building the Document and then writing it out took an
/// eighth of a small VM's review). Returns the number of operations. Thread-safe.
std::size_t append_diff(std::string& out, const Value& from, const Value& to);

}  // namespace vmgate::json
