#pragma once
// A small XML element tree for building libvirt domain XML. Text and attribute values are
// escaped on output, so VMI strings (names, kernel arguments, paths) never break the document.
// Thread-safety: a value type; no shared state.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vmgate::launcher {

class XmlElement {
 public:
  explicit XmlElement(std::string name) : name_(std::move(name)) {}

  /// Appends a child and returns it (the reference is valid until the next add_child here).
  XmlElement& add_child(std::string name);
  /// Sets an attribute (attributes print in the order they were first set).
  XmlElement& set_attribute(std::string_view key, std::string_view value);
  XmlElement& set_text(std::string_view text);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] bool empty() const { return children_.empty() && text_.empty() && attributes_.empty(); }

  /// The element and its children, indented by two spaces per level, ending in a newline.
  [[nodiscard]] std::string to_string() const;

 private:
  void write(std::string& out, int depth) const;

  std::string name_;
  std::vector<std::pair<std::string, std::string>> attributes_;
  std::string text_;
  std::vector<XmlElement> children_;
};

}  // namespace vmgate::launcher
