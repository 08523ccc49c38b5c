// `vmgate`: wires the subcommands; all work is done in the libraries.
#include <iostream>

#include "vmgate/cmd/cli.hpp"

int main(int argc, char** argv) {
  return vmgate::cli::run(argc, argv, std::cin, std::cout, std::cerr);
}
