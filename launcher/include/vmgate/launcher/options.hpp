#pragma once
// Command line of `vmgate-launcher` (docs/launcher.md, "Command line"). Parsing is pure; errors are values.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/admission/release.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/launcher/converter.hpp"

namespace vmgate::launcher {

enum class Emulation { auto_detect, software, kvm };

struct LauncherOptions {
  bool help = false;
  std::string vmi_file;
  std::string vm_file;
  std::vector<std::string> objects;
  std::string namespace_name = "default";
  std::optional<admission::Release> release;  // --kubevirt-version; nullopt: the KubeVirt CR's
  bool print_xml = false;
  /// Empty: qemu:///embed?root=<root>.
  std::string connect;
  std::string root = "/var/run/vmgate-launcher";
  Emulation emulation = Emulation::auto_detect;
  std::optional<long> grace_period_seconds;
  std::string console_log;
  /// Empty: the pod layout's kernel-boot directory.
  std::string kernel_boot_dir;
  /// Non-empty: the pod's directories (disks, overlays, cloud-init, kernel boot) below it.
  std::string pod_root;
  std::string status_file;
  FirmwarePaths firmware;
  /// --tail-console LOG: follow the guest's console log instead of running a guest
  /// (console_tail.hpp), until --until-status FILE is final.
  std::string tail_console;
  std::string until_status;
};

/// Parses argv[1..]. Options take their value as the next argument or after `=` (`--vmi=FILE`);
/// `--` ends the options. Errors: an unknown option, a missing value, an argument that is not
/// an option, a bad --emulation or --grace-period, conflicting inputs ("exactly one of --vmi
/// or --vm is required"), --tail-console with a VMI input, --until-status without --tail-console.
Result<LauncherOptions> parse_launcher_options(std::span<const std::string_view> args);

/// The --help text.
std::string launcher_usage();

}  // namespace vmgate::launcher
