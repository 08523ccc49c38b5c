#include "vmgate/launcher/options.hpp"

#include <charconv>

namespace vmgate::launcher {

std::string launcher_usage() {
  return R"(Usage: vmgate-launcher (--vmi FILE | --vm FILE [--objects PATH]... | --vmi-name NS/NAME) [options]

Turns an admitted VirtualMachineInstance into libvirt domain XML.

Input (exactly one):
  --vmi FILE            a VirtualMachineInstance (YAML or JSON)
  --vm FILE             a VirtualMachine, expanded to its VMI by the admission core
                        (mutate, validate, expand: the same VMI `vmgate check` computes)
  --objects PATH        cluster objects for --vm (instancetypes, preferences, PVCs...);
                        a file or directory, repeatable
  --namespace NS        namespace for objects without one (default "default")
  --vmi-name NS/NAME    read the VMI from the cluster: needs the Kubernetes client,
                        which vmgate does not have yet; fails with an error

Options:
  --print-xml           print the domain XML and exit
  --emulation MODE      auto (KVM only when it works), software (TCG, type='qemu') or kvm
  --console-log FILE    serial console log file
  --kernel-boot-dir DIR where firmware.kernelBoot kernelPath/initrdPath are resolved
  --pod-root DIR        the pod's directories below DIR instead of / (containerDisk images
                        DIR/var/run/kubevirt/container-disks/disk_<i>.img, overlays, emptyDisks,
                        the cloud-init ISO, PVC disk.img files); for running outside a pod
  --ovmf-code FILE, --ovmf-vars FILE, --ovmf-secboot-code FILE, --ovmf-secboot-vars FILE
                        OVMF firmware files (defaults: Debian 12's /usr/share/OVMF/*_4M*)
  --connect URI         libvirt URI (default qemu:///embed?root=ROOT)
  --root DIR            root of the embedded QEMU driver
  --grace-period SECONDS
                        time between SIGTERM and destroy (default: the VMI's
                        terminationGracePeriodSeconds, else 30)
  --status-file FILE    JSON {phase, reason, timestamps}, replaced atomically
  -h, --help            this text
)";
}

Result<LauncherOptions> parse_launcher_options(std::span<const std::string_view> args) {
  LauncherOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      continue;
    }
    if (arg == "--print-xml") {
      options.print_xml = true;
      continue;
    }
    if (i + 1 >= args.size()) {
      return Error{arg.starts_with("--") ? "option " + std::string(arg) + " needs a value or is unknown"
                                         : "unexpected argument " + std::string(arg)};
    }
    const std::string value(args[++i]);
    if (arg == "--vmi") {
      options.vmi_file = value;
    } else if (arg == "--vm") {
      options.vm_file = value;
    } else if (arg == "--objects") {
      options.objects.push_back(value);
    } else if (arg == "--namespace") {
      options.namespace_name = value;
    } else if (arg == "--vmi-name") {
      options.vmi_name = value;
    } else if (arg == "--connect") {
      options.connect = value;
    } else if (arg == "--root") {
      options.root = value;
    } else if (arg == "--console-log") {
      options.console_log = value;
    } else if (arg == "--kernel-boot-dir") {
      options.kernel_boot_dir = value;
    } else if (arg == "--pod-root") {
      options.pod_root = value;
    } else if (arg == "--status-file") {
      options.status_file = value;
    } else if (arg == "--ovmf-code") {
      options.firmware.efi_code = value;
    } else if (arg == "--ovmf-vars") {
      options.firmware.efi_vars = value;
    } else if (arg == "--ovmf-secboot-code") {
      options.firmware.secure_boot_code = value;
    } else if (arg == "--ovmf-secboot-vars") {
      options.firmware.secure_boot_vars = value;
    } else if (arg == "--emulation") {
      if (value == "auto") {
        options.emulation = Emulation::auto_detect;
      } else if (value == "software") {
        options.emulation = Emulation::software;
      } else if (value == "kvm") {
        options.emulation = Emulation::kvm;
      } else {
        return Error{"--emulation must be auto, software or kvm, not \"" + value + "\""};
      }
    } else if (arg == "--grace-period") {
      long seconds = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (ec != std::errc() || end != value.data() + value.size() || seconds < 0) {
        return Error{"--grace-period must be a non-negative number of seconds, not \"" + value + "\""};
      }
      options.grace_period_seconds = seconds;
    } else {
      return Error{"unknown option " + std::string(arg)};
    }
  }
  if (options.help) {
    return options;
  }
  const int inputs =
      (options.vmi_file.empty() ? 0 : 1) + (options.vm_file.empty() ? 0 : 1) + (options.vmi_name.empty() ? 0 : 1);
  if (inputs != 1) {
    return Error{"exactly one of --vmi, --vm or --vmi-name is required"};
  }
  if (!options.objects.empty() && options.vm_file.empty()) {
    return Error{"--objects is only used with --vm"};
  }
  return options;
}

}  // namespace vmgate::launcher
