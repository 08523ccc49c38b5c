#pragma once
// YAML <-> JSON for manifests, with Kubernetes' reading of YAML (sigs.k8s.io/yaml over go-yaml v2):
// YAML 1.1 scalar typing (yaml_scalar.hpp), scalar map keys turned into strings, anchors and
// aliases expanded, `<<` merge keys. Built on yaml-cpp's event parser with an explicit stack of
// open containers, so the conversion itself never recurses. Thread-safe (no shared state).
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::kube {

struct YamlLimits {
  /// Containers open at once, aliases expanded (json::DecodeLimits' rule). yaml-cpp's own parser
  /// stops earlier, at about 500 levels written out in the text.
  std::size_t max_depth = 1000;
  /// Size of one converted document, aliases expanded: 16 bytes per value plus the bytes of
  /// every string and member name. Kubernetes stores objects of at most ~1.5 MiB, so this only
  /// stops alias bombs ("billion laughs").
  std::size_t max_document_bytes = std::size_t{64} << 20U;
  /// The same measure for all the documents of the stream together, so that memory stays
  /// bounded for a stream of many documents each just under max_document_bytes.
  std::size_t max_stream_bytes = std::size_t{256} << 20U;
};

/// One document of a YAML stream. `document` is Null for an empty document (`---` alone, `~`):
/// callers skip those, as kubectl does. The documents of one stream share one json::Document
/// (and its allocator); each `document` keeps it alive.
struct YamlDocument {
  std::shared_ptr<const json::Value> document;
  std::size_t line = 0;  // 1-based line where the document's content starts
  std::size_t column = 0;
};

/// A YAML error with its position (1-based; both 0 when yaml-cpp gives none).
struct YamlError {
  std::size_t line = 0;
  std::size_t column = 0;
  std::string message;
};

/// Converts every document of a YAML stream (UTF-8, or UTF-16/32 with a byte-order mark).
/// Errors, each with the line and column where it was found: syntax (yaml-cpp's message),
/// nesting too deep, invalid UTF-8, duplicate key (`duplicate key "name"`), a key that is a
/// mapping, a sequence or null, `.inf`/`.nan` values (JSON has no such numbers), an explicit tag
/// the value does not fit, an alias to a node that is not complete, a merge (`<<`) of something
/// other than mappings, a document larger than max_document_bytes, documents larger than
/// max_stream_bytes together. Conversion stops at the first error.
///
/// Merge keys: keys written in the mapping win over merged ones wherever `<<` stands, and among
/// several merged mappings the earlier wins (the YAML merge-key spec; go-yaml v2 lets a merge
/// written after a key override it, a quirk not reproduced). Integral floats (`1e3`) become
/// integers, as encoding/json writes them and Kubernetes reads them back.
Result<std::vector<YamlDocument>, YamlError> yaml_to_json(std::string_view text, const YamlLimits& limits = {});

/// Renders `value` as one YAML document in block style with 2-space indentation, readable back by
/// yaml_to_json into an equal value: strings that a YAML 1.1 reader would take for something else
/// ("", "true", "yes", "1", "1e3", "null", "~", "<<") are quoted, member order is kept.
/// Non-finite numbers cannot occur in a json::Value read by vmgate; should one appear it is an
/// error, as is any yaml-cpp emitter error.
Result<std::string> json_to_yaml(const json::Value& value);

}  // namespace vmgate::kube
