// `vmgate-launcher`: wires the command line to the launcher library.
#include <iostream>
#include <string_view>
#include <vector>

#include "vmgate/launcher/launcher_main.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  return vmgate::launcher::run_launcher(args, std::cin, std::cout, std::cerr);
}
