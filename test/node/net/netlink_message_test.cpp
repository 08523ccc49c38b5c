// rtnetlink messages (netlink_message.hpp): the bytes of each request, and answers parsed,
// truncated ones refused.
#include "vmgate/node/netlink_message.hpp"

#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <cstring>

namespace vmgate::node {
namespace {

nlmsghdr header_of(const Bytes& bytes) {
  nlmsghdr header{};
  std::memcpy(&header, bytes.data(), sizeof header);
  return header;
}

// Finds attribute `type` in the attributes after the message's fixed struct of `fixed` bytes.
std::optional<Bytes> attribute(const Bytes& bytes, std::size_t fixed, unsigned short type) {
  std::size_t offset = NLMSG_HDRLEN + NLMSG_ALIGN(fixed);
  while (offset + sizeof(rtattr) <= bytes.size()) {
    rtattr attr{};
    std::memcpy(&attr, bytes.data() + offset, sizeof attr);
    if ((attr.rta_type & NLA_TYPE_MASK) == type) {
      return Bytes(bytes.begin() + static_cast<long>(offset + RTA_LENGTH(0)),
                   bytes.begin() + static_cast<long>(offset + attr.rta_len));
    }
    offset += RTA_ALIGN(attr.rta_len);
  }
  return std::nullopt;
}

TEST(NetlinkMessage, BridgeCreate) {
  const Bytes request = link_create_request(7, "bridge", "k6t-eth0", 1450, masquerade_bridge_mac);
  const nlmsghdr header = header_of(request);
  EXPECT_EQ(header.nlmsg_len, request.size());
  EXPECT_EQ(header.nlmsg_type, RTM_NEWLINK);
  EXPECT_EQ(header.nlmsg_flags, NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK);
  EXPECT_EQ(header.nlmsg_seq, 7U);
  const std::optional<Bytes> name = attribute(request, sizeof(ifinfomsg), IFLA_IFNAME);
  ASSERT_TRUE(name);
  EXPECT_EQ(std::string(name->begin(), name->end()), std::string("k6t-eth0\0", 9));
  const std::optional<Bytes> mtu = attribute(request, sizeof(ifinfomsg), IFLA_MTU);
  ASSERT_TRUE(mtu && mtu->size() == 4);
  std::uint32_t mtu_value = 0;
  std::memcpy(&mtu_value, mtu->data(), 4);
  EXPECT_EQ(mtu_value, 1450U);
  const std::optional<Bytes> mac = attribute(request, sizeof(ifinfomsg), IFLA_ADDRESS);
  EXPECT_EQ(mac, (Bytes{2, 0, 0, 0, 0, 0}));
  const std::optional<Bytes> info = attribute(request, sizeof(ifinfomsg), IFLA_LINKINFO);
  ASSERT_TRUE(info);
  // IFLA_INFO_KIND "bridge" nested inside.
  rtattr kind{};
  std::memcpy(&kind, info->data(), sizeof kind);
  EXPECT_EQ(kind.rta_type, IFLA_INFO_KIND);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(info->data() + RTA_LENGTH(0))), "bridge");
}

TEST(NetlinkMessage, LinkChangeCarriesOnlyWhatChanges) {
  LinkChange change;
  change.name = "tap0";
  change.master = 5;
  change.up = true;
  const Bytes request = link_change_request(3, 9, change);
  ifinfomsg info{};
  std::memcpy(&info, request.data() + NLMSG_HDRLEN, sizeof info);
  EXPECT_EQ(info.ifi_index, 9);
  EXPECT_EQ(info.ifi_change, static_cast<unsigned>(IFF_UP));
  EXPECT_EQ(info.ifi_flags, static_cast<unsigned>(IFF_UP));
  EXPECT_TRUE(attribute(request, sizeof(ifinfomsg), IFLA_IFNAME));
  EXPECT_TRUE(attribute(request, sizeof(ifinfomsg), IFLA_MASTER));
  EXPECT_FALSE(attribute(request, sizeof(ifinfomsg), IFLA_MTU));
  EXPECT_FALSE(attribute(request, sizeof(ifinfomsg), IFLA_ADDRESS));
  EXPECT_EQ(header_of(request).nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);  // never a create
}

TEST(NetlinkMessage, LearningOffIsABridgePortAttribute) {
  const Bytes request = port_learning_off_request(4, 3);
  EXPECT_EQ(header_of(request).nlmsg_type, RTM_SETLINK);
  ifinfomsg info{};
  std::memcpy(&info, request.data() + NLMSG_HDRLEN, sizeof info);
  EXPECT_EQ(info.ifi_family, AF_BRIDGE);
  const std::optional<Bytes> protinfo = attribute(request, sizeof(ifinfomsg), IFLA_PROTINFO);
  ASSERT_TRUE(protinfo);
  rtattr learning{};
  std::memcpy(&learning, protinfo->data(), sizeof learning);
  EXPECT_EQ(learning.rta_type, IFLA_BRPORT_LEARNING);
  EXPECT_EQ((*protinfo)[RTA_LENGTH(0)], 0);
}

TEST(NetlinkMessage, AddressAddAndDelete) {
  const Bytes add = address_request(5, true, 4, nth_address(*parse_prefix("10.0.2.0/24"), 1));
  EXPECT_EQ(header_of(add).nlmsg_type, RTM_NEWADDR);
  ifaddrmsg info{};
  std::memcpy(&info, add.data() + NLMSG_HDRLEN, sizeof info);
  EXPECT_EQ(info.ifa_family, AF_INET);
  EXPECT_EQ(info.ifa_prefixlen, 24);
  EXPECT_EQ(info.ifa_index, 4U);
  EXPECT_EQ(attribute(add, sizeof(ifaddrmsg), IFA_LOCAL), (Bytes{10, 0, 2, 1}));
  const Bytes remove = address_request(6, false, 4, *parse_prefix("fd10:0:2::1/120"));
  EXPECT_EQ(header_of(remove).nlmsg_type, RTM_DELADDR);
  EXPECT_EQ(attribute(remove, sizeof(ifaddrmsg), IFA_LOCAL)->size(), 16U);
}

// An answer as the kernel would send it: a link, an address, then DONE.
Bytes kernel_answer(std::uint32_t sequence) {
  Bytes answer = link_create_request(sequence, "veth", "eth0", 1400, Mac{1, 2, 3, 4, 5, 6});
  // Turn the request into a RTM_NEWLINK answer with an index and the up flag.
  ifinfomsg info{};
  std::memcpy(&info, answer.data() + NLMSG_HDRLEN, sizeof info);
  info.ifi_index = 3;
  info.ifi_flags = IFF_UP;
  std::memcpy(answer.data() + NLMSG_HDRLEN, &info, sizeof info);
  Bytes address = address_request(sequence, true, 3, nth_address(*parse_prefix("10.244.0.0/24"), 7));
  answer.insert(answer.end(), address.begin(), address.end());
  nlmsghdr done{};
  done.nlmsg_len = NLMSG_HDRLEN + 4;
  done.nlmsg_type = NLMSG_DONE;
  done.nlmsg_seq = sequence;
  const auto* raw = reinterpret_cast<const std::uint8_t*>(&done);
  answer.insert(answer.end(), raw, raw + sizeof done);
  answer.resize(answer.size() + 4, 0);
  return answer;
}

TEST(NetlinkAnswer, LinksAddressesDone) {
  const Bytes answer = kernel_answer(11);
  Result<Answer> parsed = parse_answer(answer.data(), answer.size(), 11);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->links.size(), 1U);
  EXPECT_EQ(parsed->links[0].name, "eth0");
  EXPECT_EQ(parsed->links[0].index, 3);
  EXPECT_EQ(parsed->links[0].mtu, 1400U);
  EXPECT_EQ(parsed->links[0].kind, "veth");
  EXPECT_TRUE(parsed->links[0].up);
  EXPECT_EQ(parsed->links[0].mac, (Mac{1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(parsed->addresses.size(), 1U);
  EXPECT_EQ(address_text(parsed->addresses[0].address), "10.244.0.7");
  EXPECT_EQ(parsed->addresses[0].address.length, 24);
  EXPECT_TRUE(parsed->done);
  // Another sequence's messages are skipped.
  Result<Answer> other = parse_answer(answer.data(), answer.size(), 12);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->links.empty());
  EXPECT_FALSE(other->done);
}

TEST(NetlinkAnswer, ErrorsAndTruncation) {
  Bytes error(NLMSG_HDRLEN + sizeof(nlmsgerr), 0);
  nlmsghdr header{};
  header.nlmsg_len = static_cast<std::uint32_t>(error.size());
  header.nlmsg_type = NLMSG_ERROR;
  header.nlmsg_seq = 2;
  std::memcpy(error.data(), &header, sizeof header);
  nlmsgerr body{};
  body.error = -EEXIST;
  std::memcpy(error.data() + NLMSG_HDRLEN, &body, sizeof body);
  Result<Answer> parsed = parse_answer(error.data(), error.size(), 2);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->failure, EEXIST);

  const Bytes answer = kernel_answer(1);
  for (std::size_t cut = 1; cut < answer.size(); ++cut) {
    // Whatever the cut, no read past it: an error, or the messages that fit.
    Result<Answer> truncated = parse_answer(answer.data(), cut, 1);
    if (truncated.ok()) {
      EXPECT_FALSE(truncated->done && truncated->links.empty() && cut < 20);
    }
  }
  // A length field that lies.
  Bytes lying = answer;
  const std::uint32_t huge = 1U << 20U;
  std::memcpy(lying.data(), &huge, sizeof huge);
  EXPECT_FALSE(parse_answer(lying.data(), lying.size(), 1).ok());
}

}  // namespace
}  // namespace vmgate::node
