// The subresource endpoint's decisions: what a request asks, who may ask, which launcher answers,
// and how the launcher's line becomes HTTP.
#include "vmgate/node/subresource_request.hpp"

#include <gtest/gtest.h>

#include <array>

namespace vmgate::node {
namespace {

constexpr std::string_view uid = "6d3f0a2b-8c4e-4b7a-9f1d-2e5c7a9b0c11";
constexpr std::string_view base = "/v1/namespaces/tenant/virtualmachineinstances/vm1";

Result<SubresourceTarget, SubresourceReply> parse(std::string_view method, const std::string& target,
                                                  std::string_view header = uid, bool upgrade = false) {
  return parse_subresource_request(method, target, header, upgrade);
}

TEST(SubresourceRequest, PauseUnpauseAndConsole) {
  Result<SubresourceTarget, SubresourceReply> pause = parse("PUT", std::string(base) + "/pause");
  ASSERT_TRUE(pause.ok()) << pause.error().body;
  EXPECT_EQ(*pause, (SubresourceTarget{SubresourceAction::pause, "tenant", "vm1", std::string(uid)}));
  EXPECT_EQ(parse("PUT", std::string(base) + "/unpause?dryRun=All")->action, SubresourceAction::unpause);
  EXPECT_EQ(parse("GET", std::string(base) + "/console", uid, true)->action, SubresourceAction::console);
}

TEST(SubresourceRequest, Refusals) {
  struct Case {
    std::string method;
    std::string target;
    std::string_view header;
    bool upgrade;
    unsigned status;
  };
  for (const Case& c : {
           Case{"PUT", "/v1/namespaces/tenant/virtualmachineinstances/vm1/restart", uid, false, 404},
           Case{"PUT", "/v1/namespaces/tenant/virtualmachineinstances/vm1", uid, false, 404},
           Case{"PUT", "/v1/namespaces/tenant/virtualmachineinstances/vm1/pause/x", uid, false, 404},
           Case{"PUT", "/v1/namespaces//virtualmachineinstances/vm1/pause", uid, false, 404},
           Case{"PUT", "/v1/namespaces/Tenant/virtualmachineinstances/vm1/pause", uid, false, 404},
           Case{"PUT", "/v1/namespaces/../virtualmachineinstances/vm1/pause", uid, false, 404},
           Case{"PUT", "/v2/namespaces/tenant/virtualmachineinstances/vm1/pause", uid, false, 404},
           Case{"PUT", "v1/namespaces/tenant/virtualmachineinstances/vm1/pause", uid, false, 404},
           Case{"GET", "/v1/namespaces/tenant/virtualmachineinstances/vm1/pause", uid, false, 405},
           Case{"POST", "/v1/namespaces/tenant/virtualmachineinstances/vm1/unpause", uid, false, 405},
           Case{"PUT", "/v1/namespaces/tenant/virtualmachineinstances/vm1/console", uid, true, 405},
           Case{"PUT", "/v1/namespaces/tenant/virtualmachineinstances/vm1/pause", "", false, 400},
           Case{"PUT", "/v1/namespaces/tenant/virtualmachineinstances/vm1/pause", "not-a-uid", false, 400},
           Case{"GET", "/v1/namespaces/tenant/virtualmachineinstances/vm1/console", uid, false, 400},
       }) {
    Result<SubresourceTarget, SubresourceReply> target = parse(c.method, c.target, c.header, c.upgrade);
    ASSERT_FALSE(target.ok()) << c.method << " " << c.target;
    EXPECT_EQ(target.error().status, c.status) << c.method << " " << c.target << ": " << target.error().body;
    EXPECT_EQ(target.error().body.rfind(R"({"message":")", 0), 0U) << target.error().body;
  }
  EXPECT_EQ(parse("PUT", std::string(base) + "/pause", "").error().body,
            R"({"message":"the header X-Vmgate-Vmi-Uid is required"})");
}

TEST(SubresourceRequest, OnlyTheConfiguredClientName) {
  const std::array<std::string, 1> serve{"vmgate-subresources"};
  EXPECT_FALSE(refuse_client(serve, "vmgate-subresources").has_value());
  const std::array<std::string, 1> other{"system:node:node0"};
  const std::optional<SubresourceReply> refused = refuse_client(other, "vmgate-subresources");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, 403U);
  EXPECT_EQ(refused->body, R"({"message":"the client certificate's subject must be CN=vmgate-subresources"})");
  // No CN, or a second CN beside the right one: refused.
  EXPECT_TRUE(refuse_client(std::span<const std::string>(), "vmgate-subresources").has_value());
  const std::array<std::string, 2> two{"vmgate-subresources", "x"};
  EXPECT_TRUE(refuse_client(two, "vmgate-subresources").has_value());
}

TEST(SubresourceRequest, TheLauncherOfThatVmiInThatNamespace) {
  const SubresourceTarget target{SubresourceAction::pause, "tenant", "vm1", std::string(uid)};
  const std::string other_uid = "00000000-0000-4000-8000-000000000000";
  const std::array<LauncherPod, 4> pods{
      LauncherPod{"other", "virt-launcher-vm1-a", "p1", "vm1", std::string(uid), false},   // another namespace
      LauncherPod{"tenant", "virt-launcher-vm1-b", "p2", "vm1", other_uid, false},         // an older VMI of the name
      LauncherPod{"tenant", "virt-launcher-vm2-c", "p3", "vm2", std::string(uid), false},  // another VMI
      LauncherPod{"tenant", "virt-launcher-vm1-d", "p4", "vm1", std::string(uid), false},
  };
  Result<LauncherPod, SubresourceReply> pod = select_launcher(pods, target);
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->uid, "p4");
  Result<LauncherPod, SubresourceReply> none = select_launcher(std::span(pods).first(3), target);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().status, 404U);
  EXPECT_EQ(none.error().body,
            R"({"message":"no launcher of VMI tenant/vm1 (uid )" + std::string(uid) + R"() on this node"})");
}

TEST(SubresourceRequest, TheLaunchersAnswerInHttp) {
  const SubresourceTarget target{SubresourceAction::pause, "tenant", "vm1", std::string(uid)};
  EXPECT_EQ(control_reply("ok\n", target), (SubresourceReply{200, "{}"}));
  EXPECT_EQ(control_reply("error domain is already paused\n", target),
            (SubresourceReply{409, R"({"message":"domain is already paused"})"}));
  EXPECT_EQ(control_reply("error say \"no\"\n", target), (SubresourceReply{409, R"({"message":"say \"no\""})"}));
  EXPECT_EQ(control_reply("", target).status, 502U);
  EXPECT_EQ(control_reply("okay\n", target).status, 502U);
  EXPECT_EQ(control_reply("error a\nerror b\n", target).status, 502U);
}

TEST(SubresourceRequest, MessageBodyIsJson) {
  EXPECT_EQ(message_body("a\"b\\c\n\x01"), R"({"message":"a\"b\\c\n\u0001"})");
}

}  // namespace
}  // namespace vmgate::node
