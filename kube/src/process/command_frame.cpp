#include "vmgate/kube/command_frame.hpp"

namespace vmgate::kube {

int usage_error(const CommandName& name, const Error& error, std::ostream& err) {
  err << name.error_prefix << error.message << '\n';
  if (!name.help_command.empty()) {
    err << "See '" << name.help_command << " --help'.\n";
  }
  return exit_usage;
}

}  // namespace vmgate::kube
