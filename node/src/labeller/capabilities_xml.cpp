// libvirt's capability documents into the facts node labels need. Reads: domainCapabilities
// arch, machine, cpu/mode (host-model: model, vendor, feature; custom: model@usable),
// features/{sev,tdx,s390-pv,launchSecurity}; capabilities host/cpu/counter and guest/arch/machine;
// a baseline <cpu>'s feature@policy. KubeVirt: pkg/virt-handler/node-labeller/cpu_plugin.go
// (loadDomCapabilities, getDomCapabilities, loadHostSupportedFeatures), model.go (the XML
// shapes), cmd/virt-handler/virt-handler.go (getMachines, the TSC counter).
//
// libxml2 parses from memory only: no network (XML_PARSE_NONET), no entity substitution and no
// DTD loading, so a document cannot reach outside the string it came in.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <memory>

#include "vmgate/common/xml_escape.hpp"
#include "vmgate/node/node_labels.hpp"

namespace vmgate::node {

namespace {

struct DocFree {
  void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
using UniqueDoc = std::unique_ptr<xmlDoc, DocFree>;

Result<UniqueDoc> parse_xml(std::string_view xml, std::string_view what) {
  if (xml.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return Error{std::string(what) + ": too large"};
  }
  UniqueDoc doc(xmlReadMemory(xml.data(), static_cast<int>(xml.size()), nullptr, nullptr,
                              XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING));
  if (doc == nullptr || xmlDocGetRootElement(doc.get()) == nullptr) {
    return Error{std::string(what) + ": not well-formed XML"};
  }
  return doc;
}

std::string_view name_of(const xmlNode* node) {
  return reinterpret_cast<const char*>(node->name);  // NOLINT: libxml2's xmlChar is UTF-8 bytes
}

bool is_element(const xmlNode* node, std::string_view name) {
  return node != nullptr && node->type == XML_ELEMENT_NODE && name_of(node) == name;
}

// The element children of `parent` named `name`.
std::vector<const xmlNode*> children(const xmlNode* parent, std::string_view name) {
  std::vector<const xmlNode*> found;
  if (parent == nullptr) {
    return found;
  }
  for (const xmlNode* child = parent->children; child != nullptr; child = child->next) {
    if (is_element(child, name)) {
      found.push_back(child);
    }
  }
  return found;
}

const xmlNode* child(const xmlNode* parent, std::string_view name) {
  std::vector<const xmlNode*> found = children(parent, name);
  return found.empty() ? nullptr : found.front();
}

std::string attribute(const xmlNode* node, const char* name) {
  if (node == nullptr) {
    return {};
  }
  xmlChar* value = xmlGetProp(node, reinterpret_cast<const xmlChar*>(name));  // NOLINT: see name_of
  if (value == nullptr) {
    return {};
  }
  std::string text(reinterpret_cast<const char*>(value));  // NOLINT: see name_of
  xmlFree(value);
  return text;
}

std::string text_of(const xmlNode* node) {
  if (node == nullptr) {
    return {};
  }
  xmlChar* value = xmlNodeGetContent(node);
  if (value == nullptr) {
    return {};
  }
  std::string text(reinterpret_cast<const char*>(value));  // NOLINT: see name_of
  xmlFree(value);
  return text;
}

// Go's strings.TrimSpace for the ASCII whitespace libvirt may indent with.
std::string trimmed(std::string text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.back())) {
    text.pop_back();
  }
  const auto first = std::find_if_not(text.begin(), text.end(), space);
  text.erase(text.begin(), first);
  return text;
}

std::uint64_t unsigned_of(const std::string& text) {
  std::uint64_t value = 0;
  const std::string clean = trimmed(text);
  std::from_chars(clean.data(), clean.data() + clean.size(), value);
  return value;
}

}  // namespace

Result<DomainCapabilities> parse_domain_capabilities(std::string_view xml) {
  Result<UniqueDoc> doc = parse_xml(xml, "domain capabilities");
  if (!doc) {
    return doc.error();
  }
  const xmlNode* root = xmlDocGetRootElement(doc->get());
  if (!is_element(root, "domainCapabilities")) {
    return Error{"domain capabilities: the root element is <" + std::string(name_of(root)) +
                 ">, not <domainCapabilities>"};
  }
  DomainCapabilities caps;
  caps.arch = trimmed(text_of(child(root, "arch")));
  caps.machine = trimmed(text_of(child(root, "machine")));
  for (const xmlNode* mode : children(child(root, "cpu"), "mode")) {
    const std::vector<const xmlNode*> models = children(mode, "model");
    if (attribute(mode, "name") == "host-model") {
      // KubeVirt fails without a model; a mode libvirt marks unsupported (no model in it) is
      // simply no host-model, rather than a node that is never labelled.
      if (models.empty()) {
        if (attribute(mode, "supported") == "no") {
          continue;
        }
        return Error{"domain capabilities: host model mode is expected to contain a model"};
      }
      caps.host_model.present = true;
      caps.host_model.name = text_of(models.front());
      caps.host_model.fallback = attribute(models.front(), "fallback");
      caps.host_model.vendor = text_of(child(mode, "vendor"));
      for (const xmlNode* feature : children(mode, "feature")) {
        caps.host_model.features.emplace_back(attribute(feature, "policy"), attribute(feature, "name"));
      }
    }
    for (const xmlNode* model : models) {
      const std::string name = trimmed(text_of(model));
      const std::string usable = attribute(model, "usable");
      if (usable.empty() || name.empty()) {
        continue;
      }
      caps.known_models.push_back(name);
      if (usable != "no") {
        caps.usable_models.push_back(name);
      }
    }
  }
  const xmlNode* features = child(root, "features");
  const xmlNode* sev = child(features, "sev");
  caps.sev = attribute(sev, "supported") == "yes";
  if (caps.sev && unsigned_of(text_of(child(sev, "maxESGuests"))) > 0) {
    caps.sev_es = true;
    const xmlNode* launch = child(features, "launchSecurity");
    if (attribute(launch, "supported") == "yes") {
      for (const xmlNode* values : children(launch, "enum")) {
        if (attribute(values, "name") != "sectype") {
          continue;
        }
        for (const xmlNode* value : children(values, "value")) {
          caps.sev_snp = caps.sev_snp || trimmed(text_of(value)) == "sev-snp";
        }
      }
    }
  }
  caps.tdx = attribute(child(features, "tdx"), "supported") == "yes";
  caps.secure_execution = attribute(child(features, "s390-pv"), "supported") == "yes";
  return caps;
}

Result<HostCapabilities> parse_host_capabilities(std::string_view xml) {
  Result<UniqueDoc> doc = parse_xml(xml, "capabilities");
  if (!doc) {
    return doc.error();
  }
  const xmlNode* root = xmlDocGetRootElement(doc->get());
  if (!is_element(root, "capabilities")) {
    return Error{"capabilities: the root element is <" + std::string(name_of(root)) + ">, not <capabilities>"};
  }
  HostCapabilities caps;
  // libvirtxml's CapsHostCPU has one Counter; KubeVirt labels it only when it is the TSC.
  const xmlNode* counter = child(child(child(root, "host"), "cpu"), "counter");
  if (counter != nullptr && attribute(counter, "name") == "tsc") {
    caps.tsc = TscCounter{.frequency = unsigned_of(attribute(counter, "frequency")),
                          .scaling = attribute(counter, "scaling") == "yes"};
  }
  std::set<std::string> seen;
  for (const xmlNode* guest : children(root, "guest")) {
    for (const xmlNode* machine : children(child(guest, "arch"), "machine")) {
      std::string name = text_of(machine);
      if (!name.empty() && seen.insert(name).second) {
        caps.machines.push_back(std::move(name));
      }
    }
  }
  return caps;
}

Result<std::vector<std::string>> parse_baseline_features(std::string_view xml) {
  Result<UniqueDoc> doc = parse_xml(xml, "baseline CPU");
  if (!doc) {
    return doc.error();
  }
  const xmlNode* root = xmlDocGetRootElement(doc->get());
  if (!is_element(root, "cpu")) {
    return Error{"baseline CPU: the root element is <" + std::string(name_of(root)) + ">, not <cpu>"};
  }
  std::vector<std::string> features;
  for (const xmlNode* feature : children(root, "feature")) {
    if (attribute(feature, "policy") == "require") {
      features.push_back(attribute(feature, "name"));
    }
  }
  return features;
}

std::string host_model_cpu_xml(const HostModel& host_model) {
  if (!host_model.present) {
    return {};
  }
  std::string out = "<cpu mode='custom' match='exact'>\n  <model";
  if (!host_model.fallback.empty()) {
    out += " fallback='";
    common::append_xml_escaped(out, host_model.fallback);
    out += "'";
  }
  out += ">";
  common::append_xml_escaped(out, host_model.name);
  out += "</model>\n";
  if (!host_model.vendor.empty()) {
    out += "  <vendor>";
    common::append_xml_escaped(out, host_model.vendor);
    out += "</vendor>\n";
  }
  for (const auto& [policy, name] : host_model.features) {
    out += "  <feature policy='";
    common::append_xml_escaped(out, policy);
    out += "' name='";
    common::append_xml_escaped(out, name);
    out += "'/>\n";
  }
  out += "</cpu>\n";
  return out;
}

}  // namespace vmgate::node
