#pragma once
// `vmgate subresources`: KubeVirt's aggregated API subresources.kubevirt.io (virt-api's
// subresource half) for virtctl. Reads and writes VMs and VMIs through the Kubernetes API and
// reaches a VMI's guest through the node agent on its node (docs/subresources.md).
#include <ostream>
#include <span>
#include <string_view>

namespace vmgate::subresources {

/// Runs until SIGTERM or SIGINT; 0 then, 1 with a message on `err` when it cannot start.
int run_subresources(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace vmgate::subresources
