// Rendering of `vmgate check` results: the JSON document and its YAML form (docs/webhook.md,
// "vmgate check output"), and the kubectl-like text.
#include "vmgate/server/check_command.hpp"

// After json.hpp (through check_command.hpp): RapidJSON must see vmgate's RAPIDJSON_ASSERT.
#include <rapidjson/prettywriter.h>

#include "vmgate/common/json_writer.hpp"

#include "vmgate/kube/yaml_json.hpp"

namespace vmgate::cli {

namespace {

json::Value string_value(std::string_view text, json::Allocator& allocator) {
  return json::make_string(text, allocator);
}

json::Value copy_or_null(const json::Value& value, json::Allocator& allocator) {
  return value.IsNull() ? json::Value() : json::copy(value, allocator);
}

json::Value result_object(const CheckResult& result, json::Allocator& a) {
  const admission::Verdict& verdict = result.outcome.verdict;
  json::Value object(rapidjson::kObjectType);
  object.AddMember("source", string_value(result.source, a), a);
  object.AddMember("kind", string_value(result.kind, a), a);
  object.AddMember("namespace", string_value(result.namespace_name, a), a);
  object.AddMember("name", string_value(result.name, a), a);
  object.AddMember("allowed", json::Value(verdict.allowed), a);
  object.AddMember("code", json::Value(verdict.code), a);
  object.AddMember("reason", string_value(verdict.reason, a), a);
  object.AddMember("message", string_value(verdict.message, a), a);
  json::Value causes(rapidjson::kArrayType);
  for (const admission::FieldError& cause : verdict.causes) {
    json::Value c(rapidjson::kObjectType);
    c.AddMember("type", string_value(admission::to_string(cause.type), a), a);
    c.AddMember("field", string_value(cause.field, a), a);
    c.AddMember("message", string_value(cause.message, a), a);
    causes.PushBack(c, a);
  }
  object.AddMember("causes", causes, a);
  json::Value warnings(rapidjson::kArrayType);
  for (const std::string& warning : verdict.warnings) {
    warnings.PushBack(string_value(warning, a), a);
  }
  object.AddMember("warnings", warnings, a);
  const json::Value& patch = result.outcome.patch;
  object.AddMember("patch", patch.IsArray() ? json::copy(patch, a) : json::Value(rapidjson::kArrayType), a);
  object.AddMember("admitted", copy_or_null(result.outcome.admitted, a), a);
  object.AddMember("expanded", copy_or_null(result.outcome.expanded, a), a);
  return object;
}

std::string_view resource_label(admission::Resource resource) {
  return resource == admission::Resource::virtual_machine ? "virtualmachine.kubevirt.io"
                                                          : "virtualmachineinstance.kubevirt.io";
}

class Painter {
 public:
  explicit Painter(bool color) : color_(color) {}
  [[nodiscard]] std::string green(std::string_view text) const { return paint("\033[32m", text); }
  [[nodiscard]] std::string red(std::string_view text) const { return paint("\033[31m", text); }
  [[nodiscard]] std::string yellow(std::string_view text) const { return paint("\033[33m", text); }

 private:
  [[nodiscard]] std::string paint(std::string_view code, std::string_view text) const {
    if (!color_) {
      return std::string(text);
    }
    return std::string(code) + std::string(text) + "\033[0m";
  }
  bool color_;
};

// Verdict::message ends with ", and N more validation errors" when causes were cut at 10.
std::string_view more_errors_tail(std::string_view message) {
  constexpr std::string_view marker = ", and ";
  if (!message.ends_with("more validation errors")) {
    return {};
  }
  const std::size_t at = message.rfind(marker);
  return at == std::string_view::npos ? std::string_view{} : message.substr(at + marker.size());
}

}  // namespace

json::Document report_document(const std::vector<CheckResult>& results) {
  json::Document document;
  document.SetObject();
  json::Allocator& a = document.GetAllocator();
  json::Value items(rapidjson::kArrayType);
  for (const CheckResult& result : results) {
    items.PushBack(result_object(result, a), a);
  }
  document.AddMember("results", items, a);
  return document;
}

std::string render_json(const json::Value& report) {
  std::string text;
  json::StringSink sink(text);
  rapidjson::PrettyWriter<json::StringSink> writer(sink);
  writer.SetIndent(' ', 2);
  report.Accept(writer);
  sink.finish();
  text += '\n';
  return text;
}

Result<std::string> render_yaml(const json::Value& report) {
  return kube::json_to_yaml(report);
}

std::string render_text(const std::vector<CheckResult>& results, bool color) {
  const Painter paint(color);
  std::string out;
  for (const CheckResult& result : results) {
    const admission::Verdict& verdict = result.outcome.verdict;
    out += std::string(resource_label(result.resource)) + '/' + result.name + " [" + result.namespace_name + ", " +
           result.source + "] ";
    if (verdict.allowed) {
      const json::Value& patch = result.outcome.patch;
      const std::size_t changes = patch.IsArray() ? patch.Size() : 0;
      out += paint.green("admitted");
      out +=
          changes == 0 ? " (no changes)" : " (" + std::to_string(changes) + (changes == 1 ? " change)" : " changes)");
    } else if (verdict.causes.empty()) {
      out += paint.red("denied") + ": " + verdict.message;
    } else {
      out += paint.red("denied") + ':';
    }
    out += '\n';
    for (const admission::FieldError& cause : verdict.causes) {
      out += "  - " + (cause.field.empty() ? cause.message : cause.field + ": " + cause.message) + '\n';
    }
    if (!verdict.causes.empty()) {
      if (const std::string_view tail = more_errors_tail(verdict.message); !tail.empty()) {
        out += "  - " + std::string(tail) + '\n';
      }
    }
    for (const std::string& warning : verdict.warnings) {
      out += "  " + paint.yellow("warning") + ": " + warning + '\n';
    }
  }
  return out;
}

}  // namespace vmgate::cli
