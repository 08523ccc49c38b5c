// VMI → libvirt domain XML. Follows KubeVirt pkg/virt-launcher/virtwrap/converter/converter.go
// and its configurators (cpu, memory, clock, features, disks, network, inputs, watchdog, rng,
// graphics, sysinfo, os), in the same parts: this file runs a conversion and holds the checks
// every part uses; converter_compute.cpp, converter_storage.cpp, converter_network.cpp and
// converter_devices.cpp map their fields. Every object is checked against the keys its part
// maps, so an unmapped field becomes an error naming its path.
#include "vmgate/launcher/converter.hpp"

#include <algorithm>

#include "converter_core.hpp"

namespace vmgate::launcher {
namespace detail {

bool Converter::check_keys(const Value* object, const std::string& path,
                           std::initializer_list<std::string_view> allowed) {
  if (object == nullptr) {
    return false;
  }
  if (!object->IsObject()) {
    fail(path, "must be an object, not " + std::string(json::type_name(*object)));
    return false;
  }
  for (auto member = object->MemberBegin(); member != object->MemberEnd(); ++member) {
    const std::string_view key = json::as_view(member->name);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      fail(path + "." + std::string(key), unsupported);
    }
  }
  return true;
}

bool Converter::feature_enabled(const Value& state, const std::string& path) {
  return get_bool(state, "enabled", path).value_or(true);
}

Result<std::string> Converter::run() {
  if (!vmi_.IsObject()) {
    return Error{"the VMI must be a JSON object, not " + std::string(json::type_name(vmi_))};
  }
  const Value* spec = json::find(vmi_, "spec");
  if (spec == nullptr || !spec->IsObject()) {
    return Error{"spec: required"};
  }
  // Pod-level fields (scheduling, probes) do not reach the domain; the rest must be mapped.
  check_keys(
      spec, "spec",
      {"domain", "volumes", "networks", "terminationGracePeriodSeconds", "nodeSelector", "affinity", "tolerations",
       "topologySpreadConstraints", "evictionStrategy", "schedulerName", "priorityClassName", "hostname", "subdomain",
       "dnsConfig", "dnsPolicy", "architecture", "startStrategy", "livenessProbe", "readinessProbe"});
  if (auto strategy = get_string(*spec, "startStrategy", "spec"); strategy && !strategy->empty()) {
    if (*strategy != "Paused") {
      fail("spec.startStrategy", "must be Paused");
    }
    start_paused_ = true;
  }
  if (auto arch = get_string(*spec, "architecture", "spec"); arch && *arch != "amd64") {
    // An arm64 or s390x guest needs a node of its architecture (KubeVirt schedules it there).
    fail("spec.architecture", "needs a " + *arch + " host: vmgate-launcher runs amd64 guests");
  }
  const Value* spec_domain = json::find(*spec, "domain");
  if (spec_domain == nullptr || !spec_domain->IsObject()) {
    return Error{"spec.domain: required"};
  }
  check_keys(spec_domain, "spec.domain",
             {"resources", "cpu", "memory", "machine", "firmware", "clock", "features", "devices", "ioThreadsPolicy",
              "ioThreads"});

  XmlElement domain("domain");
  domain.set_attribute("type", options_.software_emulation ? "qemu" : "kvm");
  map_metadata(domain);
  map_memory(domain, *spec_domain);
  map_cpu(domain, *spec_domain);
  map_memory_backing(domain);
  map_iothreads(domain, *spec_domain);
  map_os(domain, *spec_domain);
  map_features(domain, *spec_domain);
  map_clock(domain, *spec_domain);
  map_devices(domain, *spec_domain);
  if (error_) {
    return Error{*error_};
  }
  return domain.to_string();
}

}  // namespace detail

Result<std::string> convert(const json::Value& vmi, const ConvertOptions& options) {
  return detail::Converter(vmi, options).run();
}

}  // namespace vmgate::launcher
