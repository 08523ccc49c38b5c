// `vmgate controller`'s command line.
#include <algorithm>
#include <array>

#include "vmgate/admission/release.hpp"
#include "vmgate/common/options.hpp"
#include "vmgate/controller/controller_command.hpp"
#include "vmgate/kube/go_duration.hpp"

namespace vmgate::controller {
namespace {

enum class Option : std::size_t {
  kubeconfig,
  context,
  namespace_name,
  kubevirt_version,
  lease_namespace,
  lease_name,
  identity,
  launcher_image,
  container_disk_delivery,
  use_emulation,
  resync,
  lease_duration,
  help,
};
constexpr std::size_t option_count = common::option_index(Option::help) + 1;

constexpr auto specs = common::option_table<Option, option_count>([](auto set) {
  set(Option::kubeconfig, {.name = "kubeconfig",
                           .non_empty = true,
                           .value_name = "FILE",
                           .help = "the Kubernetes API of this kubeconfig (default: the pod's service account)."});
  set(Option::context, {.name = "context",
                        .non_empty = true,
                        .value_name = "NAME",
                        .help = "the kubeconfig context (default: its current-context)."});
  set(Option::namespace_name, {.name = "namespace",
                               .alias = 'n',
                               .non_empty = true,
                               .value_name = "NS",
                               .help = "only VMs, VMIs and pods of this namespace (default: all namespaces)."});
  set(Option::kubevirt_version,
      {.name = "kubevirt-version", .non_empty = true, .value_name = "VERSION", .help = admission::release_option_help});
  set(Option::lease_namespace,
      {.name = "lease-namespace", .non_empty = true, .value_name = "NS", .help = "the namespace of the Lease."});
  set(Option::lease_name, {.name = "lease-name",
                           .non_empty = true,
                           .value_name = "NAME",
                           .help = "elect a leader on this coordination.k8s.io/v1 Lease: only the leader\n"
                                   "writes (without it: one replica only)."});
  set(Option::identity, {.name = "identity",
                         .non_empty = true,
                         .value_name = "ID",
                         .help = "this replica's holderIdentity (default: HOSTNAME_PID)."});
  set(Option::launcher_image, {.name = "launcher-image",
                               .non_empty = true,
                               .value_name = "IMAGE",
                               .help = "the image of the launcher pods' compute container\n"
                                       "(default vmgate-launcher:latest)."});
  set(Option::container_disk_delivery,
      {.name = "container-disk-delivery",
       .non_empty = true,
       .value_name = "copy|image-volume",
       .help = "how a containerDisk reaches the launcher. copy (default): init containers\n"
               "copy the disk out of its image into an emptyDir (any runtime; costs the\n"
               "image's size on the node). image-volume: a pod image volume (Kubernetes\n"
               "ImageVolume; containerd 2.1+ or CRI-O)."});
  set(Option::use_emulation, {.name = "use-emulation",
                              .flag = true,
                              .help = "no devices.kubevirt.io/kvm request: guests run under TCG (KubeVirt's\n"
                                      "developerConfiguration.useEmulation)."});
  set(Option::resync, {.name = "resync", .value_name = "D", .help = "plan at least this often (default 30s)."});
  set(Option::lease_duration,
      {.name = "lease-duration", .value_name = "D", .help = "the Lease's duration (default 15s; renewed every 2s)."});
  set(Option::help, {.name = "help", .alias = 'h', .flag = true, .help = "print this help."});
});
static_assert(common::every_option_declared(specs), "every Option is declared");

// The options stored as given; parse_controller_options() checks the others.
constexpr std::array fields{
    common::bind_option(Option::kubeconfig, &ControllerOptions::kubeconfig),
    common::bind_option(Option::context, &ControllerOptions::context),
    common::bind_option(Option::namespace_name, &ControllerOptions::namespace_name),
    common::bind_option(Option::lease_namespace, &ControllerOptions::lease_namespace),
    common::bind_option(Option::lease_name, &ControllerOptions::lease_name),
    common::bind_option(Option::identity, &ControllerOptions::identity),
    common::bind_option(Option::launcher_image, &ControllerOptions::launcher_image),
    common::bind_option(Option::use_emulation, &ControllerOptions::use_emulation),
    common::bind_option(Option::help, &ControllerOptions::help),
};

// A duration option no shorter than `minimum` (a resync or lease too short to mean anything).
Result<std::chrono::milliseconds> duration_option(std::string_view name, std::string_view text,
                                                  std::chrono::milliseconds minimum) {
  Result<std::chrono::nanoseconds> parsed = kube::parse_duration_option(name, text, false);
  if (!parsed) {
    return parsed.error();
  }
  const auto value = std::chrono::duration_cast<std::chrono::milliseconds>(*parsed);
  if (value < minimum) {
    return Error{"--" + std::string(name) + " must be at least " + std::to_string(minimum.count()) + "ms"};
  }
  return value;
}

constexpr common::CommandSyntax<ControllerOptions> syntax{"controller", specs, fields};

Status apply_option(ControllerOptions& options, Option option, std::string_view value) {
  const std::string text(value);
  switch (option) {
    case Option::kubevirt_version:
      return admission::set_release_option(options.release, text);
    case Option::container_disk_delivery:
      if (text == "copy") {
        options.container_disk_delivery = ContainerDiskDelivery::copy;
      } else if (text == "image-volume") {
        options.container_disk_delivery = ContainerDiskDelivery::image_volume;
      } else {
        return Error{"--container-disk-delivery must be copy or image-volume, not \"" + text + "\""};
      }
      break;
    case Option::resync: {
      Result<std::chrono::milliseconds> duration = duration_option("resync", value, std::chrono::milliseconds(100));
      if (!duration) {
        return duration.error();
      }
      options.resync = *duration;
      break;
    }
    case Option::lease_duration: {
      Result<std::chrono::milliseconds> duration = duration_option("lease-duration", value, std::chrono::seconds(3));
      if (!duration) {
        return duration.error();
      }
      options.lease_duration = std::chrono::duration_cast<std::chrono::seconds>(*duration);
      break;
    }
    default:  // stored above
      break;
  }
  return Ok{};
}

}  // namespace

Result<ControllerOptions> parse_controller_options(std::span<const std::string_view> args) {
  ControllerOptions options;
  Result<common::ParsedArgs> parsed = common::parse_command_line(args, syntax, options, apply_option);
  if (!parsed) {
    return parsed.error();
  }
  if (options.help) {
    return options;
  }
  if (options.lease_name.empty() != options.lease_namespace.empty()) {
    return Error{"--lease-name and --lease-namespace go together"};
  }
  if (!options.identity.empty() && options.lease_name.empty()) {
    return Error{"--identity is only used with --lease-name"};
  }
  if (!options.context.empty() && options.kubeconfig.empty()) {
    return Error{"--context needs --kubeconfig"};
  }
  return options;
}

std::string controller_usage() {
  return "Usage: vmgate controller [--kubeconfig FILE [--context NAME]] [--namespace NS]\n"
         "                         [--lease-namespace NS --lease-name NAME [--identity ID]] [options]\n\n"
         "The VM controller: starts and stops VirtualMachineInstances as the VirtualMachines' run\n"
         "strategies say, runs each in a launcher pod (vmgate-launcher --vmi FILE, the VMI in a\n"
         "pod annotation) and reflects the pods into the VMI and VM status (docs/controller.md). SIGTERM: release the "
         "Lease and exit 0.\n"
         "\nOptions:\n" +
         common::format_options(specs);
}

}  // namespace vmgate::controller
