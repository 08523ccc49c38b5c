#pragma once
// Field errors: what a rule returns, rendered later in apimachinery's and KubeVirt's words.
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace vmgate::admission {

/// metav1.CauseType values that KubeVirt's admitters use.
enum class CauseType {
  field_value_invalid,         // "FieldValueInvalid"
  field_value_not_found,       // "FieldValueNotFound"
  field_value_not_supported,   // "FieldValueNotSupported"
  field_value_required,        // "FieldValueRequired"
  field_value_duplicate,       // "FieldValueDuplicate"
  field_value_forbidden,       // "FieldValueForbidden"
  unexpected_server_response,  // "UnexpectedServerResponse"
  none,                        // "" (omitted on the wire): KubeVirt's OpenAPI schema causes have no type
};

std::string_view to_string(CauseType type);

/// One cause of a denial. `field` is a Kubernetes field path such as
/// "spec.template.spec.domain.cpu.sockets" (may be empty: some KubeVirt causes have none).
struct FieldError {
  CauseType type = CauseType::field_value_invalid;
  std::string field;
  std::string message;

  friend bool operator==(const FieldError&, const FieldError&) = default;
};

using ErrorList = std::vector<FieldError>;

/// Moves `from`'s causes to the end of `to` (rule lists chain their rules this way).
inline void append(ErrorList& to, ErrorList&& from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

/// Builds field paths the way Kubernetes prints them: "a.b", "a.b[3]", "a.b[key]".
class FieldPath {
 public:
  FieldPath() = default;
  explicit FieldPath(std::string path) : path_(std::move(path)) {}

  [[nodiscard]] FieldPath child(std::string_view name) const;
  [[nodiscard]] FieldPath index(std::size_t i) const;
  [[nodiscard]] FieldPath key(std::string_view k) const;

  [[nodiscard]] const std::string& str() const { return path_; }

 private:
  std::string path_;
};

/// An admission verdict in Kubernetes' terms (metav1.Status plus warnings).
struct Verdict {
  bool allowed = true;
  int code = 200;
  std::string reason;   // "Invalid" for 422, empty for 400
  std::string message;  // causes joined by ", " (at most 10, then ", and N more validation errors")
  ErrorList causes;     // at most 10
  std::vector<std::string> warnings;

  /// KubeVirt's ToAdmissionResponse: 422 Invalid with the causes (pkg/util/webhooks/webhooks.go).
  static Verdict invalid(ErrorList causes);
  /// KubeVirt's ToAdmissionResponseError: 400, message only, no reason, no causes.
  static Verdict bad_request(std::string message);
  static Verdict allow() { return Verdict{}; }
};

}  // namespace vmgate::admission
