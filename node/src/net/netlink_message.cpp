// rtnetlink messages (netlink_message.hpp): the layouts of linux/netlink.h, linux/rtnetlink.h,
// linux/if_link.h and linux/if_addr.h, written and read field by field.
#include "vmgate/node/netlink_message.hpp"

#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include <cstring>

namespace vmgate::node {
namespace {

// One request: the header, the family-specific struct, then attributes (nested ones through
// begin_nested/end_nested). nlmsg_len is fixed up as bytes are appended.
class Builder {
 public:
  Builder(std::uint16_t type, std::uint16_t flags, std::uint32_t sequence) {
    nlmsghdr header{};
    header.nlmsg_type = type;
    header.nlmsg_flags = static_cast<std::uint16_t>(flags | NLM_F_REQUEST);
    header.nlmsg_seq = sequence;
    append(&header, sizeof header);
  }

  template <class T>
  void add_struct(const T& value) {
    append(&value, sizeof value);
  }

  void add_attribute(std::uint16_t type, const void* data, std::size_t size) {
    rtattr attribute{};
    attribute.rta_type = type;
    attribute.rta_len = static_cast<std::uint16_t>(RTA_LENGTH(size));
    append(&attribute, sizeof attribute);
    append(data, size);
  }
  void add_string(std::uint16_t type, std::string_view text) {
    std::string terminated(text);
    add_attribute(type, terminated.c_str(), terminated.size() + 1);
  }
  template <class T>
  void add_value(std::uint16_t type, T value) {
    add_attribute(type, &value, sizeof value);
  }

  std::size_t begin_nested(std::uint16_t type) {
    const std::size_t offset = bytes_.size();
    add_attribute(static_cast<std::uint16_t>(type | NLA_F_NESTED), nullptr, 0);
    return offset;
  }
  void end_nested(std::size_t offset) {
    const auto length = static_cast<std::uint16_t>(bytes_.size() - offset);
    std::memcpy(bytes_.data() + offset + offsetof(rtattr, rta_len), &length, sizeof length);
  }

  Bytes finish() && {
    const auto length = static_cast<std::uint32_t>(bytes_.size());
    std::memcpy(bytes_.data() + offsetof(nlmsghdr, nlmsg_len), &length, sizeof length);
    return std::move(bytes_);
  }

 private:
  void append(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    if (size > 0) {
      bytes_.insert(bytes_.end(), bytes, bytes + size);
    }
    bytes_.resize(NLMSG_ALIGN(bytes_.size()), 0);
  }
  Bytes bytes_;
};

ifinfomsg link_header(int index, unsigned char family = AF_UNSPEC) {
  ifinfomsg info{};
  info.ifi_family = family;
  info.ifi_index = index;
  return info;
}

template <class T>
T read_value(const std::uint8_t* data) {
  T value{};
  std::memcpy(&value, data, sizeof value);
  return value;
}

// Walks the attributes in [data, data + size), calling `visit(type, payload, payload_size)`.
// Errors: an attribute whose length runs past the end or is shorter than its header.
template <class Visit>
Status for_each_attribute(const std::uint8_t* data, std::size_t size, Visit visit) {
  std::size_t offset = 0;
  while (offset + sizeof(rtattr) <= size) {
    const auto attribute = read_value<rtattr>(data + offset);
    if (attribute.rta_len < sizeof(rtattr) || offset + attribute.rta_len > size) {
      return Error{"netlink: a malformed attribute"};
    }
    visit(static_cast<std::uint16_t>(attribute.rta_type & NLA_TYPE_MASK), data + offset + RTA_LENGTH(0),
          attribute.rta_len - RTA_LENGTH(0));
    offset += RTA_ALIGN(attribute.rta_len);
  }
  return Ok{};
}

std::string attribute_string(const std::uint8_t* data, std::size_t size) {
  const auto* text = reinterpret_cast<const char*>(data);
  return std::string(text, strnlen(text, size));
}

Result<LinkInfo> parse_link(const std::uint8_t* data, std::size_t size) {
  if (size < NLMSG_ALIGN(sizeof(ifinfomsg))) {
    return Error{"netlink: a truncated link message"};
  }
  const auto header = read_value<ifinfomsg>(data);
  LinkInfo link;
  link.index = header.ifi_index;
  link.up = (header.ifi_flags & static_cast<unsigned>(IFF_UP)) != 0;
  Status walked = for_each_attribute(
      data + NLMSG_ALIGN(sizeof(ifinfomsg)), size - NLMSG_ALIGN(sizeof(ifinfomsg)),
      [&link](std::uint16_t type, const std::uint8_t* payload, std::size_t length) {
        if (type == IFLA_IFNAME) {
          link.name = attribute_string(payload, length);
        } else if (type == IFLA_MTU && length >= sizeof(std::uint32_t)) {
          link.mtu = read_value<std::uint32_t>(payload);
        } else if (type == IFLA_MASTER && length >= sizeof(std::uint32_t)) {
          link.master = static_cast<int>(read_value<std::uint32_t>(payload));
        } else if (type == IFLA_ADDRESS && length == 6) {
          Mac mac{};
          std::memcpy(mac.data(), payload, mac.size());
          link.mac = mac;
        } else if (type == IFLA_LINKINFO) {
          // A malformed nested kind leaves the kind empty; the outer walk has checked the bounds.
          (void)for_each_attribute(payload, length,
                                   [&link](std::uint16_t inner, const std::uint8_t* value, std::size_t value_length) {
                                     if (inner == IFLA_INFO_KIND) {
                                       link.kind = attribute_string(value, value_length);
                                     }
                                   });
        }
      });
  if (!walked) {
    return walked.error();
  }
  return link;
}

Result<AddressInfo> parse_address(const std::uint8_t* data, std::size_t size) {
  if (size < NLMSG_ALIGN(sizeof(ifaddrmsg))) {
    return Error{"netlink: a truncated address message"};
  }
  const auto header = read_value<ifaddrmsg>(data);
  AddressInfo address;
  address.index = static_cast<int>(header.ifa_index);
  address.scope = header.ifa_scope;
  address.address.ipv6 = header.ifa_family == AF_INET6;
  // Another family (none in an address dump) gets an impossible length: the caller drops it.
  const bool inet = header.ifa_family == AF_INET || header.ifa_family == AF_INET6;
  address.address.length = inet ? header.ifa_prefixlen : 255;
  const std::size_t expected = address.address.ipv6 ? 16 : 4;
  bool found = false;
  Status walked =
      for_each_attribute(data + NLMSG_ALIGN(sizeof(ifaddrmsg)), size - NLMSG_ALIGN(sizeof(ifaddrmsg)),
                         [&](std::uint16_t type, const std::uint8_t* payload, std::size_t length) {
                           // IFA_LOCAL is the address of a point-to-point link;
                           // IFA_ADDRESS otherwise (the same on a broadcast link).
                           if ((type == IFA_LOCAL || (type == IFA_ADDRESS && !found)) && length == expected) {
                             std::memcpy(address.address.address.data(), payload, expected);
                             found = true;
                           }
                         });
  if (!walked) {
    return walked.error();
  }
  return address;
}

}  // namespace

Bytes link_dump_request(std::uint32_t sequence) {
  Builder builder(RTM_GETLINK, NLM_F_DUMP, sequence);
  builder.add_struct(link_header(0));
  return std::move(builder).finish();
}

Bytes address_dump_request(std::uint32_t sequence) {
  Builder builder(RTM_GETADDR, NLM_F_DUMP, sequence);
  ifaddrmsg header{};
  header.ifa_family = AF_UNSPEC;
  builder.add_struct(header);
  return std::move(builder).finish();
}

Bytes link_create_request(std::uint32_t sequence, std::string_view kind, std::string_view name,
                          std::optional<std::uint32_t> mtu, const std::optional<Mac>& mac) {
  Builder builder(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, sequence);
  builder.add_struct(link_header(0));
  builder.add_string(IFLA_IFNAME, name);
  if (mtu) {
    builder.add_value<std::uint32_t>(IFLA_MTU, *mtu);
  }
  if (mac) {
    builder.add_attribute(IFLA_ADDRESS, mac->data(), mac->size());
  }
  const std::size_t info = builder.begin_nested(IFLA_LINKINFO);
  builder.add_string(IFLA_INFO_KIND, kind);
  builder.end_nested(info);
  return std::move(builder).finish();
}

Bytes link_delete_request(std::uint32_t sequence, int index) {
  Builder builder(RTM_DELLINK, NLM_F_ACK, sequence);
  builder.add_struct(link_header(index));
  return std::move(builder).finish();
}

Bytes link_change_request(std::uint32_t sequence, int index, const LinkChange& change) {
  Builder builder(RTM_NEWLINK, NLM_F_ACK, sequence);
  ifinfomsg header = link_header(index);
  if (change.up) {
    header.ifi_change = static_cast<unsigned>(IFF_UP);
    header.ifi_flags = *change.up ? static_cast<unsigned>(IFF_UP) : 0U;
  }
  builder.add_struct(header);
  if (change.name) {
    builder.add_string(IFLA_IFNAME, *change.name);
  }
  if (change.mtu) {
    builder.add_value<std::uint32_t>(IFLA_MTU, *change.mtu);
  }
  if (change.mac) {
    builder.add_attribute(IFLA_ADDRESS, change.mac->data(), change.mac->size());
  }
  if (change.master) {
    builder.add_value<std::uint32_t>(IFLA_MASTER, static_cast<std::uint32_t>(*change.master));
  }
  return std::move(builder).finish();
}

Bytes port_learning_off_request(std::uint32_t sequence, int index) {
  // RTM_SETLINK: the bridge's own handler of AF_BRIDGE (rtnl_bridge_setlink) is registered there.
  Builder builder(RTM_SETLINK, NLM_F_ACK, sequence);
  builder.add_struct(link_header(index, AF_BRIDGE));
  const std::size_t info = builder.begin_nested(IFLA_PROTINFO);
  builder.add_value<std::uint8_t>(IFLA_BRPORT_LEARNING, 0);
  builder.end_nested(info);
  return std::move(builder).finish();
}

Bytes address_request(std::uint32_t sequence, bool add, int index, const IpPrefix& address) {
  Builder builder(add ? RTM_NEWADDR : RTM_DELADDR,
                  static_cast<std::uint16_t>(add ? NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK : NLM_F_ACK), sequence);
  ifaddrmsg header{};
  header.ifa_family = address.ipv6 ? AF_INET6 : AF_INET;
  header.ifa_prefixlen = static_cast<unsigned char>(address.length);
  header.ifa_scope = RT_SCOPE_UNIVERSE;
  header.ifa_index = static_cast<std::uint32_t>(index);
  builder.add_struct(header);
  const std::size_t size = address.ipv6 ? 16 : 4;
  builder.add_attribute(IFA_LOCAL, address.address.data(), size);
  builder.add_attribute(IFA_ADDRESS, address.address.data(), size);
  return std::move(builder).finish();
}

Result<Answer> parse_answer(const std::uint8_t* data, std::size_t size, std::uint32_t sequence) {
  Answer answer;
  std::size_t offset = 0;
  while (offset + sizeof(nlmsghdr) <= size) {
    const auto header = read_value<nlmsghdr>(data + offset);
    if (header.nlmsg_len < sizeof(nlmsghdr) || offset + header.nlmsg_len > size) {
      return Error{"netlink: a truncated message"};
    }
    const std::uint8_t* payload = data + offset + NLMSG_HDRLEN;
    const std::size_t length = header.nlmsg_len - NLMSG_HDRLEN;
    offset += NLMSG_ALIGN(header.nlmsg_len);
    if (header.nlmsg_seq != sequence) {
      continue;
    }
    if (header.nlmsg_type == NLMSG_DONE) {
      answer.done = true;
    } else if (header.nlmsg_type == NLMSG_ERROR) {
      if (length < sizeof(nlmsgerr)) {
        return Error{"netlink: a truncated error message"};
      }
      const auto error = read_value<nlmsgerr>(payload);
      answer.done = true;
      if (error.error != 0) {
        answer.failure = -error.error;
      }
    } else if (header.nlmsg_type == RTM_NEWLINK) {
      Result<LinkInfo> link = parse_link(payload, length);
      if (!link) {
        return link.error();
      }
      answer.links.push_back(std::move(*link));
    } else if (header.nlmsg_type == RTM_NEWADDR) {
      Result<AddressInfo> address = parse_address(payload, length);
      if (!address) {
        return address.error();
      }
      if (address->address.length <= (address->address.ipv6 ? 128 : 32)) {
        answer.addresses.push_back(*address);
      }
    }
  }
  return answer;
}

}  // namespace vmgate::node
