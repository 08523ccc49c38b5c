// KubeVirt releases: spelling and parsing of --kubevirt-version and status.observedKubeVirtVersion.
#include "vmgate/admission/release.hpp"

#include <algorithm>
#include <cctype>

namespace vmgate::admission {

namespace {

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

Error unsupported(std::string_view text, std::string_view why) {
  return Error{"KubeVirt version \"" + std::string(text) + "\" " + std::string(why) +
               " (supported: " + supported_release_list() + ")"};
}

}  // namespace

std::string_view to_string(Release release) {
  switch (release) {
    case Release::v1_7:
      return "v1.7";
    case Release::v1_8:
      return "v1.8";
    case Release::main:
      return "main";
  }
  return "main";
}

Status set_release_option(std::optional<Release>& target, std::string_view value) {
  Result<Release> release = parse_release(value);
  if (!release) {
    return Error{"--kubevirt-version: " + release.error().message};
  }
  target = *release;
  return Ok{};
}

std::string supported_release_list() {
  std::string list;
  for (Release release : supported_releases) {
    if (!list.empty()) {
      list += ", ";
    }
    list += to_string(release);
  }
  return list;
}

Release nearest_release(std::string_view text) {
  std::string_view version = text;
  if (!version.empty() && version.front() == 'v') {
    version.remove_prefix(1);
  }
  const std::size_t first_dot = version.find('.');
  if (first_dot == std::string_view::npos) {
    return newest_release;
  }
  const std::string_view major = version.substr(0, first_dot);
  std::string_view minor = version.substr(first_dot + 1);
  minor = minor.substr(0, minor.find_first_not_of("0123456789"));
  if (!all_digits(major) || !all_digits(minor) || major.size() > 3 || minor.size() > 3) {
    return newest_release;
  }
  const int major_number = std::stoi(std::string(major));
  const int minor_number = std::stoi(std::string(minor));
  const bool older_than_v1_7 = major_number < 1 || (major_number == 1 && minor_number < 7);
  return older_than_v1_7 ? supported_releases.front() : newest_release;
}

Result<Release> parse_release(std::string_view text) {
  if (text == "main") {
    return Release::main;
  }
  std::string_view version = text;
  if (!version.empty() && version.front() == 'v') {
    version.remove_prefix(1);
  }
  // A pre-release or build suffix ("-rc.1", "+abc") belongs to the release it precedes.
  if (const std::size_t suffix = version.find_first_of("-+"); suffix != std::string_view::npos) {
    version = version.substr(0, suffix);
  }
  const std::size_t first_dot = version.find('.');
  if (first_dot == std::string_view::npos) {
    return unsupported(text, "is not a version (MAJOR.MINOR[.PATCH] or main)");
  }
  const std::string_view major = version.substr(0, first_dot);
  std::string_view minor = version.substr(first_dot + 1);
  std::string_view patch;
  if (const std::size_t second_dot = minor.find('.'); second_dot != std::string_view::npos) {
    patch = minor.substr(second_dot + 1);
    minor = minor.substr(0, second_dot);
    if (!all_digits(patch)) {
      return unsupported(text, "is not a version (MAJOR.MINOR[.PATCH] or main)");
    }
  }
  if (!all_digits(major) || !all_digits(minor)) {
    return unsupported(text, "is not a version (MAJOR.MINOR[.PATCH] or main)");
  }
  if (major == "1" && minor == "7") {
    return Release::v1_7;
  }
  if (major == "1" && minor == "8") {
    return Release::v1_8;
  }
  return unsupported(text, "is not supported");
}

}  // namespace vmgate::admission
