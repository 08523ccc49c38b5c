// The subresources.kubevirt.io decisions against KubeVirt v1.8.2's virt-api (lifecycle.go,
// authorizer.go, console.go): routes, the access review, start/stop/restart plans and the
// pause, unpause and console checks.
#include "vmgate/server/subresource_api.hpp"

#include <gtest/gtest.h>

#include "support/json_test_support.hpp"

namespace vmgate::subresources {
namespace {

using testing::parse;

ObjectRequest object_route(std::string_view method, std::string_view target) {
  Result<Route, ApiStatus> routed = route(method, target);
  EXPECT_TRUE(routed.ok()) << (routed.ok() ? "" : routed.error().message);
  return std::get<ObjectRequest>(routed->what);
}

TEST(SubresourceRoute, NamesTheObjectAndTheVerb) {
  const ObjectRequest start =
      object_route("PUT", "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachines/vm-1/start");
  EXPECT_EQ(start.namespace_, "vms");
  EXPECT_EQ(start.resource, "virtualmachines");
  EXPECT_EQ(start.name, "vm-1");
  EXPECT_EQ(start.subresource, "start");
  EXPECT_EQ(start.verb, "update");
  EXPECT_EQ(action_of(start), Action::start);
  const ObjectRequest console =
      object_route("GET", "/apis/subresources.kubevirt.io/v1alpha3/namespaces/vms/virtualmachineinstances/a.b/console");
  EXPECT_EQ(console.verb, "get");
  EXPECT_EQ(action_of(console), Action::console);
  const ObjectRequest screenshot =
      object_route("GET", "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/x/vnc/screenshot");
  EXPECT_EQ(screenshot.subresource, "vnc/screenshot");
  EXPECT_EQ(action_of(screenshot), Action::not_served);
  const ObjectRequest forward = object_route(
      "GET", "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/x/portforward/22/tcp");
  EXPECT_EQ(forward.subresource, "portforward");
}

TEST(SubresourceRoute, DiscoveryAndHealthNeedNoObject) {
  EXPECT_EQ(std::get<Discovery>(route("GET", "/apis")->what), Discovery::apis);
  EXPECT_EQ(std::get<Discovery>(route("GET", "/apis/subresources.kubevirt.io")->what), Discovery::group);
  const Result<Route, ApiStatus> version = route("GET", "/apis/subresources.kubevirt.io/v1");
  EXPECT_EQ(std::get<Discovery>(version->what), Discovery::group_version);
  EXPECT_EQ(version->version, "v1");
  EXPECT_EQ(std::get<Discovery>(route("GET", "/healthz")->what), Discovery::healthz);
  EXPECT_EQ(std::get<Discovery>(route("GET", "/apis/subresources.kubevirt.io/v1/version")->what), Discovery::version);
  EXPECT_EQ(testing::text(parse(discovery_json(Discovery::version, "v1")), "/gitVersion"), "v1.8.2");
  const json::Document list = parse(discovery_json(Discovery::group_version, "v1"));
  EXPECT_EQ(testing::text(list, "/kind"), "APIResourceList");
  EXPECT_EQ(testing::text(list, "/groupVersion"), "subresources.kubevirt.io/v1");
  bool console = false;
  for (const json::Value& resource : list["resources"].GetArray()) {
    console = console || json::find_string(resource, "name") == "virtualmachineinstances/console";
  }
  EXPECT_TRUE(console);
  EXPECT_EQ(testing::text(parse(discovery_json(Discovery::group, "")), "/preferredVersion/version"), "v1");
}

TEST(SubresourceRoute, RefusesWhatIsNotTheGroupsOrMalformed) {
  EXPECT_EQ(route("GET", "/apis/kubevirt.io/v1").error().code, 404);
  EXPECT_EQ(route("PUT", "/apis/subresources.kubevirt.io/v1/namespaces/vms/pods/p/start").error().code, 404);
  EXPECT_EQ(route("PUT", "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachines/vm/launch").error().code,
            404);
  EXPECT_EQ(route("GET", "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachines/vm/start").error().code,
            405);
  EXPECT_EQ(
      route("PUT", "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/v/console").error().code,
      405);
  EXPECT_EQ(route("PUT", "/apis/subresources.kubevirt.io/v1/namespaces/VMS/virtualmachines/vm/start").error().code,
            400);
  EXPECT_EQ(route("PUT", "/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachines/..%2f/start").error().code,
            400);
  EXPECT_EQ(route("PUT", "/apis/subresources.kubevirt.io/v9/namespaces/vms/virtualmachines/vm/start").error().code,
            404);
}

TEST(AccessReview, IdentityFromTheAggregatorsHeaders) {
  const std::vector<HeaderField> headers{{"x-remote-user", "alice"},
                                         {"X-Remote-Group", "team-a"},
                                         {"X-Remote-Group", "system:authenticated"},
                                         {"X-Remote-Extra-Scopes%2fone", "s1"},
                                         {"X-Remote-Extra-Scopes%2fone", "s2"},
                                         {"X-Other", "x"}};
  Result<Identity> identity = identity_from_headers(headers, HeaderNames{});
  ASSERT_TRUE(identity.ok());
  EXPECT_EQ(identity->user, "alice");
  EXPECT_EQ(identity->groups, (std::vector<std::string>{"team-a", "system:authenticated"}));
  ASSERT_EQ(identity->extra.size(), 1U);
  EXPECT_EQ(identity->extra[0].first, "scopes/one");
  EXPECT_EQ(identity->extra[0].second, (std::vector<std::string>{"s1", "s2"}));

  const ObjectRequest request =
      object_route("GET", "/apis/subresources.kubevirt.io/v1/namespaces/team-a/virtualmachineinstances/vm/console");
  const json::Document review = parse(access_review_json(*identity, request));
  EXPECT_EQ(testing::text(review, "/kind"), "SubjectAccessReview");
  EXPECT_EQ(testing::text(review, "/spec/user"), "alice");
  EXPECT_EQ(testing::text(review, "/spec/resourceAttributes/namespace"), "team-a");
  EXPECT_EQ(testing::text(review, "/spec/resourceAttributes/verb"), "get");
  EXPECT_EQ(testing::text(review, "/spec/resourceAttributes/group"), "subresources.kubevirt.io");
  EXPECT_EQ(testing::text(review, "/spec/resourceAttributes/resource"), "virtualmachineinstances");
  EXPECT_EQ(testing::text(review, "/spec/resourceAttributes/subresource"), "console");
  EXPECT_EQ(testing::text(review, "/spec/resourceAttributes/name"), "vm");
  EXPECT_EQ(testing::text(review, "/spec/extra/scopes~1one/1"), "s2");
}

TEST(AccessReview, UserAndGroupHeadersAreRequired) {
  EXPECT_EQ(identity_from_headers({{"X-Remote-Group", "g"}}, HeaderNames{}).error().message,
            "a valid user header is required for authorization");
  EXPECT_EQ(identity_from_headers({{"X-Remote-User", "u"}}, HeaderNames{}).error().message,
            "a valid group header is required for authorization");
  HeaderNames custom;
  custom.user = {"X-User"};
  EXPECT_FALSE(identity_from_headers({{"X-Remote-User", "u"}, {"X-Remote-Group", "g"}}, custom).ok());
}

TEST(RequestOptions, BodiesAsVirtctlSendsThem) {
  EXPECT_TRUE(parse_options(Action::start, R"({"paused":true})")->paused);
  EXPECT_EQ(*parse_options(Action::stop, R"({"gracePeriod":0,"dryRun":["All"]})")->grace_period, 0);
  EXPECT_EQ(parse_options(Action::stop, R"({"gracePeriod":0,"dryRun":["All"]})")->dry_run.front(), "All");
  EXPECT_FALSE(parse_options(Action::pause, "")->grace_period);
  EXPECT_EQ(parse_options(Action::stop, "gracePeriod: 5\n")->grace_period, 5);
  const ApiStatus wrong = parse_options(Action::stop, R"({"gracePeriod":"soon"})").error();
  EXPECT_EQ(wrong.code, 400);
  EXPECT_EQ(wrong.message,
            "Can not unmarshal Request body to struct, error: json: cannot unmarshal string into Go struct field "
            "StopOptions.gracePeriod of type int64");
  EXPECT_EQ(parse_options(Action::restart, R"({"gracePeriodSeconds":5})").error().message,
            "For force restart, only gracePeriod=0 is supported for now");
  EXPECT_EQ(parse_options(Action::restart, R"({"gracePeriodSeconds":-1})").error().message,
            "gracePeriod has to be greater or equal to 0");
  EXPECT_EQ(parse_options(Action::start, "[1]").error().code, 400);
}

const char* const halted_vm = R"({"metadata":{"name":"vm","namespace":"vms","uid":"vm-uid"},
  "spec":{"runStrategy":"Halted","template":{"spec":{}}},"status":{"printableStatus":"Stopped"}})";
const char* const running_vmi = R"({"metadata":{"name":"vm","uid":"vmi-uid"},
  "spec":{"terminationGracePeriodSeconds":180},"status":{"phase":"Running"}})";

std::string vm_with(std::string_view strategy, std::string_view status = R"({"printableStatus":"Running"})") {
  return R"({"metadata":{"name":"vm","uid":"vm-uid"},"spec":{"runStrategy":")" + std::string(strategy) +
         R"(","template":{"spec":{}}},"status":)" + std::string(status) + "}";
}

TEST(VmLifecycle, StartHaltedSetsAlwaysGuardedByATest) {
  const LifecyclePlan plan = plan_start(parse(halted_vm), nullptr, {});
  ASSERT_FALSE(plan.error);
  ASSERT_EQ(plan.writes.size(), 1U);
  EXPECT_EQ(plan.writes[0].target, ApiWrite::Target::vm);
  EXPECT_EQ(plan.writes[0].json_patch, R"([{"op":"test","path":"/spec/runStrategy","value":"Halted"},)"
                                       R"({"op":"replace","path":"/spec/runStrategy","value":"Always"}])");
}

TEST(VmLifecycle, StartOfTheDeprecatedRunningField) {
  const LifecyclePlan plan =
      plan_start(parse(R"({"metadata":{"name":"vm"},"spec":{"running":false},"status":{"ready":true}})"), nullptr, {});
  ASSERT_EQ(plan.writes.size(), 1U);
  EXPECT_EQ(plan.writes[0].json_patch, R"([{"op":"test","path":"/spec/running","value":false},)"
                                       R"({"op":"replace","path":"/spec/running","value":true}])");
  EXPECT_EQ(
      plan_start(parse(R"({"metadata":{"name":"vm"},"spec":{"running":false,"runStrategy":"Always"}})"), nullptr, {})
          .error->message,
      "Internal error occurred: running and runstrategy are mutually exclusive");
}

TEST(VmLifecycle, StartingARunningVmIsAConflict) {
  const LifecyclePlan plan =
      plan_start(parse(vm_with("Always")), &static_cast<const json::Value&>(parse(running_vmi)), {});
  ASSERT_TRUE(plan.error);
  EXPECT_EQ(plan.error->code, 409);
  EXPECT_EQ(plan.error->message,
            R"(Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm": VM is already running)");
  EXPECT_TRUE(plan.writes.empty());
  EXPECT_EQ(status_json(*plan.error),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be )"
            R"(fulfilled on virtualmachine.kubevirt.io \"vm\": VM is already running","reason":"Conflict",)"
            R"("details":{"name":"vm","group":"kubevirt.io","kind":"virtualmachine"},"code":409})");
  EXPECT_EQ(
      plan_start(parse(vm_with("Always")), nullptr, {}).error->message,
      R"(Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm": Always does not support manual start requests)");
}

TEST(VmLifecycle, StartManualAddsAStartRequest) {
  const LifecyclePlan plan = plan_start(parse(vm_with("Manual", R"({"printableStatus":"Stopped"})")), nullptr, {});
  ASSERT_EQ(plan.writes.size(), 1U);
  EXPECT_EQ(plan.writes[0].target, ApiWrite::Target::vm_status);
  EXPECT_EQ(plan.writes[0].json_patch,
            R"([{"op":"test","path":"/status/stateChangeRequests","value":null},)"
            R"({"op":"add","path":"/status/stateChangeRequests","value":[{"action":"Start"}]}])");
  // No status at all: the whole status is added.
  const LifecyclePlan empty = plan_start(parse(R"({"metadata":{"name":"vm"},"spec":{"runStrategy":"Manual"}})"),
                                         nullptr, RequestOptions{true, std::nullopt, {}});
  EXPECT_EQ(
      empty.writes[0].json_patch,
      R"([{"op":"add","path":"/status","value":{"stateChangeRequests":[{"action":"Start","data":{"paused":"true"}}]}}])");
  // A request already pending: the list cannot take another start.
  const LifecyclePlan busy =
      plan_start(parse(vm_with("Manual", R"({"stateChangeRequests":[{"action":"Start"}]})")), nullptr, {});
  EXPECT_EQ(busy.error->message, "Internal error occurred: unable to complete request: stop/start already underway");
}

TEST(VmLifecycle, StartRerunOnFailure) {
  const json::Document failed = parse(R"({"metadata":{"name":"vm","uid":"u1"},"status":{"phase":"Failed"}})");
  EXPECT_EQ(
      plan_start(parse(vm_with("RerunOnFailure")), &static_cast<const json::Value&>(failed), {}).error->message,
      R"(Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm": RerunOnFailure does not support starting VM from failed state)");
  const json::Document succeeded = parse(R"({"metadata":{"name":"vm","uid":"u1"},"status":{"phase":"Succeeded"}})");
  const LifecyclePlan plan =
      plan_start(parse(vm_with("RerunOnFailure", R"({"startFailure":{"consecutiveFailCount":1}})")),
                 &static_cast<const json::Value&>(succeeded), {});
  EXPECT_EQ(
      plan.writes[0].json_patch,
      R"([{"op":"test","path":"/status/stateChangeRequests","value":null},)"
      R"({"op":"add","path":"/status/stateChangeRequests","value":[{"action":"Stop","uid":"u1"},{"action":"Start"}]},)"
      R"({"op":"remove","path":"/status/startFailure"}])");
}

TEST(VmLifecycle, StopByStrategy) {
  const json::Document vmi = parse(running_vmi);
  const LifecyclePlan always = plan_stop(parse(vm_with("Always")), &static_cast<const json::Value&>(vmi), {});
  EXPECT_EQ(always.writes[0].json_patch, R"([{"op":"test","path":"/spec/runStrategy","value":"Always"},)"
                                         R"({"op":"replace","path":"/spec/runStrategy","value":"Halted"}])");
  const LifecyclePlan manual = plan_stop(parse(vm_with("Manual")), &static_cast<const json::Value&>(vmi), {});
  EXPECT_EQ(manual.writes[0].target, ApiWrite::Target::vm_status);
  EXPECT_NE(manual.writes[0].json_patch.find(R"({"action":"Stop","uid":"vmi-uid"})"), std::string::npos);
  EXPECT_EQ(plan_stop(parse(vm_with("Manual")), nullptr, {}).error->message,
            R"(Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm": VM is not running)");
  EXPECT_EQ(plan_stop(parse(halted_vm), nullptr, {}).error->message,
            R"(Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm": VM is not running)");
}

TEST(VmLifecycle, ForcedStopPatchesTheGracePeriodFirst) {
  const json::Document vmi = parse(running_vmi);
  RequestOptions force;
  force.grace_period = 0;
  const LifecyclePlan plan = plan_stop(parse(vm_with("Always")), &static_cast<const json::Value&>(vmi), force);
  ASSERT_EQ(plan.writes.size(), 2U);
  EXPECT_EQ(plan.writes[0].target, ApiWrite::Target::vmi);
  EXPECT_EQ(plan.writes[0].json_patch, R"([{"op":"test","path":"/spec/terminationGracePeriodSeconds","value":180},)"
                                       R"({"op":"replace","path":"/spec/terminationGracePeriodSeconds","value":0}])");
  // Halted with a VMI still stopping: only a shorter grace period is taken, after the VMI patch.
  RequestOptions longer;
  longer.grace_period = 300;
  const LifecyclePlan halted = plan_stop(parse(halted_vm), &static_cast<const json::Value&>(vmi), longer);
  EXPECT_EQ(halted.writes.size(), 1U);
  EXPECT_EQ(halted.error->message, R"(Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm": Halted only )"
                                   R"(supports manual stop requests with a shorter graceperiod)");
  const LifecyclePlan shorter = plan_stop(parse(halted_vm), &static_cast<const json::Value&>(vmi), force);
  EXPECT_FALSE(shorter.error);
  EXPECT_EQ(shorter.writes.size(), 2U);
}

TEST(VmLifecycle, Restart) {
  const json::Document vmi = parse(running_vmi);
  const LifecyclePlan plan = plan_restart(parse(vm_with("Always")), &static_cast<const json::Value&>(vmi), {});
  EXPECT_EQ(
      plan.writes[0].json_patch,
      R"([{"op":"test","path":"/status/stateChangeRequests","value":null},)"
      R"({"op":"add","path":"/status/stateChangeRequests","value":[{"action":"Stop","uid":"vmi-uid"},{"action":"Start"}]}])");
  EXPECT_FALSE(plan.delete_launcher_pod);
  RequestOptions force;
  force.grace_period = 0;
  EXPECT_TRUE(plan_restart(parse(vm_with("Always")), &static_cast<const json::Value&>(vmi), force).delete_launcher_pod);
  EXPECT_EQ(
      plan_restart(parse(halted_vm), nullptr, {}).error->message,
      R"(Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm": RunStategy Halted does not support manual restart requests)");
  EXPECT_EQ(plan_restart(parse(vm_with("Always")), nullptr, {}).error->message,
            R"(Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm": VM is not running: Halted)");
}

TEST(VmiLifecycle, PauseUnpauseConsole) {
  const json::Document running = parse(running_vmi);
  EXPECT_FALSE(check_pause(running));
  EXPECT_EQ(check_unpause(running)->message,
            R"(Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "vm": VMI is not paused)");
  const json::Document paused = parse(R"({"metadata":{"name":"vm"},"status":{"phase":"Running",
      "conditions":[{"type":"Paused","status":"True","reason":"PausedByUser"}]}})");
  EXPECT_EQ(check_pause(paused)->message,
            R"(Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "vm": VMI is already paused)");
  EXPECT_FALSE(check_unpause(paused));
  const json::Document probed =
      parse(R"({"metadata":{"name":"vm"},"spec":{"livenessProbe":{}},"status":{"phase":"Running"}})");
  EXPECT_EQ(check_pause(probed)->code, 403);
  const json::Document scheduling = parse(R"({"metadata":{"name":"vm"},"status":{"phase":"Scheduling"}})");
  EXPECT_EQ(check_pause(scheduling)->message,
            R"(Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "vm": VM is not running)");
  EXPECT_EQ(check_console(scheduling)->message, "VMI is not running");
  EXPECT_EQ(check_console(scheduling)->code, 400);
  EXPECT_FALSE(check_console(running));
  EXPECT_EQ(check_console(parse(R"({"metadata":{"name":"vm"},"status":{"phase":"Failed"}})"))->code, 409);
  EXPECT_EQ(check_console(parse(R"({"spec":{"domain":{"devices":{"autoattachSerialConsole":false}}},
                                   "status":{"phase":"Running"}})"))
                ->message,
            "No serial consoles are present.");
  EXPECT_EQ(
      check_unpause_vm(&static_cast<const json::Value&>(parse(R"({"status":{"snapshotInProgress":"snap"}})")), "vm")
          ->message,
      R"(Operation cannot be fulfilled on virtualmachine.kubevirt.io "vm": VM snapshot is in progress)");
  EXPECT_FALSE(check_unpause_vm(nullptr, "vm"));
}

}  // namespace
}  // namespace vmgate::subresources
