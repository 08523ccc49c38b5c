#pragma once
// The admission pipeline: the four webhook stages and the full chain that `vmgate check`
// runs (VM: mutate, validate, expand; VMI: mutate, validate). Pure: no I/O, no clocks.
// Thread-safety: every function is re-entrant; a Pipeline is immutable after construction
// and may be shared between threads.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "vmgate/admission/cluster.hpp"
#include "vmgate/admission/field_error.hpp"
#include "vmgate/admission/release.hpp"
#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"

namespace vmgate::admission {

namespace defaults {
class NameBasedUuids;
}

enum class Operation { create, update };
enum class Resource { virtual_machine, virtual_machine_instance };
/// The form a mutation's JSON Patch takes (MutationOutcome): a Document, or its JSON text for a
/// caller that only sends it on.
enum class PatchForm { document, text };

std::string_view to_string(Operation operation);  // "CREATE", "UPDATE"

struct Request {
  Resource resource = Resource::virtual_machine;
  Operation operation = Operation::create;
  /// The request's namespace; used when the object's metadata carries none.
  std::string namespace_name = "default";
  const json::Value* object = nullptr;      // required
  const json::Value* old_object = nullptr;  // UPDATE only
  /// The requesting user is a KubeVirt service account (status updates are theirs).
  bool from_kubevirt_service_account = false;
  /// The time of the request as metav1.Time writes it (RFC 3339, UTC, seconds), given by the
  /// transport: the library has no clock. A VMI CREATE records it as the Pending phase's
  /// transition time; empty leaves status.phaseTransitionTimestamps alone.
  std::string now;
  /// Where the outcome's documents allocate: the caller's per-request arena, which must outlive
  /// them. When set, a mutated VM also shares the members no rule writes with `object` (not
  /// copied), so `object` must outlive the outcome as well. Null: each document its own
  /// allocator, and nothing shared.
  json::Allocator* allocator = nullptr;
  /// The caller's memo of name-based UUIDs across requests (see defaults/vm.hpp), or null.
  defaults::NameBasedUuids* uuids = nullptr;
  /// Which of MutationOutcome's patch members mutate fills.
  PatchForm patch_form = PatchForm::document;
};

/// Result of a mutating stage. When the verdict denies, `mutated` is Null and the patch is [].
struct MutationOutcome {
  Verdict verdict;
  json::Document mutated;
  /// PatchForm::document: the minimal RFC 6902 patch object -> mutated (json::diff). Under
  /// PatchForm::text an empty array.
  json::Document patch;
  /// PatchForm::text: that patch as JSON text (json::append_diff), "[]" when it has no
  /// operation. Under PatchForm::document empty.
  std::string patch_text;
};

/// Result of the whole chain for one object (what `vmgate check` prints).
struct Outcome {
  Verdict verdict;
  json::Document admitted;  // after the mutating stage; Null when the mutating stage denied
  json::Document patch;     // object -> admitted ([] when nothing changed or denied)
  json::Document expanded;  // VM: the VMI that would be launched; Null for a VMI or a denial
  /// VM admitted but not expandable (a missing instancetype, say): why `expanded` is Null. The
  /// verdict's warnings say the same for the webhook; callers that need the VMI (the launcher)
  /// take the reason from here instead of expanding again.
  std::optional<Error> expansion_error;
};

class Pipeline {
 public:
  /// Judges as the release each cluster view's configuration names (ClusterConfig::release).
  Pipeline();
  /// Judges as `release` whatever the cluster reports (--kubevirt-version); nullopt as Pipeline().
  explicit Pipeline(std::optional<Release> release);
  ~Pipeline();
  Pipeline(Pipeline&&) noexcept;
  Pipeline& operator=(Pipeline&&) noexcept;

  /// /virtualmachines-mutate and /virtualmachineinstances-mutate.
  [[nodiscard]] MutationOutcome mutate(const Request& request, const ClusterView& cluster) const;
  /// /virtualmachines-validate and /virtualmachineinstances-validate, on the object as stored
  /// (after mutation). Warnings are part of the verdict.
  [[nodiscard]] Verdict validate(const Request& request, const ClusterView& cluster) const;
  /// The VirtualMachineInstance that the VM controller would create from an admitted VM:
  /// instancetype, then preference, then VMI defaults, with the kubevirt.io/*-name annotations.
  /// `now` as in Request.
  [[nodiscard]] Result<json::Document> expand(const json::Value& vm, std::string_view namespace_name,
                                              std::string_view now, const ClusterView& cluster) const;
  /// Problems in a cluster object the rules read (instancetype, preference): wrong types and
  /// unparseable quantities, with paths relative to the object ("spec.memory.guest"). Loaders
  /// (check --objects, serve --objects) refuse such objects instead of letting a rule read them.
  /// Other kinds: no problems.
  [[nodiscard]] ErrorList check_cluster_object(const json::Value& object) const;
  /// mutate → validate (→ expand), as kube-apiserver chains the webhooks.
  [[nodiscard]] Outcome admit(const Request& request, const ClusterView& cluster) const;

 private:
  struct Impl;  // the parsed structural schemas (valijson), built once
  std::unique_ptr<Impl> impl_;
};

}  // namespace vmgate::admission
