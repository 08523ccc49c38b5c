// The four webhook stages and the chain `vmgate check` runs. Each stage lists its rules in
// KubeVirt's order; the rules themselves live one per file under instancetype/, preference/,
// infer/, cpu/, hugepages/, defaults/ and validation/.
#include "vmgate/admission/pipeline.hpp"

#include "vmgate/admission/semantic_equal.hpp"

#include "vmgate/admission/defaults/vm.hpp"
#include "vmgate/admission/defaults/vmi.hpp"
#include "vmgate/admission/expand/expand.hpp"
#include "vmgate/admission/expand/generation.hpp"
#include "vmgate/admission/infer/infer.hpp"
#include "vmgate/admission/instancetype/apply.hpp"
#include "vmgate/admission/instancetype/find.hpp"
#include "vmgate/admission/instancetype/matchers.hpp"
#include "vmgate/common/json_patch.hpp"
#include "vmgate/admission/preference/persist.hpp"
#include "vmgate/admission/preference/requirements.hpp"
#include "vmgate/admission/quantity_json.hpp"
#include "vmgate/admission/spec.hpp"
#include "vmgate/admission/validation/rules.hpp"
#include "vmgate/admission/schema/structure.hpp"

#include <algorithm>
#include <array>
#include <span>
#include <string_view>

namespace vmgate::admission {

std::string_view to_string(Operation operation) {
  return operation == Operation::create ? "CREATE" : "UPDATE";
}

struct Pipeline::Impl {
  StructureValidator structure;
  std::optional<Release> release;  // --kubevirt-version
};

Pipeline::Pipeline() : impl_(std::make_unique<Impl>()) {}
Pipeline::Pipeline(std::optional<Release> release) : impl_(std::make_unique<Impl>()) {
  impl_->release = release;
}
Pipeline::~Pipeline() = default;
Pipeline::Pipeline(Pipeline&&) noexcept = default;
Pipeline& Pipeline::operator=(Pipeline&&) noexcept = default;

namespace {

std::string effective_namespace(const json::Value& object, const std::string& fallback) {
  const json::Value* metadata = json::find_object(object, "metadata");
  const std::string_view own = metadata != nullptr ? json::find_string(*metadata, "namespace") : "";
  return own.empty() ? fallback : std::string(own);
}

bool being_deleted(const json::Value& object) {
  const json::Value* metadata = json::find_object(object, "metadata");
  return metadata != nullptr && json::has(*metadata, "deletionTimestamp");
}

MutationOutcome denied(const Request& request, Verdict verdict) {
  MutationOutcome outcome;
  outcome.verdict = std::move(verdict);
  outcome.mutated.SetNull();
  outcome.patch.SetArray();
  if (request.patch_form == PatchForm::text) {
    outcome.patch_text = "[]";
  }
  return outcome;
}

MutationOutcome mutated(const Request& request, json::Document document) {
  MutationOutcome outcome;
  if (request.patch_form == PatchForm::text) {
    outcome.patch.SetArray();
    // Room for a usual patch at once: grown from empty, a few hundred bytes took five
    // reallocations and copies.
    outcome.patch_text.reserve(1024);
    json::append_diff(outcome.patch_text, *request.object, document);
  } else {
    outcome.patch = json::diff(*request.object, document, request.allocator);
  }
  outcome.mutated = std::move(document);
  return outcome;
}

json::Document copy_of(const json::Value& value, json::Allocator* allocator) {
  json::Document document(allocator);
  json::Value copied = json::copy(value, document.GetAllocator());
  static_cast<json::Value&>(document).Swap(copied);
  return document;
}

// Where the VM mutation rules write, from the object down: a member listed with nothing below
// is copied whole; one listed with members below is copied level by level as they say; a member
// not listed is shared with the request's object (json::share). The rules only read metadata
// (firmware UUIDs, inference labels); inference replaces or erases spec.instancetype and
// spec.preference; the defaults write spec.template.metadata and spec.template.spec.{domain,
// architecture}. The preference's storage class is the one write into spec.dataVolumeTemplates,
// and preference::persist_into_vm copies them before it writes. Expansion, the one step that
// changes status, works on a whole copy of its own.
struct WrittenMember {
  std::string_view name;
  std::span<const WrittenMember> below;
};
constexpr std::array<WrittenMember, 2> template_spec_written = {{{"domain", {}}, {"architecture", {}}}};
constexpr std::array<WrittenMember, 2> template_written = {{{"metadata", {}}, {"spec", template_spec_written}}};
constexpr std::array<WrittenMember, 3> spec_written = {
    {{"instancetype", {}}, {"preference", {}}, {"template", template_written}}};
constexpr std::array<WrittenMember, 1> vm_written = {{{"spec", spec_written}}};
// Validation applies the instancetype and the preference, then the defaults, to a copy of the
// VM's template: there, and nowhere else, it writes.
constexpr std::array<WrittenMember, 1> validation_spec_written = {{{"template", {}}}};
constexpr std::array<WrittenMember, 1> vm_written_by_validation = {{{"spec", validation_spec_written}}};

json::Value copy_written(const json::Value& object, std::span<const WrittenMember> written,
                         json::Allocator& allocator) {
  if (!object.IsObject()) {
    return json::copy(object, allocator);
  }
  json::Value out(rapidjson::kObjectType);
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    const std::string_view name = json::as_view(it->name);
    const auto member = std::find_if(written.begin(), written.end(),
                                     [name](const WrittenMember& candidate) { return candidate.name == name; });
    json::Value value;
    if (member == written.end()) {
      value = json::share(it->value);
    } else if (member->below.empty()) {
      value = json::copy(it->value, allocator);
    } else {
      value = copy_written(it->value, member->below, allocator);
    }
    out.AddMember(json::Value(it->name, allocator), value, allocator);
  }
  return out;
}

// The VM for the rules to write into. Under a per-request arena (Request::allocator) only the
// objects they write into are copied (`written`: vm_written, vm_written_by_validation), the rest
// is shared with the request's object: most of a usual VM (metadata with its managedFields,
// volumes, networks, dataVolumeTemplates), neither copied nor, after a mutation, walked by the
// diff (same bits). Debug builds check after every mutation and validation that the request's
// object is unchanged (leaving_request_unchanged).
json::Document vm_to_write(const json::Value& object, std::span<const WrittenMember> written,
                           json::Allocator* allocator) {
  if (allocator == nullptr) {
    return copy_of(object, allocator);
  }
  json::Document vm(allocator);
  json::Value copied = copy_written(object, written, *allocator);
  static_cast<json::Value&>(vm).Swap(copied);
  return vm;
}

// The copy the rules write into may share parts with the request's object (vm_to_write): a rule
// that wrote through them would change the request and go missing from the answer. Debug builds
// (the sanitizer suites) copy the request before `stage` and fail it if it changed.
template <class Stage>
auto leaving_request_unchanged(const Request& request, std::string_view stage_name, const Stage& stage) {
#ifndef NDEBUG
  const json::Document untouched = copy_of(*request.object, nullptr);
  auto result = stage();
  if (!json::equal(*request.object, untouched)) {
    throw json::MisuseError("a " + std::string(stage_name) + " wrote into the request's object");
  }
  return result;
#else
  (void)request;
  (void)stage_name;
  return stage();
#endif
}

// Lookup failures do not block admission in KubeVirt (the controller retries); vmgate says so.
// An object the cluster holds but vmgate cannot read (instancetype::unreadable_object) is one KubeVirt
// would apply: the VM is admitted unchecked against it, as KubeVirt would admit it.
std::optional<std::string> lookup_warning(std::string_view matcher, const Error& error) {
  if (error.message.find(instancetype::unreadable_object) != std::string::npos) {
    return "spec." + std::string(matcher) + ": " + error.message +
           "; the VirtualMachine is admitted without being checked against it";
  }
  return "spec." + std::string(matcher) + ": " + error.message +
         "; the VirtualMachine is admitted without it and cannot start until it exists";
}

// revision.HasControllerRevisionRef: status.<ref>.controllerRevisionRef.name is set.
bool has_controller_revision_ref(const json::Value& vm, std::string_view ref) {
  const json::Value* revision = json::find_path(vm, {"status", ref, "controllerRevisionRef"});
  return revision != nullptr && revision->IsObject() && !json::find_string(*revision, "name").empty();
}

// KubeVirt's ValidationErrorsToAdmissionResponse (pkg/util/webhooks/webhooks.go) turns each
// OpenAPI schema error into a cause with its message only: no type, no field (the message names
// the path).
Verdict schema_denial(ErrorList errors) {
  for (FieldError& error : errors) {
    error.type = CauseType::none;
    error.field.clear();
  }
  return Verdict::invalid(std::move(errors));
}

MutationOutcome mutate_vm(const Request& request, const ClusterView& cluster, const StructureValidator& structure) {
  const json::Value& object = *request.object;
  if (ErrorList errors = structure.validate(StructureKind::virtual_machine, object, cluster.config().release);
      !errors.empty()) {
    return denied(request, schema_denial(std::move(errors)));
  }
  if (being_deleted(object)) {
    return mutated(request, copy_of(object, request.allocator));
  }
  const std::string namespace_name = effective_namespace(object, request.namespace_name);
  json::Document vm = vm_to_write(object, vm_written, request.allocator);
  json::Allocator& allocator = vm.GetAllocator();

  // pkg/instancetype/webhooks/vm/mutator.go
  if (request.operation == Operation::update && request.old_object != nullptr) {
    if (ErrorList causes = instancetype::validate_matcher_update(vm, *request.old_object); !causes.empty()) {
      return denied(request, Verdict::invalid(std::move(causes)));
    }
  }
  if (ErrorList causes = instancetype::validate_matchers(vm); !causes.empty()) {
    return denied(request, Verdict::invalid(std::move(causes)));
  }
  if (std::optional<std::string> error = infer::infer_matchers(vm, namespace_name, cluster, allocator)) {
    return denied(request, Verdict::bad_request(std::move(*error)));
  }
  Result<instancetype::FoundSpec> preference =
      instancetype::find_spec(instancetype::MatcherType::preference, vm, namespace_name, cluster);
  preference::persist_into_vm(preference ? preference->spec : nullptr, vm, allocator);

  // vm-mutator.go
  if (request.operation == Operation::create) {
    defaults::set_vm_firmware_ids(vm, namespace_name, allocator, request.uuids);
  }
  defaults::set_vm_architecture(vm, namespace_name, cluster, allocator);
  defaults::set_vm_machine_type(vm, cluster.config(), allocator);
  if (request.operation == Operation::create) {
    if (json::Value* template_value = json::find_path(vm, {"spec", "template"});
        template_value != nullptr && template_value->IsObject()) {
      const json::Value* template_spec = json::find_object(*template_value, "spec");
      if (template_spec != nullptr && defaults::annotates_pci_topology(*template_spec, cluster.config().release)) {
        defaults::set_pci_topology_version(json::ensure_object(*template_value, "metadata", allocator), allocator);
      }
    }
  }
  const std::string& policy = cluster.config().instancetype_reference_policy;
  // The VM controller's handleExpand: under `expand` (not `expandAll`) a VM whose status already
  // points at a ControllerRevision keeps its matchers.
  const bool has_revision =
      has_controller_revision_ref(vm, "instancetypeRef") || has_controller_revision_ref(vm, "preferenceRef");
  if (policy == "expandAll" || (policy == "expand" && !has_revision)) {
    expand::expand_vm_in_place(vm, namespace_name, cluster);
  }
  return mutated(request, std::move(vm));
}

// A struct member of a KubeVirt object (spec, status) as Go decodes it: absent or null is the
// empty struct.
const json::Value& struct_member(const json::Value& object, std::string_view key) {
  static const json::Value empty(rapidjson::kObjectType);
  const json::Value* member = json::find(object, key);
  return member != nullptr && member->IsObject() ? *member : empty;
}

MutationOutcome mutate_vmi(const Request& request, const ClusterView& cluster, const StructureValidator& structure) {
  const json::Value& object = *request.object;
  if (ErrorList errors = structure.validate(StructureKind::virtual_machine_instance, object, cluster.config().release);
      !errors.empty()) {
    return denied(request, schema_denial(std::move(errors)));
  }
  json::Document vmi = copy_of(object, request.allocator);
  if (request.operation == Operation::create) {
    const std::string namespace_name = effective_namespace(object, request.namespace_name);
    if (auto error = defaults::apply_vmi_create_defaults(vmi, namespace_name, cluster.config(), request.now,
                                                         vmi.GetAllocator())) {
      return denied(request, Verdict::bad_request(std::move(*error)));
    }
  } else if (request.old_object != nullptr && !request.from_kubevirt_service_account) {
    // Status belongs to KubeVirt: a user's change to it is reverted (vmi-mutator.go UPDATE);
    // vmgate-node reports it as kubevirt-handler, as virt-handler does.
    const json::Value* old_status = json::find(*request.old_object, "status");
    if (!semantically_equal(struct_member(object, "status"), struct_member(*request.old_object, "status"))) {
      if (old_status != nullptr) {
        json::set(vmi, "status", json::copy(*old_status, vmi.GetAllocator()), vmi.GetAllocator());
      } else {
        json::erase(vmi, "status");
      }
    }
  }
  return mutated(request, std::move(vmi));
}

// KubeVirt logs an invalid CR configuration and goes on with the defaults; vmgate says so in
// every answer, so that the user sees why the CR's settings have no effect.
void warn_of_ignored_configuration(const ClusterConfig& config, std::vector<std::string>& warnings) {
  if (!config.ignored_configuration.empty()) {
    warnings.push_back("the KubeVirt CR's configuration is ignored, as KubeVirt ignores it: " +
                       config.ignored_configuration);
  }
}

// Which release judged, when nobody said: a cluster's KubeVirt CR named it, or named one vmgate
// does not model. Without a CR that names one (vmgate alone, no virt-operator; `check` without a
// KubeVirt CR) the newest release judges silently, as vmgate always has: a warning on every answer
// would say nothing the user can act on that the documentation does not.
void warn_of_release(const ClusterConfig& config, std::vector<std::string>& warnings) {
  const std::string judged = "judged as KubeVirt " + std::string(to_string(config.release));
  if (config.release_source == ReleaseSource::cluster) {
    warnings.push_back(judged + ", the release the KubeVirt CR reports (status.observedKubeVirtVersion " +
                       config.observed_kubevirt_version + "); --kubevirt-version pins one");
  } else if (config.release_source == ReleaseSource::unsupported_cluster) {
    warnings.push_back(judged + ": the KubeVirt CR reports " + config.observed_kubevirt_version +
                       " (status.observedKubeVirtVersion), a release vmgate does not model (supported: " +
                       supported_release_list() + "); --kubevirt-version pins one");
  }
}

// The cluster as the rules see it when --kubevirt-version pinned a release: its objects, and its
// configuration with that release. The configuration is copied per request; it is small.
class PinnedReleaseView final : public ClusterView {
 public:
  PinnedReleaseView(const ClusterView& base, Release release) : base_(base), config_(base.config()) {
    config_.release = release;
    config_.release_source = ReleaseSource::given;
  }
  [[nodiscard]] const json::Value* find(ObjectKind kind, std::string_view namespace_name,
                                        std::string_view name) const override {
    return base_.find(kind, namespace_name, name);
  }
  [[nodiscard]] const ClusterConfig& config() const override { return config_; }
  [[nodiscard]] std::string_view unreadable(ObjectKind kind, std::string_view namespace_name,
                                            std::string_view name) const override {
    return base_.unreadable(kind, namespace_name, name);
  }

 private:
  const ClusterView& base_;
  ClusterConfig config_;
};

// `cluster`, or a view of it pinned to `release` (kept in `pinned`) when one was given and the
// view does not judge as it already.
const ClusterView& judged_view(const ClusterView& cluster, std::optional<Release> release,
                               std::optional<PinnedReleaseView>& pinned) {
  if (!release || (cluster.config().release_source == ReleaseSource::given && cluster.config().release == *release)) {
    return cluster;
  }
  return pinned.emplace(cluster, *release);
}

// A VM's lookup warnings travel with every verdict, denials included.
Verdict with_warnings(Verdict verdict, std::vector<std::string> warnings) {
  verdict.warnings = std::move(warnings);
  return verdict;
}

// `structure` is null when the caller already validated the structure of the object's source
// (admit: the mutating stage checked the submitted object and only adds well-typed fields).
Verdict validate_vm(const Request& request, const ClusterView& cluster, const StructureValidator* structure) {
  const json::Value& object = *request.object;
  if (ErrorList errors = structure != nullptr
                             ? structure->validate(StructureKind::virtual_machine, object, cluster.config().release)
                             : ErrorList{};
      !errors.empty()) {
    return schema_denial(std::move(errors));
  }
  if (being_deleted(object)) {
    return Verdict::allow();
  }
  const std::string namespace_name = effective_namespace(object, request.namespace_name);
  std::vector<std::string> warnings;
  json::Document vm = vm_to_write(object, vm_written_by_validation, request.allocator);
  json::Allocator& allocator = vm.GetAllocator();

  // pkg/instancetype/webhooks/vm/admitter.go ApplyToVM: lookup failures are ignored.
  Result<instancetype::FoundSpec> instancetype_found =
      instancetype::find_spec(instancetype::MatcherType::instancetype, vm, namespace_name, cluster);
  Result<instancetype::FoundSpec> preference_found =
      instancetype::find_spec(instancetype::MatcherType::preference, vm, namespace_name, cluster);
  const json::Value* instancetype_spec = instancetype_found ? instancetype_found->spec : nullptr;
  const json::Value* preference_spec = preference_found ? preference_found->spec : nullptr;
  if (!instancetype_found) {
    warnings.push_back(*lookup_warning("instancetype", instancetype_found.error()));
  }
  if (!preference_found) {
    warnings.push_back(*lookup_warning("preference", preference_found.error()));
  }
  json::Value* template_value = json::find_path(vm, {"spec", "template"});
  const bool has_template = template_value != nullptr && template_value->IsObject();
  if (has_template && (instancetype_spec != nullptr || preference_spec != nullptr)) {
    if (ErrorList causes = instancetype::check_spread(instancetype_spec, preference_spec); !causes.empty()) {
      return with_warnings(Verdict::invalid(std::move(causes)), std::move(warnings));
    }
    json::ensure_object(*template_value, "spec", allocator);
    json::ensure_object(*template_value, "metadata", allocator);
    std::vector<std::string> conflicts = instancetype::apply_with_preference(
        instancetype_spec, preference_spec, *json::find(*template_value, "spec"),
        *json::find(*template_value, "metadata"), "spec.template.spec", allocator, cluster.config().release);
    if (!conflicts.empty()) {
      return with_warnings(Verdict::invalid(instancetype::conflict_causes(conflicts)), std::move(warnings));
    }
  }
  if (has_template) {
    json::Value& template_spec = json::ensure_object(*template_value, "spec", allocator);
    if (auto error = defaults::set_spec_defaults(template_spec, cluster.config(), allocator)) {
      return with_warnings(Verdict::bad_request(std::move(*error)), std::move(warnings));
    }
    if (preference_spec != nullptr) {
      if (ErrorList causes = preference::check_requirements(instancetype_spec, *preference_spec, template_spec);
          !causes.empty()) {
        return with_warnings(Verdict::invalid(std::move(causes)), std::move(warnings));
      }
    }
  }
  const bool update = request.operation == Operation::update;
  if (!update && has_template) {
    // vms-admitter.go: on CREATE the discontinued feature gates (on the submitted template), then
    // the network admitter's ValidateCreation with the path "spec". The defaults above created the
    // copy's template spec.
    const json::Value* submitted_spec = json::find_path(object, {"spec", "template", "spec"});
    const json::Value empty(rapidjson::kObjectType);
    if (ErrorList causes = validation::validate_discontinued_feature_gates(
            submitted_spec != nullptr ? *submitted_spec : empty, cluster.config());
        !causes.empty()) {
      return with_warnings(Verdict::invalid(std::move(causes)), std::move(warnings));
    }
    if (ErrorList causes = validation::validate_discontinued_bindings(*json::find(*template_value, "spec"),
                                                                      FieldPath("spec"), cluster.config().release);
        !causes.empty()) {
      return with_warnings(Verdict::invalid(std::move(causes)), std::move(warnings));
    }
  }
  ErrorList causes = validation::validate_vm_spec(vm, cluster.config(), request.from_kubevirt_service_account);
  if (causes.empty()) {
    causes = validation::validate_vm_storage(object, request.old_object, update, namespace_name);
  }
  if (causes.empty()) {
    causes = validation::validate_vm_volume_requests(object, cluster.config());
  }
  if (!causes.empty()) {
    return with_warnings(Verdict::invalid(std::move(causes)), std::move(warnings));
  }
  if (const json::Value* spec_value = json::find_object(object, "spec");
      spec_value != nullptr && json::has(*spec_value, "running")) {
    warnings.emplace_back("spec.running is deprecated, please use spec.runStrategy instead.");
  }
  return with_warnings(Verdict::allow(), std::move(warnings));
}

Verdict validate_vmi(const Request& request, const ClusterView& cluster, const StructureValidator* structure) {
  const json::Value& object = *request.object;
  if (ErrorList errors = structure != nullptr ? structure->validate(StructureKind::virtual_machine_instance, object,
                                                                    cluster.config().release)
                                              : ErrorList{};
      !errors.empty()) {
    return schema_denial(std::move(errors));
  }
  if (request.operation == Operation::update) {
    // vmi-update-admitter.go: the spec of a running VMI belongs to KubeVirt.
    if (request.old_object != nullptr && !request.from_kubevirt_service_account) {
      if (!semantically_equal(struct_member(object, "spec"), struct_member(*request.old_object, "spec"))) {
        return Verdict::invalid({{CauseType::field_value_not_supported, "", "update of VMI object is restricted"}});
      }
      if (validation::reserved_vmi_labels_changed(object, *request.old_object)) {
        return Verdict::invalid({{CauseType::field_value_not_supported, "",
                                  "modification of the following reserved kubevirt.io/ labels on a VMI object is "
                                  "prohibited"}});
      }
    }
    return Verdict::allow();
  }
  const json::Value* spec_value = json::find_object(object, "spec");
  const json::Value empty(rapidjson::kObjectType);
  // vmi-create-admitter.go Admit: discontinued feature gates, then the spec validators virt-api
  // registers (the network admitter: discontinued bindings and its Validate; the storage
  // admitter's Validate), then ValidateVirtualMachineInstanceSpec — which runs the network and
  // disk rules again, so a real cluster reports their causes twice, and so does vmgate.
  const json::Value& spec = spec_value != nullptr ? *spec_value : empty;
  const FieldPath spec_path("spec");
  ErrorList causes = validation::validate_discontinued_feature_gates(spec, cluster.config());
  append(causes, validation::validate_discontinued_bindings(spec, spec_path, cluster.config().release));
  append(causes, validation::validate_network(spec, spec_path, cluster.config()));
  if (cluster.config().release > Release::v1_8) {
    // v1.8 registers no storage spec validator: it reports each disk cause once.
    append(causes, validation::validate_storage(spec, spec_path));
  }
  append(causes, validation::validate_vmi_spec(spec, spec_path, cluster.config()));
  append(causes, validation::validate_vmi_only(object, cluster.config(), request.from_kubevirt_service_account));
  if (!causes.empty()) {
    return Verdict::invalid(std::move(causes));
  }
  return Verdict::allow();
}

}  // namespace

MutationOutcome Pipeline::mutate(const Request& request, const ClusterView& given_cluster) const {
  std::optional<PinnedReleaseView> pinned;
  const ClusterView& cluster = judged_view(given_cluster, impl_->release, pinned);
  if (request.object == nullptr || !request.object->IsObject()) {
    return denied(request, Verdict::bad_request("the object is not a JSON object"));
  }
  MutationOutcome outcome = leaving_request_unchanged(request, "mutation", [&] {
    return request.resource == Resource::virtual_machine ? mutate_vm(request, cluster, impl_->structure)
                                                         : mutate_vmi(request, cluster, impl_->structure);
  });
  warn_of_ignored_configuration(cluster.config(), outcome.verdict.warnings);
  warn_of_release(cluster.config(), outcome.verdict.warnings);
  return outcome;
}

Verdict Pipeline::validate(const Request& request, const ClusterView& given_cluster) const {
  std::optional<PinnedReleaseView> pinned;
  const ClusterView& cluster = judged_view(given_cluster, impl_->release, pinned);
  if (request.object == nullptr || !request.object->IsObject()) {
    return Verdict::bad_request("the object is not a JSON object");
  }
  Verdict verdict = leaving_request_unchanged(request, "validation", [&] {
    return request.resource == Resource::virtual_machine ? validate_vm(request, cluster, &impl_->structure)
                                                         : validate_vmi(request, cluster, &impl_->structure);
  });
  warn_of_ignored_configuration(cluster.config(), verdict.warnings);
  warn_of_release(cluster.config(), verdict.warnings);
  return verdict;
}

Result<json::Document> Pipeline::expand(const json::Value& vm, std::string_view namespace_name, std::string_view now,
                                        const ClusterView& given_cluster) const {
  std::optional<PinnedReleaseView> pinned;
  const ClusterView& cluster = judged_view(given_cluster, impl_->release, pinned);
  Result<json::Document> vmi = expand::build_vmi(vm, namespace_name, cluster);
  if (!vmi) {
    return vmi;
  }
  if (auto error =
          defaults::apply_vmi_create_defaults(*vmi, namespace_name, cluster.config(), now, vmi->GetAllocator())) {
    return Error{*error};
  }
  return vmi;
}

ErrorList Pipeline::check_cluster_object(const json::Value& object) const {
  const std::optional<ObjectKind> kind = parse_object_kind(json::find_string(object, "kind"));
  if (!kind) {
    return {};
  }
  const bool is_instancetype = *kind == ObjectKind::instancetype || *kind == ObjectKind::cluster_instancetype;
  const bool is_preference = *kind == ObjectKind::preference || *kind == ObjectKind::cluster_preference;
  if (!is_instancetype && !is_preference) {
    return {};
  }
  ErrorList errors = impl_->structure.validate(
      is_instancetype ? StructureKind::instancetype_spec : StructureKind::preference_spec, object);
  if (!errors.empty()) {
    return errors;
  }
  // Quantities the rules parse: instancetype memory.{guest,maxGuest}, preference requirements.memory.guest.
  const json::Value* memory = is_instancetype ? json::find_path(object, {"spec", "memory"})
                                              : json::find_path(object, {"spec", "requirements", "memory"});
  const FieldPath base = is_instancetype ? FieldPath("spec.memory") : FieldPath("spec.requirements.memory");
  if (memory != nullptr && memory->IsObject()) {
    for (std::string_view field : {"guest", "maxGuest"}) {
      const json::Value* value = json::find(*memory, field);
      if (value == nullptr || value->IsNull()) {
        continue;
      }
      if (Result<Quantity> parsed = parse_quantity(*value); !parsed) {
        errors.push_back({CauseType::field_value_invalid, base.child(field).str(),
                          base.child(field).str() + " '" + quantity_text(value) + "': " + parsed.error().message});
      }
    }
  }
  if (is_instancetype) {
    if (const json::Value* page = json::find_path(object, {"spec", "memory", "hugepages", "pageSize"});
        page != nullptr && page->IsString()) {
      if (Result<Quantity> parsed = Quantity::parse(json::as_view(*page)); !parsed) {
        errors.push_back(
            {CauseType::field_value_invalid, "spec.memory.hugepages.pageSize",
             "spec.memory.hugepages.pageSize '" + std::string(json::as_view(*page)) + "': " + parsed.error().message});
      }
    }
  }
  return errors;
}

Outcome Pipeline::admit(const Request& request, const ClusterView& given_cluster) const {
  std::optional<PinnedReleaseView> pinned;
  const ClusterView& cluster = judged_view(given_cluster, impl_->release, pinned);
  Outcome outcome;
  outcome.admitted.SetNull();
  outcome.expanded.SetNull();
  Request mutating = request;
  mutating.patch_form = PatchForm::document;  // Outcome's patch is a Document
  MutationOutcome mutation = mutate(mutating, cluster);
  if (!mutation.verdict.allowed) {
    outcome.verdict = std::move(mutation.verdict);
    outcome.patch.SetArray();
    return outcome;
  }
  Request stored = request;
  stored.object = &mutation.mutated;
  outcome.verdict = request.resource == Resource::virtual_machine ? validate_vm(stored, cluster, nullptr)
                                                                  : validate_vmi(stored, cluster, nullptr);
  outcome.verdict.warnings.insert(outcome.verdict.warnings.begin(), mutation.verdict.warnings.begin(),
                                  mutation.verdict.warnings.end());
  outcome.patch = std::move(mutation.patch);
  outcome.admitted = std::move(mutation.mutated);
  if (outcome.verdict.allowed && request.resource == Resource::virtual_machine) {
    const std::string namespace_name = effective_namespace(outcome.admitted, request.namespace_name);
    // The controller sees the VM as stored: with the generation the API server gave it.
    json::Document stored_vm;
    stored_vm.CopyFrom(outcome.admitted, stored_vm.GetAllocator());
    json::set(json::ensure_object(stored_vm, "metadata", stored_vm.GetAllocator()), "generation",
              json::Value(expand::stored_generation(
                  outcome.admitted, request.operation == Operation::update ? request.old_object : nullptr)),
              stored_vm.GetAllocator());
    Result<json::Document> vmi = expand(stored_vm, namespace_name, request.now, cluster);
    if (vmi) {
      outcome.expanded = std::move(vmi.value());
    } else {
      outcome.verdict.warnings.push_back("the VirtualMachineInstance cannot be built yet: " + vmi.error().message);
      outcome.expansion_error = vmi.error();
    }
  }
  return outcome;
}

}  // namespace vmgate::admission
