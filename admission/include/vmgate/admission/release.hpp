#pragma once
// The KubeVirt releases whose admission vmgate reproduces. KubeVirt changes its webhooks from
// release to release (a feature gate graduates, a check is added or moved); a rule whose
// behaviour differs between releases asks ClusterConfig::release which one it judges as.
// Pure; thread-safe.
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "vmgate/common/result.hpp"

namespace vmgate::admission {

/// Oldest first, so that `release <= Release::v1_8` reads "v1.8 or older". `main` is KubeVirt's
/// main branch as vmgate follows it (d923fdb815).
enum class Release { v1_7, v1_8, main };

inline constexpr std::array<Release, 3> supported_releases{Release::v1_7, Release::v1_8, Release::main};
inline constexpr Release newest_release = Release::main;

/// "v1.7", "v1.8", "main": the spelling --kubevirt-version takes and the warnings print.
std::string_view to_string(Release release);
/// "v1.7, v1.8, main": for help texts and errors.
std::string supported_release_list();

/// A release as a user or a KubeVirt CR spells it: "main", "v1.8", "1.8", "v1.8.2", "1.8.2",
/// "v1.8.0-rc.1". Errors: an empty, malformed or unsupported version, in words that list the
/// supported releases.
Result<Release> parse_release(std::string_view text);

/// `--kubevirt-version VALUE` of any command: `target` set to the release, or an error naming the
/// option (parse_release()'s words after "--kubevirt-version: ").
Status set_release_option(std::optional<Release>& target, std::string_view value);

/// The supported release closest to a version parse_release() refuses: the oldest one for an older
/// release ("v1.6.3"), the newest for anything else (a newer release, a development build).
Release nearest_release(std::string_view text);

/// The help of --kubevirt-version, the same in every command that takes it.
inline constexpr std::string_view release_option_help =
    "the KubeVirt release to judge as: v1.7 (v1.7.N, 1.7), v1.8 (v1.8.N, 1.8) or main.\n"
    "Default: the release the KubeVirt CR's status.observedKubeVirtVersion\n"
    "names, else main (the newest); the answers' warnings say which judged.";

/// Where ClusterConfig::release came from; decides whether the answer says which release judged.
enum class ReleaseSource {
  newest,               // nothing named one: the newest supported release
  cluster,              // the KubeVirt CR's status.observedKubeVirtVersion
  unsupported_cluster,  // the CR names a release vmgate does not model: the nearest one instead
  given,                // --kubevirt-version
};

}  // namespace vmgate::admission
