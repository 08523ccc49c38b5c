#pragma once
// XML character escaping, for the XML vmgate writes: the launcher's domain XML and the node
// labeller's CPU baseline request to libvirt. Pure.
#include <string>
#include <string_view>

namespace vmgate::common {

/// Appends `text` to `out` with & < > " ' replaced by their entities.
void append_xml_escaped(std::string& out, std::string_view text);

/// `text` with & < > " ' replaced by their entities.
std::string xml_escaped(std::string_view text);

}  // namespace vmgate::common
