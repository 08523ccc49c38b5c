#pragma once
// `vmgate controller` (docs/controller.md): the VM controller. Watches VirtualMachines,
// VirtualMachineInstances and launcher pods, plans with controller_plan.hpp and writes the
// plan while it holds the Lease (when one is named). SIGTERM or SIGINT: stop, release the
// Lease, exit 0.
#include <chrono>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>

#include "vmgate/admission/release.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/controller/controller_pod.hpp"

namespace vmgate::controller {

struct ControllerOptions {
  std::string kubeconfig;
  std::string context;
  std::string namespace_name;  // empty: every namespace
  std::string lease_namespace;
  std::string lease_name;  // empty: no leader election (one replica only)
  std::string identity;    // empty: <hostname>_<pid>
  std::string launcher_image = "vmgate-launcher:latest";
  ContainerDiskDelivery container_disk_delivery = ContainerDiskDelivery::copy;
  bool use_emulation = false;
  std::optional<admission::Release> release;  // --kubevirt-version; nullopt: the KubeVirt CR's
  std::chrono::milliseconds resync{30000};
  std::chrono::seconds lease_duration{15};
  bool help = false;
};

/// Parses the arguments after `controller`. Errors name the option: unknown, missing or empty
/// values, a malformed duration, --lease-name without --lease-namespace (or the reverse),
/// --identity without --lease-name, --context without --kubeconfig, an operand, a
/// --container-disk-delivery other than its values.
Result<ControllerOptions> parse_controller_options(std::span<const std::string_view> args);

std::string controller_usage();

/// Runs the controller until SIGTERM/SIGINT. Exit status: 0 after a signal, 2 unusable options
/// or client configuration.
int run_controller(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace vmgate::controller
