// `vmgate-launcher`: wires the command line to the launcher library.
#include <exception>
#include <iostream>
#include <optional>
#include <string_view>
#include <vector>

#include "vmgate/launcher/init_process.hpp"
#include "vmgate/launcher/launcher_main.hpp"

int main(int argc, char** argv) {
  if (const std::optional<int> init_status = vmgate::launcher::become_init_if_pid_one(); init_status) {
    return *init_status;
  }
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  try {
    return vmgate::launcher::run_launcher(args, std::cin, std::cout, std::cerr);
  } catch (const std::exception& error) {
    // Errors are values everywhere; this is the last word for a bug or an exhausted allocator,
    // still one line and a non-zero status rather than an abort.
    std::cerr << "vmgate-launcher: internal error: " << error.what() << '\n';
    return 1;
  } catch (...) {
    std::cerr << "vmgate-launcher: internal error\n";
    return 1;
  }
}
