#pragma once
// rtnetlink requests and answers as bytes (docs/node.md, "Pod network"): the links and
// addresses of a pod's network namespace read, bridges and dummies created, links renamed,
// moved under a bridge, given an MTU, a MAC or the up flag, addresses added and removed, a
// bridge port's learning turned off. The messages vishvananda/netlink sends for KubeVirt's
// nmstate driver (pkg/network/driver/nmstate/spec.go), built by hand: no libmnl, no `ip`.
// The answers come from the kernel of a namespace whose processes are the tenant's, so parsing
// checks every length. Pure: bytes in, bytes out; thread-safe.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"
#include "vmgate/node/pod_network.hpp"

namespace vmgate::node {

using Bytes = std::vector<std::uint8_t>;
using Mac = std::array<std::uint8_t, 6>;

/// A link of the namespace (RTM_NEWLINK in a dump).
struct LinkInfo {
  int index = 0;
  std::string name;
  std::uint32_t mtu = 0;
  std::optional<Mac> mac;
  int master = 0;    // IFLA_MASTER, 0: none
  std::string kind;  // IFLA_INFO_KIND: "bridge", "tun", "dummy", "veth", "" when absent
  bool up = false;   // IFF_UP
};

/// An address of the namespace (RTM_NEWADDR in a dump).
struct AddressInfo {
  int index = 0;  // the link's
  IpPrefix address;
  std::uint8_t scope = 0;  // RT_SCOPE_UNIVERSE (0) for a global address
};

/// RTM_GETLINK / RTM_GETADDR dumps of every family.
Bytes link_dump_request(std::uint32_t sequence);
Bytes address_dump_request(std::uint32_t sequence);

/// RTM_NEWLINK (create, exclusive) of kind `kind` ("bridge", "dummy") named `name`, with an MTU
/// and a MAC when given.
Bytes link_create_request(std::uint32_t sequence, std::string_view kind, std::string_view name,
                          std::optional<std::uint32_t> mtu, const std::optional<Mac>& mac);
/// RTM_DELLINK of link `index`.
Bytes link_delete_request(std::uint32_t sequence, int index);

/// What to change on an existing link; unset members are left alone.
struct LinkChange {
  std::optional<std::string> name;
  std::optional<std::uint32_t> mtu;
  std::optional<Mac> mac;
  std::optional<int> master;  // the bridge's index
  std::optional<bool> up;
};
/// RTM_NEWLINK (no create flag) of link `index` with `change`.
Bytes link_change_request(std::uint32_t sequence, int index, const LinkChange& change);
/// RTM_SETLINK of family AF_BRIDGE on port `index`: IFLA_PROTINFO { IFLA_BRPORT_LEARNING 0 }
/// (nmstate's PortLearning false, netlink.LinkSetLearning(link, false)).
Bytes port_learning_off_request(std::uint32_t sequence, int index);
/// RTM_NEWADDR (create, replace off: an existing address is EEXIST) / RTM_DELADDR of
/// `address` on link `index`, scope universe.
Bytes address_request(std::uint32_t sequence, bool add, int index, const IpPrefix& address);

/// The messages of one answer datagram.
struct Answer {
  std::vector<LinkInfo> links;
  std::vector<AddressInfo> addresses;
  bool done = false;           // NLMSG_DONE, or an ACK (NLMSG_ERROR with error 0)
  std::optional<int> failure;  // an NLMSG_ERROR's errno (positive)
};
/// Parses one datagram of answers to request `sequence` (messages of other sequences are
/// skipped). Errors: a truncated or malformed message.
Result<Answer> parse_answer(const std::uint8_t* data, std::size_t size, std::uint32_t sequence);

}  // namespace vmgate::node
