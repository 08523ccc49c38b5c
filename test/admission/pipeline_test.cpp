// Properties of the whole chain (Pipeline::admit) over real inputs: the acceptance sample cases
// in the shared data directory (VMGATE_SHARED_DIR), vmgate's own admission cases and the
// benchmark bodies. For every object: the returned patch applied to the submitted object yields
// `admitted`; admitting `admitted` again yields an empty patch (idempotent mutation); the same
// input gives byte-identical output.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "support/apply_patch.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/pipeline.hpp"

namespace vmgate::admission {
namespace {

namespace fs = std::filesystem;
using testing::dump;
using testing::parse;

struct Case {
  std::string name;
  json::Document document;
};

// The cases (JSON files) of a directory and of its subdirectories, in name order.
std::vector<Case> cases_in(const fs::path& dir) {
  std::vector<Case> cases;
  if (!fs::exists(dir)) {
    return cases;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    cases.push_back({fs::relative(file, dir).string(), parse(testing::read_file(file.string()))});
  }
  return cases;
}

std::vector<Case> acceptance_cases() {
  return cases_in(fs::path(VMGATE_SHARED_DIR) / "acceptance-sample" / "cases");
}

ObjectStore store_of(const json::Value& objects) {
  ObjectStore store;
  if (objects.IsArray()) {
    for (const json::Value& object : objects.GetArray()) {
      EXPECT_TRUE(store.add(object).ok());
    }
  }
  return store;
}

Request request_of(const json::Value& request, const json::Value& object) {
  Request r;
  r.object = &object;
  r.resource = json::find_string(object, "kind") == "VirtualMachineInstance" ? Resource::virtual_machine_instance
                                                                             : Resource::virtual_machine;
  r.operation = json::find_string(request, "operation") == "UPDATE" ? Operation::update : Operation::create;
  if (std::string_view ns = json::find_string(request, "namespace"); !ns.empty()) {
    r.namespace_name = std::string(ns);
  }
  const json::Value* old_object = json::find(request, "oldObject");
  r.old_object = old_object != nullptr && old_object->IsObject() ? old_object : nullptr;
  return r;
}

// Under a per-request arena (Request::allocator) the VM a mutation or a validation writes into
// shares the members no rule writes with the request's object: the same outcome as without, and
// the request's object unchanged.
void expect_arena_changes_nothing(const Pipeline& pipeline, const Request& request, const ObjectStore& store) {
  json::Document before;
  before.CopyFrom(*request.object, before.GetAllocator());
  json::Allocator arena;
  Request in_arena = request;
  in_arena.allocator = &arena;
  const MutationOutcome own = pipeline.mutate(request, store);
  const MutationOutcome shared = pipeline.mutate(in_arena, store);
  EXPECT_EQ(dump(shared.patch), dump(own.patch));
  EXPECT_EQ(dump(shared.mutated), dump(own.mutated));
  EXPECT_EQ(shared.verdict.allowed, own.verdict.allowed);
  EXPECT_EQ(shared.verdict.message, own.verdict.message);
  const Verdict own_validation = pipeline.validate(request, store);
  const Verdict shared_validation = pipeline.validate(in_arena, store);
  EXPECT_EQ(shared_validation.allowed, own_validation.allowed);
  EXPECT_EQ(shared_validation.message, own_validation.message);
  EXPECT_EQ(shared_validation.warnings, own_validation.warnings);
  EXPECT_EQ(dump(*request.object), dump(before));
}

// PatchForm::text (the webhook's, under its arena): the patch as the text of the Document
// PatchForm::document gives, byte for byte ("[]" when none), the Document left an empty array,
// and the same mutated object and verdict.
void expect_text_patch_is_the_documents_text(const Pipeline& pipeline, const Request& request,
                                             const ObjectStore& store) {
  json::Allocator arena;
  Request as_text = request;
  as_text.allocator = &arena;
  as_text.patch_form = PatchForm::text;
  const MutationOutcome document = pipeline.mutate(request, store);
  const MutationOutcome text = pipeline.mutate(as_text, store);
  EXPECT_TRUE(document.patch_text.empty());
  EXPECT_EQ(text.patch_text, json::to_string(document.patch));
  EXPECT_EQ(dump(text.patch), "[]");
  EXPECT_EQ(dump(text.mutated), dump(document.mutated));
  EXPECT_EQ(text.verdict.allowed, document.verdict.allowed);
  EXPECT_EQ(text.verdict.message, document.verdict.message);
}

TEST(PipelineProperties, AcceptanceCasesAgreeWithTheirExpectationsAndThePatchProperties) {
  const std::vector<Case> cases = acceptance_cases();
  if (cases.empty()) {
    GTEST_SKIP() << "no acceptance-sample in the shared data directory (VMGATE_SHARED_DIR)";
  }
  const Pipeline pipeline;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const json::Value& request = *json::find(c.document, "request");
    const ObjectStore store = store_of(*json::find(c.document, "objects"));
    const json::Value& object = *json::find(request, "object");
    const Request r = request_of(request, object);
    const Outcome outcome = pipeline.admit(r, store);
    const bool expected = json::find(*json::find(c.document, "expect"), "allowed")->GetBool();
    EXPECT_EQ(outcome.verdict.allowed, expected) << outcome.verdict.message;

    // Determinism: a second run is byte-identical.
    const Outcome again = pipeline.admit(r, store);
    EXPECT_EQ(dump(outcome.patch), dump(again.patch));
    EXPECT_EQ(dump(outcome.admitted), dump(again.admitted));
    EXPECT_EQ(dump(outcome.expanded), dump(again.expanded));
    EXPECT_EQ(outcome.verdict.message, again.verdict.message);
    expect_arena_changes_nothing(pipeline, r, store);
    expect_text_patch_is_the_documents_text(pipeline, r, store);

    if (outcome.admitted.IsNull()) {
      continue;  // denied by the mutating stage: nothing was admitted
    }
    Result<json::Document> patched = testing::apply_patch(object, outcome.patch);
    ASSERT_TRUE(patched.ok()) << patched.error().message;
    EXPECT_EQ(dump(*patched), dump(outcome.admitted));

    // Idempotence: mutating the admitted object changes nothing.
    Request second = r;
    second.object = &outcome.admitted;
    const MutationOutcome remutated = pipeline.mutate(second, store);
    ASSERT_TRUE(remutated.verdict.allowed) << remutated.verdict.message;
    EXPECT_EQ(dump(remutated.patch), "[]");
  }
}

// vmgate's own admission cases (test/fixtures/admission-cases, in the acceptance format): every
// one mutated and validated under an arena as without, the request's object unchanged, its patch
// as text the Document's text. They hold the rules' writes the arena's sharing must not miss (a
// preference's storage class into the dataVolumeTemplates, inference, expansion).
TEST(PipelineProperties, AnArenaChangesNoAnswerToTheAdmissionCases) {
  const std::vector<Case> cases = cases_in(fs::path(VMGATE_SOURCE_DIR) / "test" / "fixtures" / "admission-cases");
  ASSERT_GT(cases.size(), 600U);
  const Pipeline pipeline;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const json::Value& request = *json::find(c.document, "request");
    const json::Value* object = json::find(request, "object");
    if (object == nullptr || !object->IsObject()) {
      continue;  // refused before any mutation
    }
    const ObjectStore store = store_of(*json::find(c.document, "objects"));
    expect_arena_changes_nothing(pipeline, request_of(request, *object), store);
    expect_text_patch_is_the_documents_text(pipeline, request_of(request, *object), store);
  }
}

TEST(PipelineProperties, BenchmarkBodiesAreAdmittedIdempotently) {
  const Pipeline pipeline;
  const ObjectStore store;  // instancetypes absent: admitted with warnings
  for (const char* size : {"small", "medium", "large"}) {
    SCOPED_TRACE(size);
    const fs::path file =
        fs::path(VMGATE_SHARED_DIR) / "bench" / "bodies" / (std::string("admissionreview-") + size + ".json");
    if (!fs::exists(file)) {
      GTEST_SKIP() << "no bench/bodies in the shared data directory (VMGATE_SHARED_DIR)";
    }
    const json::Document review = parse(testing::read_file(file.string()));
    const json::Value& request = *json::find(review, "request");
    const json::Value& object = *json::find(request, "object");
    const Request r = request_of(request, object);
    const Outcome outcome = pipeline.admit(r, store);
    ASSERT_FALSE(outcome.admitted.IsNull()) << outcome.verdict.message;
    expect_arena_changes_nothing(pipeline, r, store);
    expect_text_patch_is_the_documents_text(pipeline, r, store);
    Result<json::Document> patched = testing::apply_patch(object, outcome.patch);
    ASSERT_TRUE(patched.ok());
    EXPECT_EQ(dump(*patched), dump(outcome.admitted));
    Request second = r;
    second.object = &outcome.admitted;
    EXPECT_EQ(dump(pipeline.mutate(second, store).patch), "[]");
  }
}

// A VM whose cluster instancetype does not exist: admitted with a warning, not expandable.
constexpr std::string_view kVmWithMissingInstancetype = R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",
    "metadata":{"name":"vm","namespace":"ns"},
    "spec":{"runStrategy":"Always","instancetype":{"name":"u1.nothere"},
      "template":{"spec":{"domain":{"devices":{}}}}}})";

TEST(Pipeline, MissingInstancetypeIsAdmittedWithAWarningThatNamesIt) {
  const Pipeline pipeline;
  const ObjectStore store;
  const json::Document vm = parse(kVmWithMissingInstancetype);
  Request r;
  r.object = &vm;
  const Outcome outcome = pipeline.admit(r, store);
  EXPECT_TRUE(outcome.verdict.allowed) << outcome.verdict.message;
  ASSERT_FALSE(outcome.verdict.warnings.empty());
  EXPECT_NE(outcome.verdict.warnings[0].find(
                R"(virtualmachineclusterinstancetypes.instancetype.kubevirt.io "u1.nothere" not found)"),
            std::string::npos)
      << outcome.verdict.warnings[0];
}

// pkg/util/webhooks/webhooks.go ValidationErrorsToAdmissionResponse: an OpenAPI schema cause is
// its message only, in the mutating and the validating stage, for a VM and a VMI.
TEST(Pipeline, SchemaCausesHaveNoTypeAndNoField) {
  const Pipeline pipeline;
  const ObjectStore store;
  const json::Document vmi = parse(R"({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
      "metadata": {"name": "v"}, "spec": {"dnsPolicy": "Bogus", "domain": {"devices": {}}}})");
  const json::Document vm = parse(R"({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
      "metadata": {"name": "v"}, "spec": {"bogus": 1, "template": {"spec": {"domain": {"devices": {}}}}}})");
  for (const json::Document* object : {&vmi, &vm}) {
    Request r;
    r.object = object;
    r.resource = object == &vm ? Resource::virtual_machine : Resource::virtual_machine_instance;
    for (const Verdict& verdict : {pipeline.admit(r, store).verdict, pipeline.validate(r, store)}) {
      EXPECT_FALSE(verdict.allowed);
      ASSERT_EQ(verdict.causes.size(), 1U) << verdict.message;
      EXPECT_EQ(verdict.causes[0].type, CauseType::none);
      EXPECT_EQ(verdict.causes[0].field, "");
      EXPECT_EQ(verdict.causes[0].message, object == &vm ? "spec.bogus in body is a forbidden property"
                                                         : "spec.dnsPolicy in body should be one of [ClusterFirst "
                                                           "ClusterFirstWithHostNet Default None]");
    }
  }
}

TEST(Pipeline, AnUnexpandableVmCarriesTheExpansionErrorBesideItsWarning) {
  const Pipeline pipeline;
  const ObjectStore store;
  const json::Document vm = parse(kVmWithMissingInstancetype);
  Request r;
  r.object = &vm;
  const Outcome outcome = pipeline.admit(r, store);
  EXPECT_TRUE(outcome.verdict.allowed) << outcome.verdict.message;
  EXPECT_TRUE(outcome.expanded.IsNull());
  ASSERT_TRUE(outcome.expansion_error.has_value());
  ASSERT_FALSE(outcome.verdict.warnings.empty());
  EXPECT_EQ(outcome.verdict.warnings.back(),
            "the VirtualMachineInstance cannot be built yet: " + outcome.expansion_error->message);
  // The same reason expand() gives on its own.
  Result<json::Document> expanded = pipeline.expand(outcome.admitted, "ns", "", store);
  ASSERT_FALSE(expanded.ok());
  EXPECT_EQ(outcome.expansion_error->message, expanded.error().message);

  r.resource = Resource::virtual_machine_instance;
  const json::Document vmi = parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
    "metadata":{"name":"vmi","namespace":"ns"},"spec":{"domain":{"devices":{}}}})");
  r.object = &vmi;
  EXPECT_FALSE(pipeline.admit(r, store).expansion_error.has_value());
}

TEST(Pipeline, DiscontinuedBindingsOnCreateAndStorageAfterTheSpec) {
  const Pipeline pipeline;
  const ObjectStore store;
  // vms-admitter.go runs the network ValidateCreation with the path "spec" and answers with it alone.
  const json::Document slirp = parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",
    "metadata":{"name":"vm","namespace":"ns"},
    "spec":{"runStrategy":"Always","template":{"spec":{"domain":{"devices":{"interfaces":[{"name":"default","slirp":{}}]},
      "memory":{"guest":"1Gi"}},"networks":[{"name":"default","pod":{}}]}}}})");
  Request r;
  r.object = &slirp;
  Outcome outcome = pipeline.admit(r, store);
  EXPECT_EQ(outcome.verdict.message, "Slirp interface support has been discontinued since v1.3");
  ASSERT_EQ(outcome.verdict.causes.size(), 1U);
  EXPECT_EQ(outcome.verdict.causes[0].field, "spec.domain.devices.interfaces[0].slirp");

  // The dataVolumeTemplates' namespace is checked only once the spec passed.
  const json::Document both = parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",
    "metadata":{"name":"vm","namespace":"ns"},
    "spec":{"runStrategy":"Sometimes","dataVolumeTemplates":[{"metadata":{"name":"root","namespace":"other"},
      "spec":{"storage":{},"source":{"blank":{}}}}],
      "template":{"spec":{"domain":{"devices":{}},"volumes":[{"name":"root","dataVolume":{"name":"root"}}]}}}})");
  r.object = &both;
  outcome = pipeline.admit(r, store);
  EXPECT_EQ(outcome.verdict.message.find("Embedded DataVolume"), std::string::npos) << outcome.verdict.message;
  EXPECT_NE(outcome.verdict.message.find("Sometimes"), std::string::npos) << outcome.verdict.message;
}

TEST(Pipeline, VmiCreateReportsNetworkAndDiskCausesTwiceAsVirtApiDoes) {
  // virt-api registers the network and storage admitters as spec validators of the VMI create
  // webhook and ValidateVirtualMachineInstanceSpec runs their rules again; a VM reports them once.
  const Pipeline pipeline;
  const ObjectStore store;
  const json::Document vmi = parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
    "metadata":{"name":"vmi","namespace":"ns"},
    "spec":{"domain":{"devices":{"disks":[{"name":"root","disk":{"bus":"ide"}}],
      "interfaces":[{"name":"default","masquerade":{},"model":"virtio-net"}]},
      "resources":{"requests":{"memory":"1Gi"}}},
      "networks":[{"name":"default","pod":{}}],"volumes":[{"name":"root","emptyDisk":{"capacity":"1Gi"}}]}})");
  Request r;
  r.resource = Resource::virtual_machine_instance;
  r.object = &vmi;
  const Verdict verdict = pipeline.admit(r, store).verdict;
  std::vector<std::string> fields;
  for (const FieldError& cause : verdict.causes) {
    fields.push_back(cause.field);
  }
  EXPECT_EQ(fields, (std::vector<std::string>{
                        "spec.domain.devices.interfaces[0].model", "spec.domain.devices.disks[0].disk.bus",
                        "spec.domain.devices.interfaces[0].model", "spec.domain.devices.disks[0].disk.bus"}))
      << verdict.message;
}

TEST(Pipeline, AnIgnoredKubeVirtConfigurationIsAWarning) {
  const Pipeline pipeline;
  ObjectStore store;
  ASSERT_TRUE(store
                  .add(parse(R"({"apiVersion":"kubevirt.io/v1","kind":"KubeVirt","metadata":{"name":"kubevirt",
                    "namespace":"kubevirt"},"spec":{"configuration":{"cpuModel":"Haswell",
                    "network":{"defaultNetworkInterface":"macvtap"}}}})"))
                  .ok());
  const json::Document vmi = parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
    "metadata":{"name":"vmi","namespace":"ns"},"spec":{"domain":{"devices":{},"resources":{"requests":{"memory":"1Gi"}}}}})");
  Request r;
  r.resource = Resource::virtual_machine_instance;
  r.object = &vmi;
  const Outcome outcome = pipeline.admit(r, store);
  EXPECT_TRUE(outcome.verdict.allowed) << outcome.verdict.message;
  EXPECT_EQ(outcome.verdict.warnings,
            (std::vector<std::string>{"the KubeVirt CR's configuration is ignored, as KubeVirt ignores it: invalid "
                                      "default-network-interface in config: macvtap"}));
  EXPECT_EQ(testing::text(outcome.admitted, "/spec/domain/cpu/model"), "host-model");
}

TEST(Pipeline, TheReleaseTheKubeVirtCrReportsJudgesAndTheWarningSaysSo) {
  ObjectStore store;
  ASSERT_TRUE(store
                  .add(parse(R"({"apiVersion":"kubevirt.io/v1","kind":"KubeVirt","metadata":{"name":"kubevirt",
                    "namespace":"kubevirt"},"status":{"observedKubeVirtVersion":"v1.8.2"}})"))
                  .ok());
  // PanicDevices: GA at main, a gate off by default in v1.8.
  const json::Document vmi = parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
    "metadata":{"name":"vmi","namespace":"ns"},"spec":{"domain":{"devices":{"panicDevices":[{"model":"isa"}]},
    "resources":{"requests":{"memory":"1Gi"}}}}})");
  Request r;
  r.resource = Resource::virtual_machine_instance;
  r.object = &vmi;

  const Outcome from_cluster = Pipeline().admit(r, store);
  EXPECT_FALSE(from_cluster.verdict.allowed);
  EXPECT_EQ(from_cluster.verdict.warnings,
            (std::vector<std::string>{"judged as KubeVirt v1.8, the release the KubeVirt CR reports "
                                      "(status.observedKubeVirtVersion v1.8.2); --kubevirt-version pins one"}));

  // --kubevirt-version main: the CR's release is not asked, and nothing needs saying.
  const Outcome pinned = Pipeline(Release::main).admit(r, store);
  EXPECT_TRUE(pinned.verdict.allowed) << pinned.verdict.message;
  EXPECT_TRUE(pinned.verdict.warnings.empty());
  const Verdict validated = Pipeline(Release::v1_8).validate(r, store);
  EXPECT_FALSE(validated.allowed);
  EXPECT_TRUE(validated.warnings.empty());
}

TEST(Pipeline, ReferencePolicyExpandWritesTheInstancetypeIntoTheStoredVm) {
  const Pipeline pipeline;
  ObjectStore store;
  ASSERT_TRUE(store
                  .add(parse(R"({"apiVersion":"kubevirt.io/v1","kind":"KubeVirt",
    "metadata":{"name":"kubevirt","namespace":"kubevirt"},
    "spec":{"configuration":{"instancetype":{"referencePolicy":"expand"}}}})"))
                  .ok());
  ASSERT_TRUE(store
                  .add(parse(R"({"apiVersion":"instancetype.kubevirt.io/v1beta1",
    "kind":"VirtualMachineClusterInstancetype","metadata":{"name":"it"},
    "spec":{"cpu":{"guest":2},"memory":{"guest":"2Gi"}}})"))
                  .ok());
  const json::Document vm = parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",
    "metadata":{"name":"vm","namespace":"ns"},
    "spec":{"runStrategy":"Always","instancetype":{"name":"it"},
      "template":{"spec":{"domain":{"devices":{}}}}}})");
  Request r;
  r.object = &vm;
  const Outcome outcome = pipeline.admit(r, store);
  ASSERT_TRUE(outcome.verdict.allowed) << outcome.verdict.message;
  EXPECT_EQ(json::find_path(outcome.admitted, {"spec", "instancetype"}), nullptr);
  const json::Value* cpu = json::find_path(outcome.admitted, {"spec", "template", "spec", "domain", "cpu"});
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(dump(*json::find(*cpu, "sockets")), "2");
  EXPECT_EQ(dump(*json::find_path(outcome.admitted, {"spec", "template", "spec", "domain", "memory", "guest"})),
            R"("2Gi")");
}

TEST(Pipeline, NonObjectRequestsAreRejectedNotCrashed) {
  const Pipeline pipeline;
  const ObjectStore store;
  for (const char* text : {"null", "[]", "\"vm\"", "42"}) {
    const json::Document value = parse(text);
    Request r;
    r.object = &value;
    const Outcome outcome = pipeline.admit(r, store);
    EXPECT_FALSE(outcome.verdict.allowed) << text;
    EXPECT_EQ(outcome.verdict.code, 400) << text;
  }
}

// vmi-mutator.go UPDATE reverts a user's status change; only KubeVirt's accounts keep theirs
// (vmgate-node reports the status as kubevirt-handler).
constexpr std::string_view kRunningVmi = R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
  "metadata":{"name":"vm1","namespace":"default"},
  "spec":{"domain":{"devices":{}},"terminationGracePeriodSeconds":0},
  "status":{"phase":"Scheduled"}})";

TEST(Pipeline, VmiStatusChangeIsKeptOnlyForKubeVirt) {
  const Pipeline pipeline;
  const ObjectStore store;
  const json::Document old_vmi = parse(kRunningVmi);
  json::Document vmi = parse(kRunningVmi);
  json::set(*json::find(vmi, "status"), "phase", json::Value("Running"), vmi.GetAllocator());
  Request r;
  r.resource = Resource::virtual_machine_instance;
  r.operation = Operation::update;
  r.object = &vmi;
  r.old_object = &old_vmi;

  const MutationOutcome by_user = pipeline.mutate(r, store);
  ASSERT_TRUE(by_user.verdict.allowed) << by_user.verdict.message;
  EXPECT_EQ(dump(*json::find_path(by_user.mutated, {"status", "phase"})), R"("Scheduled")");

  Request kubevirt = r;
  kubevirt.from_kubevirt_service_account = true;
  EXPECT_EQ(dump(pipeline.mutate(kubevirt, store).patch), "[]");
}

}  // namespace
}  // namespace vmgate::admission
