#pragma once
// Go's net.ParseIP, as KubeVirt's validators use it (DNS nameservers, DHCP NTP servers).
#include <string_view>

namespace vmgate::admission::validation {

/// net.ParseIP(text) != nil: dotted IPv4 without leading zeros, or IPv6 without a zone.
bool is_ip_address(std::string_view text);
/// net.ParseIP(text).To4() != nil: IPv4, or IPv6 holding an IPv4-mapped address (::ffff:a.b.c.d).
bool is_ipv4_address(std::string_view text);

}  // namespace vmgate::admission::validation
