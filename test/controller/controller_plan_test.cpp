// The reconcile planner: run strategies, the VMI's pod and phase, the VM's status, and the
// deletes that leave nothing orphaned. A small simulated API applies each plan's writes (as the
// executor would, with an apiserver that has no garbage collector, like tools/testenv), so the
// life of a VM is followed from apply to delete.
#include "vmgate/controller/controller_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "support/apply_patch.hpp"
#include "support/json_pointer.hpp"
#include "support/json_test_support.hpp"
#include "vmgate/admission/cluster.hpp"
#include "vmgate/admission/pipeline.hpp"
#include "vmgate/kube/utc_time.hpp"

namespace vmgate::controller {
namespace {

using testing::parse;
using testing::text;

json::Document vm_doc(std::string_view strategy_fields, std::string_view extra_metadata = "") {
  return parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",
    "metadata":{"name":"vm1","namespace":"ns1","uid":"vm-uid-1","generation":3)" +
               std::string(extra_metadata) + R"(},
    "spec":{)" +
               std::string(strategy_fields) +
               R"(,"template":{"metadata":{"labels":{"app":"demo"}},
      "spec":{"domain":{"cpu":{"sockets":1,"cores":1,"threads":1},"memory":{"guest":"128Mi"},
                        "resources":{"requests":{"memory":"128Mi"}},"devices":{}}}}}})");
}

// The test's VMI builder: the template with the owner reference and annotations that the
// admission core's expansion adds (covered with the real pipeline below).
Result<json::Document> simple_vmi(const json::Value& vm) {
  json::Document vmi = parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
    "metadata":{"name":"vm1","namespace":"ns1","finalizers":["kubevirt.io/virtualMachineControllerFinalize",
                "kubevirt.io/foregroundDeleteVirtualMachine"],
                "ownerReferences":[{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","name":"vm1","controller":true,
                                    "blockOwnerDeletion":true}]},"spec":{}})");
  auto& a = vmi.GetAllocator();
  json::set_string(vmi["metadata"]["ownerReferences"][0], "uid", json::find_string(vm["metadata"], "uid"), a);
  json::set(vmi, "spec", json::copy(vm["spec"]["template"]["spec"], a), a);
  return vmi;
}

// An apiserver without a garbage collector, a scheduler or a kubelet: stores objects, assigns
// uids, honours finalizers; creates of an existing name fail.
struct World {
  std::map<std::string, json::Document> vms;
  std::map<std::string, json::Document> vmis;
  std::map<std::string, json::Document> pods;
  int uids = 0;
  int conflicts = 0;
  std::string now = "2026-01-01T00:00:00Z";
  std::vector<std::string> log;

  std::map<std::string, json::Document>& store(const std::string& kind) {
    return kind == "VirtualMachine" ? vms : kind == "VirtualMachineInstance" ? vmis : pods;
  }

  void put(const std::string& kind, json::Document object) {
    store(kind)[std::string(json::find_string(object["metadata"], "namespace")) + "/" +
                std::string(json::find_string(object["metadata"], "name"))] = std::move(object);
  }

  void request_delete(std::map<std::string, json::Document>& objects, const std::string& key) {
    auto found = objects.find(key);
    if (found == objects.end()) {
      return;
    }
    const json::Value* finalizers = json::find_path(found->second, {"metadata", "finalizers"});
    if (finalizers != nullptr && finalizers->IsArray() && !finalizers->Empty()) {
      json::set_string(found->second["metadata"], "deletionTimestamp", "2026-01-01T00:00:00Z",
                       found->second.GetAllocator());
    } else {
      objects.erase(found);
    }
  }

  State state() const {
    State out;
    out.now = now;
    for (const auto& [key, vm] : vms) {
      out.vms.push_back(&vm);
    }
    for (const auto& [key, vmi] : vmis) {
      out.vmis.push_back(&vmi);
    }
    for (const auto& [key, pod] : pods) {
      out.pods.push_back(&pod);
    }
    return out;
  }

  static std::string_view text_or_empty(const json::Value& object, const char* pointer) {
    const json::Value* found = testing::resolve(object, pointer);
    return found != nullptr && found->IsString() ? json::as_view(*found) : std::string_view();
  }

  // A JSON merge patch (RFC 7386): null removes.
  static void merge(json::Value& target, const json::Value& patch, json::Allocator& a) {
    for (const auto& member : patch.GetObject()) {
      const std::string_view key(member.name.GetString(), member.name.GetStringLength());
      if (member.value.IsNull()) {
        json::erase(target, key);
      } else if (member.value.IsObject() && json::find(target, key) != nullptr && json::find(target, key)->IsObject()) {
        merge(*json::find(target, key), member.value, a);
      } else {
        json::set(target, key, json::copy(member.value, a), a);
      }
    }
  }

  // Applies the plan's actions; returns how many there were.
  std::size_t step(const PlanSettings& settings) {
    State current = state();
    std::vector<Action> actions = plan(current, settings);
    apply(actions);
    return actions.size();
  }

  void apply(std::vector<Action>& actions) {
    for (Action& action : actions) {
      log.push_back(std::string(to_string(action.kind)) + " " + action.name);
      auto& objects = store(action.kind_name);
      const std::string key = action.namespace_name + "/" + action.name;
      switch (action.kind) {
        case ActionKind::create_vmi:
        case ActionKind::create_pod: {
          const std::string name(json::find_string(action.body["metadata"], "name"));
          const std::string ns(json::find_string(action.body["metadata"], "namespace"));
          if (objects.count(ns + "/" + name) != 0) {
            ++conflicts;
            break;
          }
          json::set_string(action.body["metadata"], "uid", "uid-" + std::to_string(++uids), action.body.GetAllocator());
          objects[ns + "/" + name] = std::move(action.body);
          break;
        }
        case ActionKind::delete_vmi:
        case ActionKind::delete_pod:
          request_delete(objects, key);
          break;
        case ActionKind::patch_vmi:
        case ActionKind::patch_vm_status: {
          auto found = objects.find(key);
          // A resourceVersion in the patch is a precondition (409 when the object changed).
          const std::string_view version = text_or_empty(action.body, "/metadata/resourceVersion");
          if (found != objects.end() && !version.empty() &&
              version != text_or_empty(found->second, "/metadata/resourceVersion")) {
            ++conflicts;
          } else if (found != objects.end()) {
            merge(found->second, action.body, found->second.GetAllocator());
          }
          break;
        }
        case ActionKind::patch_vm_spec: {
          auto found = objects.find(key);
          if (found != objects.end()) {
            Result<json::Document> patched = testing::apply_patch(found->second, action.body);
            if (patched) {
              found->second = std::move(patched.value());
            } else {
              ++conflicts;  // a failed test: 422
            }
          }
          break;
        }
        case ActionKind::remove_finalizer: {
          auto found = objects.find(key);
          if (found != objects.end()) {
            json::set(found->second["metadata"], "finalizers",
                      json::copy(action.body[1]["value"], found->second.GetAllocator()), found->second.GetAllocator());
            if (found->second["metadata"]["finalizers"].Empty() &&
                json::has(found->second["metadata"], "deletionTimestamp")) {
              objects.erase(found);
            }
          }
          break;
        }
      }
    }
  }

  void settle(const PlanSettings& settings) {
    for (int i = 0; i < 20 && step(settings) != 0; ++i) {
    }
  }

  void set_vmi_phase(const std::string& phase, bool ready) {
    json::Document& vmi = vmis.begin()->second;
    auto& a = vmi.GetAllocator();
    json::Value& status = json::ensure_object(vmi, "status", a);
    json::set_string(status, "phase", phase, a);
    json::Value conditions(rapidjson::kArrayType);
    json::Value condition(rapidjson::kObjectType);
    json::set_string(condition, "type", "Ready", a);
    json::set_string(condition, "status", ready ? "True" : "False", a);
    conditions.PushBack(condition, a);
    json::set(status, "conditions", std::move(conditions), a);
  }
  void set_pod_phase(const std::string& phase) {
    json::Document& pod = pods.begin()->second;
    json::set_string(json::ensure_object(pod, "status", pod.GetAllocator()), "phase", phase, pod.GetAllocator());
  }
  std::string vm_status() const { return text(vms.begin()->second, "/status/printableStatus"); }

  // status.stateChangeRequests as the API server's subresources write them (virt-api's JSON
  // patch), and as the VM holds them ("none" when absent).
  void set_requests(std::string_view list) {
    json::Document& vm = vms.begin()->second;
    auto& a = vm.GetAllocator();
    json::set(json::ensure_object(vm, "status", a), "stateChangeRequests", json::copy(parse(list), a), a);
  }
  std::string requests() const {
    const json::Value* list = json::find_path(vms.begin()->second, {"status", "stateChangeRequests"});
    return list == nullptr ? "none" : testing::dump(*list);
  }
  std::string vmi_uid() const { return text(vmis.begin()->second, "/metadata/uid"); }
  // Steps until the VMI is gone (its delete, its pod's, its finalizers').
  void step_until_vmi_gone(const PlanSettings& settings) {
    for (int i = 0; i < 10 && !vmis.empty(); ++i) {
      step(settings);
    }
  }
};

PlanSettings settings() {
  PlanSettings out;
  out.build_vmi = simple_vmi;
  return out;
}

TEST(RunStrategy, FromRunStrategyOrRunning) {
  EXPECT_EQ(run_strategy(parse(R"({"spec":{"runStrategy":"Once","running":true}})")), "Once");
  EXPECT_EQ(run_strategy(parse(R"({"spec":{"running":true}})")), "Always");
  EXPECT_EQ(run_strategy(parse(R"({"spec":{"running":false}})")), "Halted");
  EXPECT_EQ(run_strategy(parse(R"({"spec":{}})")), "Halted");
}

TEST(Plan, AlwaysRunsThroughTheWholeLife) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.step(settings());
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_EQ(world.vm_status(), "Starting");
  EXPECT_EQ(text(world.vms.begin()->second, "/status/created"), "false");
  world.settle(settings());
  // The VMI got its pod and moved to Scheduling; the pod is owned by the VMI.
  ASSERT_EQ(world.pods.size(), 1U);
  const json::Document& pod = world.pods.begin()->second;
  EXPECT_EQ(text(pod, "/metadata/ownerReferences/0/uid"), text(world.vmis.begin()->second, "/metadata/uid"));
  // The pod link: the launcher gets the VMI the controller sees, uid and all, from the pod.
  const json::Value* embedded = json::find_path(pod, {"metadata", "annotations", "vmgate.kubevirt.io/vmi"});
  ASSERT_TRUE(embedded != nullptr && embedded->IsString());
  EXPECT_EQ(text(testing::parse(json::as_view(*embedded)), "/metadata/uid"),
            text(world.vmis.begin()->second, "/metadata/uid"));
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Scheduling");
  EXPECT_EQ(world.vm_status(), "Starting");
  EXPECT_EQ(text(world.vms.begin()->second, "/status/created"), "true");

  // No kubelet moves the pod; the launcher reports Running and Ready. The controller never
  // moves the phase back.
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Running");
  EXPECT_EQ(world.vm_status(), "Running");
  EXPECT_EQ(text(world.vms.begin()->second, "/status/ready"), "true");
  EXPECT_EQ(text(world.vms.begin()->second, "/status/conditions/0/status"), "True");

  // syncGenerationInfo: the VMI was started from generation 3 (the test's builder copies no
  // annotation: set it as the expansion does).
  json::Document& started = world.vmis.begin()->second;
  json::set_string(json::ensure_object(started["metadata"], "annotations", started.GetAllocator()),
                   "kubevirt.io/vm-generation", "3", started.GetAllocator());
  world.settle(settings());
  EXPECT_EQ(text(world.vms.begin()->second, "/status/observedGeneration"), "3");
  EXPECT_EQ(text(world.vms.begin()->second, "/status/desiredGeneration"), "3");

  // A settled world plans nothing (no status patch loop).
  EXPECT_EQ(world.step(settings()), 0U);

  // kubectl delete vm (no finalizer on the VM): the VMI goes, its pod first, then its finalizer.
  world.vms.clear();
  world.settle(settings());
  EXPECT_TRUE(world.vmis.empty());
  EXPECT_TRUE(world.pods.empty());
  EXPECT_EQ(world.conflicts, 0);
}

TEST(Plan, AlwaysRestartsAFinishedVmi) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(settings());
  world.set_vmi_phase("Running", true);  // it ran: its end is no start failure
  world.settle(settings());
  world.set_vmi_phase("Succeeded", false);
  world.step(settings());  // delete the VMI (finalizer: marked)
  world.settle(settings());
  ASSERT_EQ(world.vmis.size(), 1U);  // a new one
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Scheduling");
  EXPECT_EQ(world.pods.size(), 1U);
  EXPECT_EQ(text(world.pods.begin()->second, "/metadata/ownerReferences/0/uid"),
            text(world.vmis.begin()->second, "/metadata/uid"));
}

TEST(Plan, HaltedStopsAndReportsStopping) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  json::Document& vm = world.vms.begin()->second;
  json::set_string(vm["spec"], "runStrategy", "Halted", vm.GetAllocator());
  world.step(settings());
  // The VMI is marked for deletion (its finalizer holds it) and its pod deleted next.
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_NE(text(world.vmis.begin()->second, "/metadata/deletionTimestamp"), "<absent>");
  world.step(settings());
  EXPECT_EQ(world.vm_status(), "Stopping");
  world.settle(settings());
  EXPECT_TRUE(world.vmis.empty());
  EXPECT_TRUE(world.pods.empty());
  EXPECT_EQ(world.vm_status(), "Stopped");
  EXPECT_EQ(text(world.vms.begin()->second, "/status/conditions/0/reason"), "VMINotExists");
}

TEST(Plan, OnceRunsOnce) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Once")"));
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  world.set_vmi_phase("Succeeded", false);
  world.settle(settings());
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Succeeded");
  EXPECT_EQ(world.vm_status(), "Stopped");
}

TEST(Plan, RerunOnFailureRerunsFailuresOnly) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"RerunOnFailure")"));
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  world.set_vmi_phase("Failed", false);
  world.settle(settings());
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Scheduling");  // rerun
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  world.set_vmi_phase("Succeeded", false);
  world.settle(settings());
  EXPECT_TRUE(world.vmis.empty());
  EXPECT_EQ(world.vm_status(), "Stopped");
  world.settle(settings());
  EXPECT_TRUE(world.vmis.empty());
}

// KubeVirt's start failure backoff: a VMI that ends before it ever ran holds the next start back
// 10 s x failures^2 (+ up to half again, at most 5 min), the VM showing CrashLoopBackOff; a VMI
// that runs clears it.
TEST(Plan, AVmiThatNeverRunsBacksItsVmOff) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(settings());
  ASSERT_EQ(world.vmis.size(), 1U);
  const std::string first_uid = text(world.vmis.begin()->second, "/metadata/uid");
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phaseTransitionTimestamps/0/phase"), "Scheduling");
  world.set_vmi_phase("Failed", false);
  world.settle(settings());
  EXPECT_TRUE(world.vmis.empty());  // deleted, and no new one yet
  EXPECT_EQ(world.vm_status(), "CrashLoopBackOff");
  const json::Document& vm = world.vms.begin()->second;
  EXPECT_EQ(text(vm, "/status/startFailure/consecutiveFailCount"), "1");
  EXPECT_EQ(text(vm, "/status/startFailure/lastFailedVMIUID"), first_uid);
  const auto retry_after = kube::parse_utc_seconds(text(vm, "/status/startFailure/retryAfterTimestamp"));
  const std::int64_t start = *kube::parse_utc_seconds(world.now);
  ASSERT_TRUE(retry_after.has_value());
  EXPECT_GE(*retry_after - start, 10);
  EXPECT_LE(*retry_after - start, 15);
  // The plan says when to look again, and holds the start back until then.
  std::optional<std::chrono::seconds> replan;
  std::vector<std::string> notes;
  EXPECT_TRUE(plan(world.state(), settings(), &notes, &replan).empty());
  ASSERT_TRUE(replan.has_value());
  EXPECT_EQ(replan->count(), *retry_after - start);
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_EQ(notes[0], "ns1/vm1: start delayed by the start failure backoff until " +
                          text(vm, "/status/startFailure/retryAfterTimestamp"));

  world.now = kube::format_utc_seconds(*retry_after);
  world.settle(settings());
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_EQ(world.vm_status(), "Starting");
  world.set_vmi_phase("Failed", false);
  world.settle(settings());
  EXPECT_EQ(text(world.vms.begin()->second, "/status/startFailure/consecutiveFailCount"), "2");
  const auto second_retry =
      kube::parse_utc_seconds(text(world.vms.begin()->second, "/status/startFailure/retryAfterTimestamp"));
  EXPECT_GE(*second_retry - *retry_after, 40);
  EXPECT_LE(*second_retry - *retry_after, 60);

  // The third VMI runs: the failures are forgotten (the merge patch removes startFailure).
  world.now = kube::format_utc_seconds(*second_retry);
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  EXPECT_EQ(world.vm_status(), "Running");
  EXPECT_EQ(text(world.vms.begin()->second, "/status/startFailure"), "<absent>");
  const json::Value* transitions = json::find_path(world.vmis.begin()->second, {"status", "phaseTransitionTimestamps"});
  ASSERT_NE(transitions, nullptr);
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phaseTransitionTimestamps/1/phase"), "Running");
}

// A VM whose every VMI fails at once costs a bounded number of VMIs: ten minutes of it, planned
// every second, make five or six, not one per plan.
TEST(Plan, AVmThatNeverStartsMakesFewVmis) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  const std::int64_t start = *kube::parse_utc_seconds(world.now);
  int created = 0;
  std::string last_uid;
  for (std::int64_t second = 0; second < 600; ++second) {
    world.now = kube::format_utc_seconds(start + second);
    world.step(settings());
    if (!world.vmis.empty()) {
      const std::string uid = text(world.vmis.begin()->second, "/metadata/uid");
      if (uid != last_uid) {
        ++created;
        last_uid = uid;
      }
      if (text(world.vmis.begin()->second, "/status/phase") == "Scheduling") {
        world.set_vmi_phase("Failed", false);
      }
    }
  }
  EXPECT_GE(created, 4);
  EXPECT_LE(created, 6);
  EXPECT_EQ(world.vm_status(), "CrashLoopBackOff");
}

TEST(Plan, ManualAndHaltedNeverStart) {
  for (const char* strategy : {R"("runStrategy":"Manual")", R"("running":false)"}) {
    World world;
    world.put("VirtualMachine", vm_doc(strategy));
    world.settle(settings());
    EXPECT_TRUE(world.vmis.empty()) << strategy;
    EXPECT_EQ(world.vm_status(), "Stopped") << strategy;
  }
}

TEST(Plan, APhasePatchIsConditionalOnTheVmiItSaw) {
  // The node agent writes Running from the launcher while the controller plans on its cache: the
  // controller's Scheduled must not overwrite it, so its patch carries the resourceVersion it saw.
  World world;
  world.put("VirtualMachine", vm_doc(R"("running":true)"));
  world.settle(settings());
  world.set_pod_phase("Running");
  json::Document& vmi = world.vmis.begin()->second;
  json::set_string(vmi["metadata"], "resourceVersion", "4711", vmi.GetAllocator());
  const std::vector<Action> actions = plan(world.state(), settings());
  const auto patch = std::find_if(actions.begin(), actions.end(),
                                  [](const Action& action) { return action.kind == ActionKind::patch_vmi; });
  ASSERT_NE(patch, actions.end());
  EXPECT_EQ(text(patch->body, "/status/phase"), "Scheduled");
  EXPECT_EQ(text(patch->body, "/metadata/resourceVersion"), "4711");
}

TEST(Plan, PodPhasesMoveTheVmiForwardOnly) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("running":true)"));
  world.settle(settings());
  world.set_pod_phase("Running");
  world.settle(settings());
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Scheduled");
  EXPECT_EQ(world.vm_status(), "Starting");
  world.set_pod_phase("Pending");  // never back
  world.settle(settings());
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Scheduled");
  world.set_pod_phase("Failed");
  world.step(settings());
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Failed");
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/reason"), "PodTerminated");
}

TEST(Plan, AVanishedPodFailsTheVmiUnlessItIsExpected) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Once")"));
  world.settle(settings());
  const std::string pod_key = world.pods.begin()->first;
  world.pods.clear();
  State state = world.state();
  state.expected_pods.insert(pod_key);
  for (const Action& action : plan(state, settings())) {
    EXPECT_NE(action.kind, ActionKind::create_pod);
    EXPECT_NE(action.kind, ActionKind::patch_vmi);
  }
  world.step(settings());
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Failed");
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/reason"), "PodDeleted");
}

// A replan woken by another watch's event before the VMI list shows the VMI just created (the
// race the end-to-end test caught as a 409 on a second create): not created again, the VM Starting.
TEST(Plan, AVmiCreatedButNotYetSeenIsNotCreatedAgain) {
  for (const char* strategy : {R"("runStrategy":"Always")", R"("runStrategy":"Manual")"}) {
    World world;
    world.put("VirtualMachine", vm_doc(strategy));
    world.set_requests(R"([{"action":"Start"}])");
    State state = world.state();
    state.expected_vmis.insert("ns1/vm1");
    for (const Action& action : plan(state, settings())) {
      EXPECT_NE(action.kind, ActionKind::create_vmi) << strategy;
      if (action.kind == ActionKind::patch_vm_status) {
        EXPECT_EQ(text(action.body, "/status/printableStatus"), "Starting") << strategy;
      }
    }
    state.expected_vmis.clear();
    bool created = false;
    for (const Action& action : plan(state, settings())) {
      created = created || action.kind == ActionKind::create_vmi;
    }
    EXPECT_TRUE(created) << strategy;
  }
}

TEST(Plan, OrphansAreDeleted) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(settings());
  // A pod whose VMI is gone (say, a VMI deleted by hand without its finalizer).
  json::Document stray = parse(R"({"metadata":{"name":"virt-launcher-x-abcde","namespace":"ns1","uid":"p9",
    "labels":{"kubevirt.io":"virt-launcher"},
    "ownerReferences":[{"kind":"VirtualMachineInstance","name":"x","uid":"gone","controller":true}]}})");
  world.put("Pod", std::move(stray));
  // A VMI owned by a VM that no longer exists.
  json::Document orphan = parse(R"({"metadata":{"name":"old","namespace":"ns1","uid":"v9",
    "ownerReferences":[{"kind":"VirtualMachine","name":"old","uid":"vm-gone","controller":true}]},"spec":{}})");
  world.put("VirtualMachineInstance", std::move(orphan));
  world.settle(settings());
  EXPECT_EQ(world.pods.count("ns1/virt-launcher-x-abcde"), 0U);
  EXPECT_EQ(world.vmis.count("ns1/old"), 0U);
  EXPECT_EQ(world.vmis.count("ns1/vm1"), 1U);
  EXPECT_EQ(world.pods.size(), 1U);
}

// Owner references are read in the dependent's own namespace: a pod of another namespace naming
// a VMI's uid does not fail that VMI, and a VMI naming another namespace's VM is an orphan.
TEST(Plan, OwnershipIsByNamespaceAndUid) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  world.set_pod_phase("Running");
  const std::string vmi_uid = text(world.vmis.begin()->second, "/metadata/uid");
  const std::string vm_uid = text(world.vms.begin()->second, "/metadata/uid");
  // A tenant of team-a: a launcher-labelled pod, terminated, owned by ns1's VMI's uid.
  world.put("Pod", parse(R"({"metadata":{"name":"fake","namespace":"team-a","uid":"p-fake",
    "labels":{"kubevirt.io":"virt-launcher"},
    "ownerReferences":[{"kind":"VirtualMachineInstance","name":"vm1","uid":")" +
                         vmi_uid + R"(","controller":true}]},"status":{"phase":"Failed"}})"));
  // And a VMI of team-a owned by ns1's VM's uid.
  world.put("VirtualMachineInstance", parse(R"({"metadata":{"name":"vm1","namespace":"team-a","uid":"v-fake",
    "ownerReferences":[{"kind":"VirtualMachine","name":"vm1","uid":")" +
                                            vm_uid + R"(","controller":true}]},"spec":{}})"));
  world.settle(settings());
  EXPECT_EQ(text(world.vmis.at("ns1/vm1"), "/status/phase"), "Running");
  EXPECT_EQ(text(world.vms.at("ns1/vm1"), "/status/printableStatus"), "Running");
  EXPECT_EQ(world.pods.count("team-a/fake"), 0U);  // nobody's: deleted as an orphan
  EXPECT_EQ(world.vmis.count("team-a/vm1"), 0U);   // its VM (in team-a) does not exist
  EXPECT_EQ(world.pods.size(), 1U);                // ns1's launcher pod stays
}

// Objects a broken API server might hand over without a namespace or a name are left alone, not
// turned into `DELETE /namespaces//pods/...`.
TEST(Plan, ObjectsWithoutANamespaceOrANameAreLeftAlone) {
  World world;
  world.put("Pod", parse(R"({"metadata":{"name":"","namespace":"ns1","uid":"p1",
    "ownerReferences":[{"kind":"VirtualMachineInstance","name":"x","uid":"gone","controller":true}]}})"));
  world.pods["/nameless"] = parse(R"({"metadata":{"name":"stray","uid":"p2",
    "ownerReferences":[{"kind":"VirtualMachineInstance","name":"x","uid":"gone","controller":true}]}})");
  std::vector<std::string> notes;
  EXPECT_TRUE(plan(world.state(), settings(), &notes).empty());
  ASSERT_EQ(notes.size(), 2U);
  EXPECT_EQ(notes[0], "Pod without a namespace or a name: no delete Pod");
}

TEST(Plan, AVmRecreatedUnderTheSameNameWaitsForTheOldVmi) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(settings());
  json::Document replacement = vm_doc(R"("runStrategy":"Always")");
  json::set_string(replacement["metadata"], "uid", "vm-uid-2", replacement.GetAllocator());
  world.vms.clear();
  world.put("VirtualMachine", std::move(replacement));
  world.settle(settings());
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_EQ(text(world.vmis.begin()->second, "/metadata/ownerReferences/0/uid"), "vm-uid-2");
  ASSERT_EQ(world.pods.size(), 1U);
  EXPECT_EQ(text(world.pods.begin()->second, "/metadata/ownerReferences/0/uid"),
            text(world.vmis.begin()->second, "/metadata/uid"));
}

TEST(Plan, AVmWithAFinalizerIsReleasedOnceItsVmiIsGone) {
  World world;
  world.put("VirtualMachine",
            vm_doc(R"("runStrategy":"Always")", R"(,"finalizers":["kubevirt.io/virtualMachineControllerFinalize"])"));
  world.settle(settings());
  world.request_delete(world.vms, "ns1/vm1");
  world.step(settings());
  EXPECT_EQ(world.vm_status(), "Terminating");
  world.settle(settings());
  EXPECT_TRUE(world.vms.empty());
  EXPECT_TRUE(world.vmis.empty());
  EXPECT_TRUE(world.pods.empty());
}

TEST(Plan, OnlyKubeVirtsFinalizersAreRemovedAndTheListIsTested) {
  json::Document vmi = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"v1",
    "deletionTimestamp":"2026-01-01T00:00:00Z",
    "finalizers":["example.com/keep","kubevirt.io/foregroundDeleteVirtualMachine","kubevirt.io/virtualMachineControllerFinalize"]},
    "spec":{}})");
  State state;
  state.vmis.push_back(&vmi);
  const std::vector<Action> actions = plan(state, settings());
  ASSERT_EQ(actions.size(), 1U);
  EXPECT_EQ(actions[0].kind, ActionKind::remove_finalizer);
  EXPECT_TRUE(testing::json_equals(actions[0].body, R"([
    {"op":"test","path":"/metadata/finalizers","value":["example.com/keep","kubevirt.io/foregroundDeleteVirtualMachine",
                                                        "kubevirt.io/virtualMachineControllerFinalize"]},
    {"op":"replace","path":"/metadata/finalizers","value":["example.com/keep"]}])"));
}

TEST(Plan, AVmiTheBuilderRefusesIsNotedAndNotCreated) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  PlanSettings refusing;
  refusing.build_vmi = [](const json::Value&) -> Result<json::Document> {
    return Error{"instancetype u1.medium not found"};
  };
  std::vector<std::string> notes;
  const State state = world.state();
  const std::vector<Action> actions = plan(state, refusing, &notes);
  for (const Action& action : actions) {
    EXPECT_NE(action.kind, ActionKind::create_vmi);
  }
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes[0].find("instancetype u1.medium not found"), std::string::npos);
}

TEST(Plan, PausedAndUnsupportedStrategies) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  json::Document& vmi = world.vmis.begin()->second;
  json::Value paused(rapidjson::kObjectType);
  json::set_string(paused, "type", "Paused", vmi.GetAllocator());
  json::set_string(paused, "status", "True", vmi.GetAllocator());
  vmi["status"]["conditions"].PushBack(paused, vmi.GetAllocator());
  world.settle(settings());
  EXPECT_EQ(world.vm_status(), "Paused");

  World other;
  other.put("VirtualMachine", vm_doc(R"("runStrategy":"WaitAsReceiver")"));
  std::vector<std::string> notes;
  const State state = other.state();
  (void)plan(state, settings(), &notes);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("WaitAsReceiver is not supported"), std::string::npos);
}

// The VMI the controller creates comes from the admission core's expansion: the instancetype
// and preference applied, VMI defaults, the owner reference, the generation annotation.
TEST(Plan, TheVmiComesFromTheAdmissionCoresExpansion) {
  admission::ObjectStore store;
  ASSERT_TRUE(
      store
          .add(parse(R"({"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterInstancetype",
    "metadata":{"name":"small"},"spec":{"cpu":{"guest":2},"memory":{"guest":"256Mi"}}})"))
          .ok());
  const admission::Pipeline pipeline;
  PlanSettings with_pipeline;
  with_pipeline.build_vmi = [&](const json::Value& vm) {
    return pipeline.expand(vm, json::find_string(vm["metadata"], "namespace"), "2026-01-01T00:00:00Z", store);
  };
  json::Document vm = parse(R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",
    "metadata":{"name":"vm1","namespace":"ns1","uid":"vm-uid-1","generation":4},
    "spec":{"runStrategy":"Always","instancetype":{"kind":"VirtualMachineClusterInstancetype","name":"small"},
            "template":{"spec":{"domain":{"devices":{}}}}}})");
  State state;
  state.vms.push_back(&vm);
  const std::vector<Action> actions = plan(state, with_pipeline);
  ASSERT_FALSE(actions.empty());
  ASSERT_EQ(actions[0].kind, ActionKind::create_vmi);
  const json::Document& vmi = actions[0].body;
  EXPECT_EQ(text(vmi, "/metadata/name"), "vm1");
  EXPECT_EQ(text(vmi, "/metadata/annotations/kubevirt.io~1vm-generation"), "4");
  EXPECT_EQ(text(vmi, "/metadata/annotations/kubevirt.io~1cluster-instancetype-name"), "small");
  EXPECT_EQ(text(vmi, "/metadata/ownerReferences/0/uid"), "vm-uid-1");
  EXPECT_EQ(text(vmi, "/metadata/ownerReferences/0/controller"), "true");
  EXPECT_EQ(text(vmi, "/spec/domain/cpu/sockets"), "2");
  EXPECT_EQ(text(vmi, "/spec/domain/memory/guest"), "256Mi");
}

// A VMI stored where the webhooks did not judge it (an excluded namespace, an outage): admission
// runs again before its pod is rendered, under the KubeVirt CR's gates as the cache holds them.
constexpr std::string_view gated_vmi = R"({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
  "metadata":{"name":"direct","namespace":"ns1","uid":"vmi-uid-9","resourceVersion":"7"},
  "spec":{"domain":{"memory":{"guest":"128Mi"},
                    "devices":{"autoattachVSOCK":true,"disks":[{"name":"host","disk":{"bus":"virtio"}}]}},
          "volumes":[{"name":"host","hostDisk":{"path":"/var/data/disk.img","type":"DiskOrCreate","capacity":"1Gi"}}]}})";

admission::ObjectStore cluster_with_gates(std::string_view gates) {
  admission::ObjectStore store;
  const Result<admission::ObjectKind> added = store.add(parse(R"({"apiVersion":"kubevirt.io/v1","kind":"KubeVirt",
    "metadata":{"name":"kubevirt","namespace":"kubevirt"},
    "spec":{"configuration":{"developerConfiguration":{"featureGates":)" +
                                                              std::string(gates) + "}}}}"));
  EXPECT_TRUE(added.ok()) << added.error().message;
  return store;
}

// The planner's admission, wired as the controller wires it: a VMI CREATE through the pipeline.
PlanSettings admitting(const admission::Pipeline& pipeline, const admission::ClusterView& cluster) {
  PlanSettings out = settings();
  out.pod.host_disk_enabled = cluster.config().feature_gate_enabled("HostDisk");
  out.admit_vmi = [&pipeline, &cluster](const json::Value& vmi, bool made_by_controller) {
    admission::Request request;
    request.resource = admission::Resource::virtual_machine_instance;
    request.object = &vmi;
    request.namespace_name = "ns1";
    request.from_kubevirt_service_account = made_by_controller;
    return pipeline.admit(request, cluster).verdict;
  };
  return out;
}

TEST(Plan, AVmiAdmissionDeniesGetsNoPodAndFailsOnce) {
  const admission::Pipeline pipeline;
  const admission::ObjectStore gates_off = cluster_with_gates("[]");
  World world;
  world.put("VirtualMachineInstance", parse(gated_vmi));
  std::vector<std::string> notes;
  const State state = world.state();
  const std::vector<Action> actions = plan(state, admitting(pipeline, gates_off), &notes);
  ASSERT_EQ(actions.size(), 1U);
  const Action& failed = actions[0];
  EXPECT_EQ(failed.kind, ActionKind::patch_vmi);
  EXPECT_EQ(failed.uid, "vmi-uid-9");
  EXPECT_EQ(text(failed.body, "/metadata/resourceVersion"), "7");
  EXPECT_EQ(text(failed.body, "/status/phase"), "Failed");
  EXPECT_EQ(text(failed.body, "/status/conditions/0/type"), "Synchronized");
  EXPECT_EQ(text(failed.body, "/status/conditions/0/status"), "False");
  EXPECT_EQ(text(failed.body, "/status/conditions/0/reason"), "FailedCreateValidation");
  const std::string message = text(failed.body, "/status/conditions/0/message");
  EXPECT_EQ(message,
            "failed create validation: spec.volumes[0]: HostDisk feature gate is not enabled, "
            "spec.domain.devices.autoattachVSOCK: VSOCK feature gate is not enabled in kubevirt-config");
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes[0].find("ns1/direct: not admitted, so no launcher pod: failed create validation: "),
            std::string::npos)
      << notes[0];

  // Bounded: once Failed, nothing more is written for it.
  world.settle(admitting(pipeline, gates_off));
  EXPECT_TRUE(world.pods.empty());
  EXPECT_EQ(world.log, std::vector<std::string>{"patch VirtualMachineInstance direct"});
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Failed");
}

TEST(Plan, AVmiAdmissionAllowsGetsItsPodUnchanged) {
  const admission::Pipeline pipeline;
  const admission::ObjectStore gates_on = cluster_with_gates(R"(["HostDisk","VSOCK"])");
  World world;
  world.put("VirtualMachineInstance", parse(gated_vmi));
  std::vector<std::string> notes;
  const State state = world.state();
  const std::vector<Action> actions = plan(state, admitting(pipeline, gates_on), &notes);
  EXPECT_TRUE(notes.empty()) << notes[0];
  ASSERT_EQ(actions.size(), 2U);
  EXPECT_EQ(actions[0].kind, ActionKind::create_pod);
  EXPECT_EQ(text(actions[1].body, "/status/phase"), "Scheduling");
  // The pod carries the VMI as stored, not the admission core's mutation of it.
  const Result<json::Document> unjudged = launcher_pod(world.vmis.begin()->second, admitting(pipeline, gates_on).pod);
  ASSERT_TRUE(unjudged.ok()) << unjudged.error().message;
  EXPECT_TRUE(json::equal(actions[0].body, *unjudged));
}

// The VMIs this controller creates from VMs pass (they are the expansion of an admitted VM), and
// a failure of one follows the VM's run strategy like any other.
TEST(Plan, TheControllersOwnVmisPassAdmission) {
  const admission::Pipeline pipeline;
  const admission::ObjectStore gates_off = cluster_with_gates("[]");
  PlanSettings with_admission = admitting(pipeline, gates_off);
  with_admission.build_vmi = [&](const json::Value& vm) {
    return pipeline.expand(vm, json::find_string(vm["metadata"], "namespace"), "2026-01-01T00:00:00Z", gates_off);
  };
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(with_admission);
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_EQ(world.pods.size(), 1U);
  EXPECT_EQ(text(world.vmis.begin()->second, "/status/phase"), "Scheduling");
}

}  // namespace
}  // namespace vmgate::controller

namespace vmgate::controller {
namespace {

// State change requests (virtctl start, stop, restart through virt-api's subresources), as
// vm.go's syncRunStrategy and updateStatus act on them: only the first counts.

// virtctl restart of an Always VM: [Stop uid, Start]. The VMI goes; once it is gone the Stop is
// dropped and the strategy starts a new VMI; once that VMI is seen the Start is dropped.
TEST(StateChangeRequests, RestartOfAnAlwaysVm) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  const std::string old_uid = world.vmi_uid();
  const std::string restart = R"([{"action":"Stop","uid":")" + old_uid + R"("},{"action":"Start"}])";
  world.set_requests(restart);

  world.step(settings());
  EXPECT_EQ(world.log.back(), "patch VirtualMachine status vm1");
  EXPECT_NE(std::find(world.log.begin(), world.log.end(), "delete VirtualMachineInstance vm1"), world.log.end());
  EXPECT_EQ(world.vm_status(), "Stopping");
  EXPECT_EQ(world.requests(), testing::dump(parse(restart)));  // the Stop stays while the VMI is there

  world.step_until_vmi_gone(settings());
  ASSERT_TRUE(world.vmis.empty());
  EXPECT_EQ(world.requests(), testing::dump(parse(restart)));

  world.log.clear();
  world.step(settings());
  EXPECT_EQ(world.log.front(), "create VirtualMachineInstance vm1");
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_NE(world.vmi_uid(), old_uid);
  EXPECT_EQ(world.requests(), R"([{"action":"Start"}])");

  world.settle(settings());
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  EXPECT_EQ(world.requests(), "none");
  EXPECT_EQ(world.vm_status(), "Running");
  EXPECT_EQ(world.vmis.size(), 1U);
}

// virtctl start and stop of a Manual VM: [Start] starts it, [Stop uid] deletes the VMI; each is
// dropped once done. A restart ([Stop uid, Start]) of a Manual VM starts once the Stop is gone.
TEST(StateChangeRequests, StartAndStopOfAManualVm) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Manual")"));
  world.settle(settings());
  EXPECT_TRUE(world.vmis.empty());

  world.set_requests(R"([{"action":"Start"}])");
  world.log.clear();
  world.step(settings());
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_EQ(world.log.front(), "create VirtualMachineInstance vm1");
  EXPECT_EQ(world.requests(), R"([{"action":"Start"}])");  // until the VMI is seen
  world.settle(settings());
  EXPECT_EQ(world.requests(), "none");
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  EXPECT_EQ(world.vm_status(), "Running");

  world.set_requests(R"([{"action":"Stop","uid":")" + world.vmi_uid() + R"("}])");
  world.step(settings());
  EXPECT_EQ(world.vm_status(), "Stopping");
  world.settle(settings());
  EXPECT_TRUE(world.vmis.empty());
  EXPECT_EQ(world.requests(), "none");
  EXPECT_EQ(world.vm_status(), "Stopped");

  // Restart.
  world.set_requests(R"([{"action":"Start"}])");
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  world.set_requests(R"([{"action":"Stop","uid":")" + world.vmi_uid() + R"("},{"action":"Start"}])");
  world.step_until_vmi_gone(settings());
  ASSERT_TRUE(world.vmis.empty());
  world.log.clear();
  world.step(settings());  // no VMI: the Stop goes, nothing starts yet (the Start is not first)
  EXPECT_TRUE(world.vmis.empty());
  EXPECT_EQ(world.requests(), R"([{"action":"Start"}])");
  world.step(settings());
  EXPECT_EQ(world.vmis.size(), 1U);
  world.settle(settings());
  EXPECT_EQ(world.requests(), "none");
}

// A Start on a Halted VM (virtctl start --paused; virt-api patches a plain start itself): the
// spec is set to run, with a JSON patch that tests the value it replaces; then the VMI starts,
// paused as asked.
TEST(StateChangeRequests, AHaltedVmIsSetToRunByAStartRequest) {
  struct Case {
    const char* strategy;
    const char* path;
    const char* value;
  };
  for (const Case& each : {Case{R"("runStrategy":"Halted")", "/spec/runStrategy", "Always"},
                           Case{R"("running":false)", "/spec/running", "true"}}) {
    World world;
    world.put("VirtualMachine", vm_doc(each.strategy));
    world.settle(settings());
    world.set_requests(R"([{"action":"Start","data":{"paused":"true"}}])");

    std::vector<Action> actions = plan(world.state(), settings());
    ASSERT_FALSE(actions.empty()) << each.strategy;
    EXPECT_EQ(actions[0].kind, ActionKind::patch_vm_spec) << each.strategy;
    EXPECT_EQ(testing::dump(actions[0].body),
              R"([{"op":"test","path":"/metadata/uid","value":"vm-uid-1"},{"op":"test","path":")" +
                  std::string(each.path) + R"(","value":)" +
                  (each.path == std::string("/spec/running") ? "false" : R"("Halted")") +
                  R"(},{"op":"replace","path":")" + each.path + R"(","value":)" +
                  (each.path == std::string("/spec/running") ? "true" : R"("Always")") + "}]")
        << each.strategy;
    // Someone changed the field since: the patch fails instead of overwriting it.
    json::Document edited;
    edited.CopyFrom(world.vms.begin()->second, edited.GetAllocator());
    json::set_string(edited["spec"], "runStrategy", "Manual", edited.GetAllocator());
    json::erase(edited["spec"], "running");
    EXPECT_FALSE(testing::apply_patch(edited, actions[0].body)) << each.strategy;

    world.step(settings());
    EXPECT_EQ(text(world.vms.begin()->second, each.path), each.value) << each.strategy;
    EXPECT_TRUE(world.vmis.empty());
    world.step(settings());
    ASSERT_EQ(world.vmis.size(), 1U) << each.strategy;
    EXPECT_EQ(text(world.vmis.begin()->second, "/spec/startStrategy"), "Paused") << each.strategy;
    world.settle(settings());
    EXPECT_EQ(world.requests(), "none") << each.strategy;
    EXPECT_EQ(world.conflicts, 0) << each.strategy;
  }
}

// A VM that uses neither field gets running: true, tested against its resourceVersion.
TEST(StateChangeRequests, AHaltedVmWithoutEitherFieldGetsRunning) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("template":{})", R"(,"resourceVersion":"7")"));
  json::erase(world.vms.begin()->second["spec"], "template");
  world.set_requests(R"([{"action":"Start"}])");
  std::vector<Action> actions = plan(world.state(), settings());
  ASSERT_FALSE(actions.empty());
  EXPECT_EQ(testing::dump(actions[0].body), R"([{"op":"test","path":"/metadata/uid","value":"vm-uid-1"},)"
                                            R"({"op":"test","path":"/metadata/resourceVersion","value":"7"},)"
                                            R"({"op":"add","path":"/spec/running","value":true}])");
}

// A Stop for another VMI (an earlier one), or without a uid, is dropped and stops nothing; a Stop
// with no VMI is dropped; a Start while the VMI runs is dropped.
TEST(StateChangeRequests, MootRequestsAreDropped) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Always")"));
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  const std::string uid = world.vmi_uid();

  world.set_requests(R"([{"action":"Stop","uid":"an-earlier-vmi"},{"action":"Start"}])");
  world.log.clear();
  world.step(settings());
  EXPECT_EQ(world.log, std::vector<std::string>{"patch VirtualMachine status vm1"});
  EXPECT_EQ(world.requests(), R"([{"action":"Start"}])");
  world.step(settings());
  EXPECT_EQ(world.requests(), "none");
  EXPECT_EQ(world.vmi_uid(), uid);

  world.set_requests(R"([{"action":"Stop"}])");
  world.settle(settings());
  EXPECT_EQ(world.requests(), "none");
  EXPECT_EQ(world.vmi_uid(), uid);
  EXPECT_EQ(world.vm_status(), "Running");

  World manual;
  manual.put("VirtualMachine", vm_doc(R"("runStrategy":"Manual")"));
  manual.set_requests(R"([{"action":"Stop","uid":"gone"},{"action":"Stop","uid":"gone-too"}])");
  manual.step(settings());
  EXPECT_EQ(manual.requests(), R"([{"action":"Stop","uid":"gone-too"}])");  // one a plan
  manual.settle(settings());
  EXPECT_EQ(manual.requests(), "none");
  EXPECT_TRUE(manual.vmis.empty());
}

// The status patch that rewrites the requests is conditional on the VM it was planned from, and
// writes the whole list (null when empty); other status patches are not conditional.
TEST(StateChangeRequests, TheRewriteCarriesTheResourceVersion) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Manual")", R"(,"resourceVersion":"42")"));
  world.set_requests(R"([{"action":"Stop","uid":"gone"},{"action":"Start","data":{"paused":"true"}}])");
  std::vector<Action> actions = plan(world.state(), settings());
  ASSERT_EQ(actions.size(), 1U);
  EXPECT_EQ(actions[0].kind, ActionKind::patch_vm_status);
  EXPECT_EQ(text(actions[0].body, "/metadata/resourceVersion"), "42");
  EXPECT_EQ(testing::dump(actions[0].body["status"]["stateChangeRequests"]),
            R"([{"action":"Start","data":{"paused":"true"}}])");

  world.set_requests(R"([{"action":"Stop","uid":"gone"}])");
  actions = plan(world.state(), settings());
  ASSERT_EQ(actions.size(), 1U);
  EXPECT_EQ(text(actions[0].body, "/metadata/resourceVersion"), "42");
  EXPECT_TRUE(actions[0].body["status"]["stateChangeRequests"].IsNull());

  json::erase(world.vms.begin()->second["status"], "stateChangeRequests");
  actions = plan(world.state(), settings());
  ASSERT_EQ(actions.size(), 1U);  // the status itself, first written
  EXPECT_EQ(text(actions[0].body, "/metadata/resourceVersion"), "<absent>");
  EXPECT_FALSE(json::has(actions[0].body["status"], "stateChangeRequests"));
}

// virtctl stop while the controller drops a done Start (virt-api replaces the list by [Stop uid]):
// the controller's rewrite, planned from the older VM, is refused and the Stop is kept and acted on.
TEST(StateChangeRequests, AStopWrittenMeanwhileIsNotLost) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"Manual")", R"(,"resourceVersion":"1")"));
  world.set_requests(R"([{"action":"Start"}])");
  world.step(settings());  // creates the VMI; the Start stays until the VMI is seen
  ASSERT_EQ(world.vmis.size(), 1U);
  std::vector<Action> actions = plan(world.state(), settings());  // its pod; drops the Start
  const std::string stop = R"([{"action":"Stop","uid":")" + world.vmi_uid() + R"("}])";
  world.set_requests(stop);  // virt-api, before the controller's write lands
  json::set_string(world.vms.begin()->second["metadata"], "resourceVersion", "2",
                   world.vms.begin()->second.GetAllocator());
  world.apply(actions);
  EXPECT_EQ(world.conflicts, 1);
  EXPECT_EQ(world.requests(), stop);
  world.step(settings());  // planned again from the newer VM
  EXPECT_EQ(world.vm_status(), "Stopping");
  world.settle(settings());
  EXPECT_TRUE(world.vmis.empty());
  EXPECT_EQ(world.requests(), "none");
}

// isVirtualMachineStatusStopping: a Stop for the VMI makes the VM Stopping under the strategies
// that act on it; Once does not.
TEST(StateChangeRequests, AStopForTheVmiShowsStopping) {
  const json::Document vmi = parse(R"({"metadata":{"name":"vm1","namespace":"ns1","uid":"vmi-uid"},
    "status":{"phase":"Running"}})");
  for (const char* strategy : {"Always", "RerunOnFailure", "Manual", "Once"}) {
    json::Document vm = vm_doc(R"("runStrategy":")" + std::string(strategy) + R"(")");
    auto& a = vm.GetAllocator();
    json::set(json::ensure_object(vm, "status", a), "stateChangeRequests",
              json::copy(parse(R"([{"action":"Stop","uid":"vmi-uid"}])"), a), a);
    EXPECT_EQ(text(vm_status(vm, &vmi, false, "2026-01-01T00:00:00Z"), "/printableStatus"),
              std::string(strategy) == "Once" ? "Running" : "Stopping")
        << strategy;
    json::set(vm["status"], "stateChangeRequests", json::copy(parse(R"([{"action":"Stop","uid":"other"}])"), a), a);
    EXPECT_EQ(text(vm_status(vm, &vmi, false, "2026-01-01T00:00:00Z"), "/printableStatus"), "Running") << strategy;
  }
}

// RerunOnFailure after a failure: the Start request (addStartRequest) is stored before the VMI
// goes, then the VMI is deleted and a new one started, and the Start dropped once it is seen.
TEST(StateChangeRequests, RerunOnFailureStoresItsStartBeforeTheDelete) {
  World world;
  world.put("VirtualMachine", vm_doc(R"("runStrategy":"RerunOnFailure")"));
  world.settle(settings());
  world.set_vmi_phase("Running", true);
  world.settle(settings());
  world.set_vmi_phase("Failed", false);
  world.log.clear();
  world.step(settings());
  EXPECT_EQ(std::find(world.log.begin(), world.log.end(), "delete VirtualMachineInstance vm1"), world.log.end());
  EXPECT_EQ(world.requests(), R"([{"action":"Start"}])");
  world.step(settings());
  EXPECT_EQ(world.log.back(), "delete VirtualMachineInstance vm1");
  world.settle(settings());
  ASSERT_EQ(world.vmis.size(), 1U);
  EXPECT_EQ(world.requests(), "none");
}

}  // namespace
}  // namespace vmgate::controller
