#include "vmgate/common/xml_escape.hpp"

namespace vmgate::common {

void append_xml_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
}

std::string xml_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_xml_escaped(out, text);
  return out;
}

}  // namespace vmgate::common
