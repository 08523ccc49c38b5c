// Reads: interfaces[i].{portRanges[*].{protocol, start, end}, ports, masquerade}. Follows
// pkg/network/admitter/netiface.go validatePortRangesConfiguration and validateForwardPortRanges.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "network/interface_rules.hpp"

namespace vmgate::admission::validation {

namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

std::int64_t port_of(const json::Value& range, std::string_view key) {
  const json::Value* value = json::find(range, key);
  return value != nullptr && value->IsInt64() ? value->GetInt64() : 0;
}

void check_overlaps(std::string_view protocol, std::vector<Interval>& intervals, const FieldPath& field,
                    ErrorList& causes) {
  std::sort(intervals.begin(), intervals.end());
  for (std::size_t i = 1; i < intervals.size(); ++i) {
    const Interval& previous = intervals[i - 1];
    const Interval& current = intervals[i];
    if (current.first <= previous.second) {
      causes.push_back({CauseType::field_value_invalid, field.str(),
                        std::string(protocol) + " portRanges [" + std::to_string(previous.first) + "-" +
                            std::to_string(previous.second) + "] and [" + std::to_string(current.first) + "-" +
                            std::to_string(current.second) + "] overlap"});
    }
  }
}

void check_ranges(const json::Value& ranges, const FieldPath& field, ErrorList& causes) {
  constexpr rapidjson::SizeType max_port_ranges = 10;
  if (ranges.Size() > max_port_ranges) {
    causes.push_back({CauseType::field_value_invalid, field.str(), "No more than 10 portRanges are allowed"});
    return;
  }
  std::vector<Interval> tcp;
  std::vector<Interval> udp;
  for (rapidjson::SizeType i = 0; i < ranges.Size(); ++i) {
    const json::Value& range = ranges[i];
    const std::string_view protocol = range.IsObject() ? json::find_string(range, "protocol") : std::string_view{};
    const std::int64_t start = port_of(range, "start");
    const std::int64_t end = port_of(range, "end");
    const FieldPath range_field = field.index(i);
    if (protocol != "TCP" && protocol != "UDP") {
      causes.push_back({CauseType::field_value_invalid, range_field.child("protocol").str(),
                        "Unknown protocol, only TCP or UDP allowed"});
    } else if (start <= 0 || start >= 65536) {
      causes.push_back({CauseType::field_value_invalid, range_field.child("start").str(),
                        "Start must be a valid port number, 0 < x < 65536"});
    } else if (end <= 0 || end >= 65536) {
      causes.push_back({CauseType::field_value_invalid, range_field.child("end").str(),
                        "End must be a valid port number, 0 < x < 65536"});
    } else if (start > end) {
      causes.push_back({CauseType::field_value_invalid, range_field.child("start").str(),
                        "Start must be less than or equal to end"});
    } else {
      (protocol == "TCP" ? tcp : udp).emplace_back(start, end);
    }
  }
  // KubeVirt walks a Go map of protocols (random order); TCP is reported first here.
  check_overlaps("TCP", tcp, field, causes);
  check_overlaps("UDP", udp, field, causes);
}

}  // namespace

void validate_interface_port_ranges(const json::Value& interface, const FieldPath& interface_path, bool on_pod_network,
                                    const ClusterConfig& config, ErrorList& causes) {
  const json::Value* ranges = json::find(interface, "portRanges");
  if (ranges == nullptr || ranges->IsNull()) {
    return;
  }
  const std::string name_field = interface_path.child("name").str();
  if (!config.feature_gate_enabled("PortRangesSpec")) {
    causes.push_back({CauseType::field_value_invalid, name_field,
                      "portRanges is specified on interface but the PortRangesSpec feature gate is not enabled"});
    return;
  }
  if (!on_pod_network) {
    return;
  }
  if (json::has(interface, "ports")) {
    causes.push_back(
        {CauseType::field_value_invalid, name_field, "Cannot define both ports and portRanges on interface"});
  }
  if (!json::has(interface, "masquerade")) {
    causes.push_back(
        {CauseType::field_value_invalid, name_field, "portRanges are only supported on masquerade interfaces"});
  }
  if (ranges->IsArray()) {
    check_ranges(*ranges, interface_path.child("portRanges"), causes);
  }
}

}  // namespace vmgate::admission::validation
