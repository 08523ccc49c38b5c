#include "vmgate/launcher/options.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "vmgate/common/options.hpp"

namespace vmgate::launcher {

namespace {

// In the order of launcher_usage().
enum class Option : std::size_t {
  vmi,
  vm,
  objects,
  namespace_name,
  kubevirt_version,
  print_xml,
  emulation,
  console_log,
  kernel_boot_dir,
  pod_root,
  ovmf_code,
  ovmf_vars,
  ovmf_secboot_code,
  ovmf_secboot_vars,
  connect,
  root,
  grace_period,
  status_file,
  tail_console,
  until_status,
  help,
};

constexpr std::size_t index(Option option) {
  return common::option_index(option);
}

constexpr std::size_t option_count = index(Option::help) + 1;

// Every option may be given more than once, the last one winning (--objects adds up), as the
// launcher has always accepted.
constexpr common::OptionSpec value(std::string_view name) {
  return {.name = name, .repeatable = true};
}

constexpr common::OptionSpec flag(std::string_view name, char alias = '\0') {
  return {.name = name, .alias = alias, .flag = true, .repeatable = true};
}

// Keyed by Option so that the table cannot drift from the enum. No help text: launcher_usage()
// is written out, as its layout (an input section, the four OVMF files on one line) is not a
// table's.
constexpr auto specs = common::option_table<Option, option_count>([](auto set) {
  set(Option::vmi, value("vmi"));
  set(Option::vm, value("vm"));
  set(Option::objects, value("objects"));
  set(Option::namespace_name, value("namespace"));
  set(Option::kubevirt_version, value("kubevirt-version"));
  set(Option::print_xml, flag("print-xml"));
  set(Option::emulation, value("emulation"));
  set(Option::console_log, value("console-log"));
  set(Option::kernel_boot_dir, value("kernel-boot-dir"));
  set(Option::pod_root, value("pod-root"));
  set(Option::ovmf_code, value("ovmf-code"));
  set(Option::ovmf_vars, value("ovmf-vars"));
  set(Option::ovmf_secboot_code, value("ovmf-secboot-code"));
  set(Option::ovmf_secboot_vars, value("ovmf-secboot-vars"));
  set(Option::connect, value("connect"));
  set(Option::root, value("root"));
  set(Option::grace_period, value("grace-period"));
  set(Option::status_file, value("status-file"));
  set(Option::tail_console, value("tail-console"));
  set(Option::until_status, value("until-status"));
  set(Option::help, flag("help", 'h'));
});
static_assert(common::every_option_declared(specs), "every Option is declared");

// The options stored as given (the last one winning); parse_launcher_options() checks the others.
constexpr std::array fields{
    common::bind_option(Option::vmi, &LauncherOptions::vmi_file),
    common::bind_option(Option::vm, &LauncherOptions::vm_file),
    common::bind_option(Option::objects, &LauncherOptions::objects),
    common::bind_option(Option::namespace_name, &LauncherOptions::namespace_name),
    common::bind_option(Option::print_xml, &LauncherOptions::print_xml),
    common::bind_option(Option::console_log, &LauncherOptions::console_log),
    common::bind_option(Option::kernel_boot_dir, &LauncherOptions::kernel_boot_dir),
    common::bind_option(Option::pod_root, &LauncherOptions::pod_root),
    common::bind_option(Option::connect, &LauncherOptions::connect),
    common::bind_option(Option::root, &LauncherOptions::root),
    common::bind_option(Option::status_file, &LauncherOptions::status_file),
    common::bind_option(Option::tail_console, &LauncherOptions::tail_console),
    common::bind_option(Option::until_status, &LauncherOptions::until_status),
    common::bind_option(Option::help, &LauncherOptions::help),
};

constexpr common::CommandSyntax<LauncherOptions> syntax{"vmgate-launcher", specs, fields, common::OptionWording::plain};

Status apply_option(LauncherOptions& options, Option option, std::string_view text) {
  const std::string value(text);
  switch (option) {
    case Option::emulation:
      if (value == "auto") {
        options.emulation = Emulation::auto_detect;
      } else if (value == "software") {
        options.emulation = Emulation::software;
      } else if (value == "kvm") {
        options.emulation = Emulation::kvm;
      } else {
        return Error{"--emulation must be auto, software or kvm, not \"" + value + "\""};
      }
      break;
    case Option::kubevirt_version:
      return admission::set_release_option(options.release, value);
    case Option::ovmf_code:
      options.firmware.efi_code = value;
      break;
    case Option::ovmf_vars:
      options.firmware.efi_vars = value;
      break;
    case Option::ovmf_secboot_code:
      options.firmware.secure_boot_code = value;
      break;
    case Option::ovmf_secboot_vars:
      options.firmware.secure_boot_vars = value;
      break;
    case Option::grace_period: {
      long seconds = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (ec != std::errc() || end != value.data() + value.size() || seconds < 0) {
        return Error{"--grace-period must be a non-negative number of seconds, not \"" + value + "\""};
      }
      options.grace_period_seconds = seconds;
      break;
    }
    default:  // stored above
      break;
  }
  return Ok{};
}

}  // namespace

std::string launcher_usage() {
  return R"(Usage: vmgate-launcher (--vmi FILE | --vm FILE) [--objects PATH]... [options]
       vmgate-launcher --tail-console LOG [--until-status FILE]

Turns an admitted VirtualMachineInstance into libvirt domain XML, boots it and
supervises it.

Input (exactly one):
  --vmi FILE            a VirtualMachineInstance (YAML or JSON). One that admission has not
                        seen (without the kubevirt.io/foregroundDeleteVirtualMachine
                        finalizer) first gets KubeVirt's VMI defaults from the admission core
                        (mutate, validate), as the webhook would: a disk without a bus is
                        sata, the sockets come from the CPU limit...; an admitted one is
                        taken as it is
  --vm FILE             a VirtualMachine, expanded to its VMI by the admission core
                        (mutate, validate, expand: the same VMI `vmgate check` computes)
  --objects PATH        cluster objects for --vm and --vmi (instancetypes, preferences,
                        PVCs, the KubeVirt CR...); a file or directory, repeatable
  --namespace NS        namespace for objects without one (default "default")
  --kubevirt-version V  the KubeVirt release whose admission expands --vm and defaults --vmi:
                        v1.8 or main (default: the KubeVirt CR's
                        status.observedKubeVirtVersion, else main)

Options:
  --print-xml           print the domain XML and exit
  --emulation MODE      auto (KVM only when it works), software (TCG, type='qemu') or kvm
  --console-log FILE    serial console log file
  --kernel-boot-dir DIR where firmware.kernelBoot kernelPath/initrdPath are resolved
  --pod-root DIR        the pod's directories below DIR instead of / (containerDisk images
                        DIR/var/run/kubevirt-image-volume/disk_<i>/disk/*, overlays,
                        emptyDisks, the cloud-init ISO, PVC disk.img files); for running
                        outside a pod
  --ovmf-code FILE, --ovmf-vars FILE, --ovmf-secboot-code FILE, --ovmf-secboot-vars FILE
                        OVMF firmware files (defaults: Debian 12's /usr/share/OVMF/*_4M*)
  --connect URI         libvirt URI (default qemu:///embed?root=ROOT)
  --root DIR            root of the embedded QEMU driver
  --grace-period SECONDS
                        time between SIGTERM and destroy (default: the VMI's
                        terminationGracePeriodSeconds, else 30)
  --status-file FILE    JSON {phase, reason, timestamps}, replaced atomically; also
                        written (Failed) when the launcher gives up before the guest
                        starts (docs/launcher.md, "The status file")
  -h, --help            this text

The guest's console (a launcher pod's guest-console-log container):
  --tail-console LOG    print every byte appended to LOG on stdout (waiting for LOG to
                        appear, following truncation and a new file of the same name)
  --until-status FILE   ... until this status file shows Succeeded or Failed, then print
                        what is left and exit 0; SIGTERM does the same at once
)";
}

Result<LauncherOptions> parse_launcher_options(std::span<const std::string_view> args) {
  LauncherOptions options;
  Result<common::ParsedArgs> parsed = common::parse_command_line(args, syntax, options, apply_option);
  if (!parsed) {
    return parsed.error();
  }
  if (options.help) {
    return options;
  }
  if (!options.until_status.empty() && options.tail_console.empty()) {
    return Error{"--until-status is only used with --tail-console"};
  }
  const int inputs = (options.vmi_file.empty() ? 0 : 1) + (options.vm_file.empty() ? 0 : 1);
  if (!options.tail_console.empty()) {
    if (inputs != 0) {
      return Error{"--tail-console runs no guest: it takes no --vmi or --vm"};
    }
    if (!options.objects.empty()) {
      return Error{"--objects is only used with --vm and --vmi"};
    }
    return options;
  }
  if (inputs != 1) {
    return Error{"exactly one of --vmi or --vm is required"};
  }
  return options;
}

}  // namespace vmgate::launcher
