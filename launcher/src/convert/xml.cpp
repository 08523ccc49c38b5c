#include "vmgate/launcher/xml.hpp"

#include "vmgate/common/xml_escape.hpp"

namespace vmgate::launcher {

XmlElement& XmlElement::add_child(std::string name) {
  children_.emplace_back(std::move(name));
  return children_.back();
}

XmlElement& XmlElement::set_attribute(std::string_view key, std::string_view value) {
  for (auto& attribute : attributes_) {
    if (attribute.first == key) {
      attribute.second = std::string(value);
      return *this;
    }
  }
  attributes_.emplace_back(std::string(key), std::string(value));
  return *this;
}

XmlElement& XmlElement::set_text(std::string_view text) {
  text_ = std::string(text);
  return *this;
}

std::string XmlElement::to_string() const {
  std::string out;
  write(out, 0);
  return out;
}

void XmlElement::write(std::string& out, int depth) const {
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
  out += '<';
  out += name_;
  for (const auto& [key, value] : attributes_) {
    out += ' ';
    out += key;
    out += "='";
    common::append_xml_escaped(out, value);
    out += '\'';
  }
  if (children_.empty() && text_.empty()) {
    out += "/>\n";
    return;
  }
  out += '>';
  if (children_.empty()) {
    common::append_xml_escaped(out, text_);
  } else {
    out += '\n';
    for (const auto& child : children_) {
      child.write(out, depth + 1);
    }
    out.append(static_cast<std::size_t>(depth) * 2, ' ');
  }
  out += "</";
  out += name_;
  out += ">\n";
}

}  // namespace vmgate::launcher
