// `vmgate-launcher`: wires the command line to the launcher library.
#include <exception>
#include <iostream>
#include <string_view>
#include <vector>

#include "vmgate/launcher/launcher_main.hpp"

int main(int argc, char** argv) {
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
