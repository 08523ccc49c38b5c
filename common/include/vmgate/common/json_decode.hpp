#pragma once
// Hardened decoding of untrusted JSON (AdmissionReview bodies, objects from the cluster).
//
// RapidJSON's plain Document::Parse accepts duplicate keys (json::find sees the first, Go's
// encoding/json in kube-apiserver keeps the last: the webhook and the cluster would then judge
// different objects) and nests as deep as memory allows. Kubernetes' strict decoding rejects duplicates
// (sigs.k8s.io/json) and bounds nesting, so vmgate rejects both before any rule sees the
// object.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::json {

struct DecodeLimits {
  /// Containers (objects and arrays) open at once; a top-level scalar has depth 0.
  std::size_t max_depth = 1000;
};

struct DecodeError {
  /// 1-based; both 0 when the error has no position (empty input, check_structure).
  std::size_t line = 0;
  /// 1-based, in bytes from the start of the line.
  std::size_t column = 0;
  /// Human text; ends with "(line L, column C)" when positional.
  std::string message;
};

/// Parses one JSON text into a Document. Never recursive (RapidJSON kParseIterativeFlag), strict UTF-8
/// (validated over the whole input, and no lone UTF-16 surrogate escapes), no NaN/Infinity, no trailing
/// garbage, nesting deeper than max_depth rejected ("nesting deeper than 1000 levels") while parsing,
/// duplicate object keys rejected with the key and where:
/// `duplicate key "cores" in object at spec.template.spec.domain.cpu` (field-path style: a.b[2].c;
/// a key that is empty or holds '.', '[' or ']' is written [key], as apimachinery writes map keys).
/// Message texts are human: RapidJSON's GetParseError_En plus position. Top-level scalars parse;
/// callers decide whether they want an object. Empty or all-whitespace input: "empty input".
/// Thread-safe (no shared state).
Result<Document, DecodeError> parse_json(std::string_view text, const DecodeLimits& limits = {});

/// parse_json with fewer copies: `text` is copied once into `storage`, which is decoded in place
/// (by a single pass of vmgate's own; what it declines, RapidJSON's in-situ parse decodes again
/// from a fresh copy, for a refusal's message and position), and the Document's strings point
/// into `storage`. So `storage` must outlive the Document and every value copied from it (copies
/// of in-situ strings share the bytes). The same checks, messages and positions as
/// parse_json(text). For a request handled and answered in one scope. The Document allocates
/// from `allocator` when given (which must then outlive it), else from its own. Thread-safe.
Result<Document, DecodeError> parse_json_in_place(std::string_view text, std::string& storage,
                                                  const DecodeLimits& limits = {}, Allocator* allocator = nullptr);

namespace detail {
/// The two decoders behind parse_json_in_place, apart, for the differential test. The single
/// pass of vmgate's own: the document, or nullopt when it declines the input (every input to
/// refuse, and a few unusual valid ones). RapidJSON's in-situ parse: the same answer as
/// parse_json(text), with its messages and positions. Both copy `text` into `storage` first.
std::optional<Document> decode_in_place_single_pass(std::string_view text, std::string& storage,
                                                    const DecodeLimits& limits = {}, Allocator* allocator = nullptr);
Result<Document, DecodeError> decode_in_place_with_rapidjson(std::string_view text, std::string& storage,
                                                             const DecodeLimits& limits = {},
                                                             Allocator* allocator = nullptr);
}  // namespace detail

/// The same depth and duplicate-key checks for a document built another way (YAML conversion);
/// iterative. Errors carry no position (line and column 0). Thread-safe.
std::optional<DecodeError> check_structure(const Value& value, const DecodeLimits& limits = {});

}  // namespace vmgate::json
