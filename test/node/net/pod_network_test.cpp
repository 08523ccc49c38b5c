// The pod network plan and KubeVirt's masquerade rules (pod_network.hpp).
#include "vmgate/node/pod_network.hpp"

#include <gtest/gtest.h>

#include "vmgate/common/json_decode.hpp"

namespace vmgate::node {
namespace {

json::Document vmi(std::string_view interface_json, std::string_view extra_devices = "", std::string_view pod = "{}",
                   std::string_view cpu = "") {
  const std::string text = R"({"spec":{"domain":{)" + std::string(cpu) + R"("devices":{)" + std::string(extra_devices) +
                           R"("interfaces":[)" + std::string(interface_json) +
                           R"(]}},"networks":[{"name":"default","pod":)" + std::string(pod) + "}]}}";
  Result<json::Document, json::DecodeError> parsed = json::parse_json(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed ? std::move(*parsed) : json::Document();
}

TEST(PlanPodNetwork, MasqueradeDefaults) {
  Result<std::optional<PodNetworkPlan>> plan = plan_pod_network(vmi(R"({"name":"default","masquerade":{}})"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  ASSERT_TRUE(plan->has_value());
  const PodNetworkPlan& p = **plan;
  EXPECT_EQ(p.binding, PodBinding::masquerade);
  EXPECT_EQ(p.tap, "tap0");
  EXPECT_EQ(p.bridge, "k6t-eth0");
  EXPECT_EQ(p.pod_interface, "eth0");
  EXPECT_EQ(p.queues, 0);
  EXPECT_EQ(address_text(nth_address(p.vm_ipv4, 1)), "10.0.2.1");
  EXPECT_EQ(address_text(nth_address(p.vm_ipv4, 2)), "10.0.2.2");
  EXPECT_EQ(p.vm_ipv4.length, 24);
  EXPECT_EQ(address_text(nth_address(p.vm_ipv6, 1)), "fd10:0:2::1");
  EXPECT_EQ(p.vm_ipv6.length, 120);
}

TEST(PlanPodNetwork, NothingToBuild) {
  for (const std::string_view iface :
       {R"({"name":"default","slirp":{}})", R"({"name":"default","passt":{}})",
        R"({"name":"default","binding":{"name":"x"}})", R"({"name":"default","masquerade":{},"state":"absent"})"}) {
    Result<std::optional<PodNetworkPlan>> plan = plan_pod_network(vmi(iface));
    ASSERT_TRUE(plan.ok()) << iface;
    EXPECT_FALSE(plan->has_value()) << iface;
  }
  Result<json::Document, json::DecodeError> no_network = json::parse_json(R"({"spec":{"domain":{}}})");
  ASSERT_TRUE(no_network.ok());
  ASSERT_TRUE(plan_pod_network(*no_network).ok());
  EXPECT_FALSE(plan_pod_network(*no_network)->has_value());
}

TEST(PlanPodNetwork, BridgeMultiqueueAndPorts) {
  Result<std::optional<PodNetworkPlan>> plan =
      plan_pod_network(vmi(R"({"name":"default","bridge":{}})", R"("networkInterfaceMultiqueue":true,)", "{}",
                           R"("cpu":{"sockets":2,"cores":2,"threads":1},)"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ((*plan)->binding, PodBinding::bridge);
  EXPECT_EQ((*plan)->queues, 4);
  // One vCPU, or another model: a single-queue tap, as the launcher's <driver queues/>.
  plan = plan_pod_network(vmi(R"({"name":"default","bridge":{}})", R"("networkInterfaceMultiqueue":true,)"));
  EXPECT_EQ((*plan)->queues, 0);
  plan = plan_pod_network(vmi(R"({"name":"default","bridge":{},"model":"e1000"})",
                              R"("networkInterfaceMultiqueue":true,)", "{}", R"("cpu":{"cores":4},)"));
  EXPECT_EQ((*plan)->queues, 0);

  plan = plan_pod_network(vmi(
      R"({"name":"default","masquerade":{},"ports":[{"port":80},{"port":53,"protocol":"UDP"},{"port":22,"protocol":""}]})"));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ((*plan)->ports, (std::vector<ForwardedPort>{{"tcp", 80}, {"udp", 53}, {"tcp", 22}}));
}

TEST(PlanPodNetwork, TenantValuesAreChecked) {
  struct Case {
    std::string iface;
    std::string pod = "{}";
    std::string cpu;
    std::string_view error;
  };
  std::string many = R"({"name":"default","masquerade":{},"ports":[)";
  for (int i = 0; i < 1025; ++i) {
    many += (i > 0 ? "," : "") + std::string(R"({"port":1})");
  }
  many += "]}";
  for (const Case& c : {
           Case{R"({"name":"other","masquerade":{}})", "{}", "", "has no interface of its name"},
           Case{R"({"name":"default","masquerade":{},"ports":[{"port":0}]})", "{}", "", "ports[0].port"},
           Case{R"({"name":"default","masquerade":{},"ports":[{"port":70000}]})", "{}", "", "ports[0].port"},
           Case{R"({"name":"default","masquerade":{},"ports":[{"port":"80"}]})", "{}", "", "ports[0].port"},
           Case{R"({"name":"default","masquerade":{},"ports":[{"port":80,"protocol":"icmp; flush ruleset"}]})", "{}",
                "", "ports[0].protocol"},
           Case{many, "{}", "", "more than 1024 ports"},
           Case{R"({"name":"default","masquerade":{}})", R"({"vmNetworkCIDR":"10.0.2.0/31"})", "", "vmNetworkCIDR"},
           Case{R"({"name":"default","masquerade":{}})", R"({"vmNetworkCIDR":"fd00::/64"})", "", "vmNetworkCIDR"},
           Case{R"({"name":"default","masquerade":{}})", R"({"vmNetworkCIDR":"10.0.2.0/24; flush"})", "",
                "vmNetworkCIDR"},
           Case{R"({"name":"default","masquerade":{}})", R"({"vmIPv6NetworkCIDR":"10.0.0.0/8"})", "",
                "vmIPv6NetworkCIDR"},
           Case{R"({"name":"default","bridge":{}})", "{}", R"("cpu":{"cores":300},)", "more queues than a tap has"},
       }) {
    const std::string devices = c.cpu.empty() ? "" : R"("networkInterfaceMultiqueue":true,)";
    Result<std::optional<PodNetworkPlan>> plan = plan_pod_network(vmi(c.iface, devices, c.pod, c.cpu));
    ASSERT_FALSE(plan.ok()) << c.iface << " " << c.pod;
    EXPECT_NE(plan.error().message.find(c.error), std::string::npos) << plan.error().message;
  }
}

TEST(Prefixes, ParsedAndCounted) {
  Result<IpPrefix> prefix = parse_prefix("192.168.7.77/28");
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(address_text(*prefix), "192.168.7.64");  // host bits cleared
  EXPECT_EQ(address_text(nth_address(*prefix, 2)), "192.168.7.66");
  EXPECT_EQ(address_text(nth_address(*parse_prefix("10.0.0.255/32"), 1)), "10.0.1.0");  // carries
  for (const std::string_view bad :
       {"10.0.2.0", "10.0.2.0/", "10.0.2.0/33", "/24", "10.0.2/24", "fd10::/129", "10.0.2.0/24x", "10.0.2.0/-1"}) {
    EXPECT_FALSE(parse_prefix(bad).ok()) << bad;
  }
  EXPECT_EQ(address_text(bridge_fake_address(0)), "169.254.75.10");
}

TEST(MasqueradeRules, KubeVirtsRulesForIpv4) {
  Result<std::optional<PodNetworkPlan>> plan = plan_pod_network(vmi(R"({"name":"default","masquerade":{}})"));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(masquerade_nft_script(**plan, true, false),
            "add table ip nat\n"
            "add chain ip nat prerouting { type nat hook prerouting priority -100; }\n"
            "add chain ip nat input { type nat hook input priority 100; }\n"
            "add chain ip nat output { type nat hook output priority -100; }\n"
            "add chain ip nat postrouting { type nat hook postrouting priority 100; }\n"
            "add chain ip nat KUBEVIRT_PREINBOUND\n"
            "add chain ip nat KUBEVIRT_POSTINBOUND\n"
            "flush chain ip nat prerouting\n"
            "flush chain ip nat input\n"
            "flush chain ip nat output\n"
            "flush chain ip nat postrouting\n"
            "flush chain ip nat KUBEVIRT_PREINBOUND\n"
            "flush chain ip nat KUBEVIRT_POSTINBOUND\n"
            "add rule ip nat postrouting ip saddr 10.0.2.2 counter masquerade\n"
            "add rule ip nat prerouting iifname \"eth0\" counter jump KUBEVIRT_PREINBOUND\n"
            "add rule ip nat postrouting oifname \"k6t-eth0\" counter jump KUBEVIRT_POSTINBOUND\n"
            "add rule ip nat KUBEVIRT_PREINBOUND counter dnat to 10.0.2.2\n"
            "add rule ip nat KUBEVIRT_POSTINBOUND ip saddr { 127.0.0.1 } counter snat to 10.0.2.1\n"
            "add rule ip nat output ip daddr { 127.0.0.1 } counter dnat to 10.0.2.2\n");
}

TEST(MasqueradeRules, PortsRestrictInboundAndIpv6) {
  Result<std::optional<PodNetworkPlan>> plan =
      plan_pod_network(vmi(R"({"name":"default","masquerade":{},"ports":[{"port":80},{"port":53,"protocol":"UDP"}]})"));
  ASSERT_TRUE(plan.ok());
  const std::string script = masquerade_nft_script(**plan, false, true);
  EXPECT_EQ(script.find("add table ip nat"), std::string::npos);
  EXPECT_NE(script.find("add table ip6 nat\n"), std::string::npos);
  EXPECT_NE(script.find("add rule ip6 nat postrouting ip6 saddr fd10:0:2::2 counter masquerade\n"), std::string::npos);
  EXPECT_NE(script.find("add rule ip6 nat KUBEVIRT_PREINBOUND tcp dport { 80 } counter dnat to fd10:0:2::2\n"),
            std::string::npos);
  EXPECT_NE(script.find("add rule ip6 nat KUBEVIRT_PREINBOUND udp dport { 53 } counter dnat to fd10:0:2::2\n"),
            std::string::npos);
  EXPECT_NE(
      script.find("add rule ip6 nat KUBEVIRT_POSTINBOUND tcp dport 80 ip6 saddr { ::1 } counter snat to fd10:0:2::1\n"),
      std::string::npos);
  EXPECT_NE(script.find("add rule ip6 nat output ip6 daddr { ::1 } udp dport 53 counter dnat to fd10:0:2::2\n"),
            std::string::npos);
  // With ports, nothing else is forwarded.
  EXPECT_EQ(script.find("KUBEVIRT_PREINBOUND counter dnat"), std::string::npos);
}

}  // namespace
}  // namespace vmgate::node
