// Manifest loading as `kubectl apply -f` does it (k8s.io/cli-runtime resource.Builder:
// FileVisitor, StreamVisitor and FlattenListVisitor).
#include "vmgate/kube/manifest_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>
#include <utility>

#include "vmgate/common/json_decode.hpp"
#include "vmgate/kube/yaml_json.hpp"

namespace vmgate::kube {

namespace {

namespace fs = std::filesystem;

std::string located(std::string_view path, std::size_t line, std::size_t column, std::string_view message) {
  std::string text(path);
  if (line > 0) {
    text += ':' + std::to_string(line) + ':' + std::to_string(column);
  }
  text += ": ";
  text += message;
  return text;
}

// parse_json ends positional messages with " (line L, column C)"; the prefix says it already.
std::string without_position_suffix(const json::DecodeError& error) {
  const std::string suffix = " (line " + std::to_string(error.line) + ", column " + std::to_string(error.column) + ")";
  if (error.line > 0 && error.message.ends_with(suffix)) {
    return error.message.substr(0, error.message.size() - suffix.size());
  }
  return error.message;
}

bool is_list(const json::Value& object) {
  const std::string_view kind = json::find_string(object, "kind");
  return kind.ends_with("List");
}

// A top-level value of one document: an object, or an array of objects.
struct Root {
  std::shared_ptr<const json::Value> document;
  std::size_t line = 0;
  std::size_t column = 0;
  std::string what;  // "document 2" or "the JSON text", for messages
};

class Collector {
 public:
  Collector(std::string_view path, std::size_t max_objects) : path_(path), max_objects_(max_objects) {}

  // Appends the objects of `root`, flattening Lists (nested ones too) in order.
  Result<bool> add(const Root& root) {
    const json::Value& value = *root.document;
    std::vector<const json::Value*> pending;  // reversed: next object at the back
    if (value.IsObject()) {
      pending.push_back(&value);
    } else if (value.IsArray()) {
      if (Result<bool> ok = push_items(root, value, root.what + ", item ", pending); !ok) {
        return ok.error();
      }
    } else {
      return fail(root, root.what + " is " + std::string(json::type_name(value)) + ", not an object");
    }
    while (!pending.empty()) {
      const json::Value* object = pending.back();
      pending.pop_back();
      if (!is_list(*object)) {
        if (objects_.size() == max_objects_) {
          return Error{path_ + ": more than " + std::to_string(max_objects_) + " objects"};
        }
        objects_.push_back(ManifestObject{path_ + '#' + std::to_string(objects_.size()), root.document, object});
        continue;
      }
      const json::Value* items = json::find(*object, "items");
      if (items == nullptr || items->IsNull()) {
        continue;
      }
      const std::string list = root.what + ": " + std::string(json::find_string(*object, "kind"));
      if (!items->IsArray()) {
        return fail(root, list + " items must be an array, found " + std::string(json::type_name(*items)));
      }
      if (Result<bool> ok = push_items(root, *items, list + " item ", pending); !ok) {
        return ok.error();
      }
    }
    return true;
  }

  std::vector<ManifestObject> take() { return std::move(objects_); }

 private:
  // Queues the items of `array` (all objects, else an error naming the first that is not).
  Result<bool> push_items(const Root& root, const json::Value& array, const std::string& what,
                          std::vector<const json::Value*>& pending) const {
    for (rapidjson::SizeType i = 0; i < array.Size(); ++i) {
      if (!array[i].IsObject()) {
        return fail(root,
                    what + std::to_string(i) + " is " + std::string(json::type_name(array[i])) + ", not an object");
      }
    }
    for (rapidjson::SizeType i = array.Size(); i > 0; --i) {
      pending.push_back(&array[i - 1]);
    }
    return true;
  }

  Error fail(const Root& root, const std::string& message) const {
    return Error{located(path_, root.line, root.column, message)};
  }

  std::string path_;
  std::size_t max_objects_;
  std::vector<ManifestObject> objects_;
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

Result<std::string> read_stream(std::istream& in, std::string_view label, std::size_t limit) {
  std::string text;
  std::string chunk(std::size_t{1} << 16U, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (text.size() + got > limit) {
      return Error{std::string(label) + ": larger than " + std::to_string(limit >> 20U) + " MiB"};
    }
    text.append(chunk.data(), got);
  }
  if (in.bad()) {
    return Error{std::string(label) + ": read error"};
  }
  return text;
}

Result<std::vector<ManifestObject>> load_file(const fs::path& file, const LoadLimits& limits) {
  const std::string label = file.string();
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    const int error = errno;
    return Error{label + ": cannot open" + (error != 0 ? std::string(": ") + std::strerror(error) : std::string())};
  }
  Result<std::string> text = read_stream(in, label, limits.max_input_bytes);
  if (!text) {
    return text.error();
  }
  return parse_manifests(*text, label, limits);
}

}  // namespace

Result<std::vector<ManifestObject>> parse_manifests(std::string_view text, std::string_view path,
                                                    const LoadLimits& limits) {
  if (text.starts_with("\xEF\xBB\xBF")) {
    text.remove_prefix(3);
  }
  Collector collector(path, limits.max_objects);
  const auto first = std::find_if_not(text.begin(), text.end(), is_space);
  if (first != text.end() && (*first == '{' || *first == '[')) {
    Result<json::Document, json::DecodeError> parsed = json::parse_json(text, json::DecodeLimits{limits.max_depth});
    if (!parsed) {
      const json::DecodeError& error = parsed.error();
      return Error{located(path, error.line, error.column, without_position_suffix(error))};
    }
    auto document = std::make_shared<json::Document>(std::move(parsed.value()));
    Result<bool> added = collector.add(Root{std::move(document), 0, 0, "the JSON text"});
    if (!added) {
      return added.error();
    }
    return collector.take();
  }
  Result<std::vector<YamlDocument>, YamlError> documents =
      yaml_to_json(text, YamlLimits{limits.max_depth, limits.max_document_bytes, limits.max_stream_bytes});
  if (!documents) {
    const YamlError& error = documents.error();
    return Error{located(path, error.line, error.column, error.message)};
  }
  std::size_t index = 0;
  for (YamlDocument& document : *documents) {
    ++index;
    if (document.document->IsNull()) {
      continue;  // `---` with nothing, or `~`: kubectl skips these too
    }
    Result<bool> added = collector.add(
        Root{std::move(document.document), document.line, document.column, "document " + std::to_string(index)});
    if (!added) {
      return added.error();
    }
  }
  return collector.take();
}

Result<std::vector<fs::path>> manifest_files(const fs::path& directory) {
  std::vector<fs::path> files;
  std::error_code error;
  fs::recursive_directory_iterator it(directory, error);
  const fs::recursive_directory_iterator end;
  for (; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    // A ConfigMap or Secret volume holds each version in a "..<timestamp>" directory behind a
    // "..data" symlink, with the visible files linking through it (Kubernetes AtomicWriter):
    // read the visible files only, or every object would be read twice mid-update.
    if (path.filename().string().starts_with("..")) {
      if (it->is_directory(error)) {
        it.disable_recursion_pending();
      }
      error.clear();
      continue;
    }
    const fs::path extension = path.extension();
    if (extension != ".yaml" && extension != ".yml" && extension != ".json") {
      continue;
    }
    std::error_code status_error;
    if (fs::is_regular_file(it->status(status_error)) && !status_error) {
      files.push_back(path);
    }
  }
  if (error) {
    return Error{directory.string() + ": " + error.message()};
  }
  // path's operator< compares element by element: "a/z.yaml" sorts before "a.yaml", as
  // filepath.Walk visits directory "a" before file "a.yaml".
  std::sort(files.begin(), files.end());
  return files;
}

Result<LoadedManifests> load_manifests_keep_going(const std::vector<std::string>& inputs, std::istream& standard_input,
                                                  const LoadLimits& limits) {
  LoadedManifests loaded;
  auto append = [&loaded](Result<std::vector<ManifestObject>>&& objects) {
    if (!objects) {
      loaded.unusable.push_back(objects.error());
      return;
    }
    if (loaded.objects.empty()) {  // the usual single input: no second vector of up to max_objects
      loaded.objects = std::move(objects.value());
      return;
    }
    loaded.objects.reserve(loaded.objects.size() + objects->size());
    for (ManifestObject& object : objects.value()) {
      loaded.objects.push_back(std::move(object));
    }
  };
  for (const std::string& input : inputs) {
    if (input == "-") {
      Result<std::string> text = read_stream(standard_input, "-", limits.max_input_bytes);
      append(text ? parse_manifests(*text, "-", limits) : Result<std::vector<ManifestObject>>(text.error()));
      continue;
    }
    // kubectl's builder refuses a path that does not exist before it reads anything
    // (resource.Builder.FilenameParam: "the path ... does not exist"), and so does this.
    const fs::path path(input);
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (!fs::exists(status)) {
      return Error{input + ": no such file or directory"};
    }
    if (error) {
      return Error{input + ": " + error.message()};
    }
    if (fs::is_directory(status)) {
      Result<std::vector<fs::path>> files = manifest_files(path);
      if (!files) {
        return files.error();
      }
      for (const fs::path& file : *files) {
        append(load_file(file, limits));
      }
      continue;
    }
    append(load_file(path, limits));
  }
  return loaded;
}

Result<std::vector<ManifestObject>> load_manifests(const std::vector<std::string>& inputs, std::istream& standard_input,
                                                   const LoadLimits& limits) {
  Result<LoadedManifests> loaded = load_manifests_keep_going(inputs, standard_input, limits);
  if (!loaded) {
    return loaded.error();
  }
  if (!loaded->unusable.empty()) {
    return loaded->unusable.front();
  }
  return std::move(loaded->objects);
}

}  // namespace vmgate::kube
