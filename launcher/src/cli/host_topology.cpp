#include "vmgate/launcher/host_topology.hpp"

#include <charconv>
#include <filesystem>
#include <fstream>

namespace vmgate::launcher {

namespace {

std::optional<int> number(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(std::string_view list) {
  while (!list.empty() && (list.back() == '\n' || list.back() == ' ')) {
    list.remove_suffix(1);
  }
  std::vector<int> cpus;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view range = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    const std::size_t dash = range.find('-');
    const std::optional<int> first = number(range.substr(0, dash));
    const std::optional<int> last = dash == std::string_view::npos ? first : number(range.substr(dash + 1));
    // A bound keeps a corrupt list from allocating without limit (CPU_SETSIZE is 1024).
    if (!first || !last || *last < *first || *last >= 65536) {
      return std::nullopt;
    }
    for (int cpu = *first; cpu <= *last; ++cpu) {
      cpus.push_back(cpu);
    }
  }
  return cpus;
}

std::map<int, int> host_cpu_numa_nodes(const std::string& node_dir) {
  std::map<int, int> nodes;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(node_dir, error)) {
    const std::string name = entry.path().filename().string();
    const std::optional<int> node =
        name.rfind("node", 0) == 0 ? number(std::string_view(name).substr(4)) : std::nullopt;
    if (!node) {
      continue;
    }
    std::ifstream in(entry.path() / "cpulist");
    std::string list;
    std::getline(in, list);
    if (const std::optional<std::vector<int>> cpus = parse_cpu_list(list)) {
      for (const int cpu : *cpus) {
        nodes[cpu] = *node;
      }
    }
  }
  return nodes;
}

}  // namespace vmgate::launcher
