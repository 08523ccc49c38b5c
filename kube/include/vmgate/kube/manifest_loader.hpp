#pragma once
// Reads Kubernetes objects from manifest files, directories and stdin, as `kubectl apply -f`
// does: YAML (multi-document) or JSON, JSON arrays of objects, and `kind: List` / `*List`
// objects flattened into their items.
// Thread-safety: the functions share no state; load_manifests reads the file system and the
// given stream.
#include <cstddef>
#include <filesystem>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::kube {

struct LoadLimits {
  /// One file (or stdin). Kubernetes objects are at most ~1.5 MiB; this bounds memory only.
  std::size_t max_input_bytes = std::size_t{64} << 20U;
  /// One YAML document once aliases are expanded (see YamlLimits).
  std::size_t max_document_bytes = std::size_t{64} << 20U;
  /// All the YAML documents of one input together, measured the same way (YamlLimits).
  std::size_t max_stream_bytes = std::size_t{256} << 20U;
  /// Objects of one input, after List flattening. With the byte limits this bounds the memory
  /// an input can take: each object costs ~100 bytes of bookkeeping besides its value, and a
  /// 64 MiB input can hold tens of millions of `{}`.
  std::size_t max_objects = 1'000'000;
  /// Nesting of objects and arrays (json::DecodeLimits).
  std::size_t max_depth = 1000;
};

/// One object read from a manifest.
struct ManifestObject {
  /// "path#N": N counts the objects of that file from 0, after List flattening. stdin is "-".
  std::string source;
  /// Owns `*value` (the objects of one input share it).
  std::shared_ptr<const json::Value> document;
  /// A JSON object.
  const json::Value* value = nullptr;

  [[nodiscard]] const json::Value& object() const { return *value; }
};

/// The objects of one file's content; `path` names the file in sources and errors.
/// Content whose first byte other than space, tab or line break is `{` or `[` is JSON
/// (json::parse_json: strict, iterative, duplicate keys rejected), anything else YAML
/// (yaml_json.hpp). A UTF-8 byte-order mark is skipped. Empty YAML documents are skipped.
/// Errors (the message starts with the path): syntax errors and other errors with a position as
/// "path:line:column: message"; a document or item that is not an object ("path:line:column:
/// document 2 is a string, not an object"); a List whose items are not an array of objects;
/// nesting deeper than max_depth; more than max_objects objects ("path: more than 1000000
/// objects").
Result<std::vector<ManifestObject>> parse_manifests(std::string_view text, std::string_view path,
                                                    const LoadLimits& limits = {});

/// The manifest files a directory stands for: every regular file named *.yaml, *.yml or *.json
/// under it, recursively, in the order kubectl walks them (each directory's entries sorted by
/// name, a subdirectory's files where its name sorts). Entries named "..*" are skipped: the
/// versioned directories of a mounted ConfigMap or Secret, whose visible files link into them.
/// Errors: unreadable directory.
Result<std::vector<std::filesystem::path>> manifest_files(const std::filesystem::path& directory);

/// Loads every input in order: a file, a directory (manifest_files) or "-" (all of `standard_input`,
/// labelled "-"). Errors: a path that does not exist or cannot be read, a file larger than
/// max_input_bytes, and parse_manifests' errors. An input without objects is not an error.
Result<std::vector<ManifestObject>> load_manifests(const std::vector<std::string>& inputs, std::istream& standard_input,
                                                   const LoadLimits& limits = {});

/// What load_manifests_keep_going read.
struct LoadedManifests {
  /// The objects of every usable file, in input order.
  std::vector<ManifestObject> objects;
  /// One error per file (or stdin) that could not be read or parsed, in input order, worded as
  /// load_manifests words it; none of that file's objects are in `objects`.
  std::vector<Error> unusable;
};

/// load_manifests as `kubectl apply -f` reads its inputs: a file that cannot be read or parsed
/// (too large, a syntax error, a document that is not an object...) does not stop the others;
/// it is listed in `unusable`. Errors (nothing loaded): a path that does not exist, a directory
/// that cannot be listed.
Result<LoadedManifests> load_manifests_keep_going(const std::vector<std::string>& inputs, std::istream& standard_input,
                                                  const LoadLimits& limits = {});

}  // namespace vmgate::kube
