#include "vmgate/launcher/launcher_main.hpp"

#include <iostream>

#include "vmgate/launcher/converter.hpp"
#include "vmgate/launcher/options.hpp"
#include "vmgate/launcher/vmi_source.hpp"

namespace vmgate::launcher {

int run_launcher(std::span<const std::string_view> args, std::istream& in, std::ostream& out, std::ostream& err) {
  constexpr int exit_usage = 2;
  Result<LauncherOptions> options = parse_launcher_options(args);
  if (!options) {
    err << "vmgate-launcher: " << options.error().message << "\nSee 'vmgate-launcher --help'.\n";
    return exit_usage;
  }
  if (options->help) {
    out << launcher_usage();
    return 0;
  }
  Result<json::Document> vmi = load_vmi(*options, in);
  if (!vmi) {
    err << "vmgate-launcher: " << vmi.error().message << '\n';
    return exit_usage;
  }
  ConvertOptions convert_options;
  convert_options.software_emulation = use_software_emulation(options->emulation);
  convert_options.firmware = options->firmware;
  convert_options.layout.serial_log = options->console_log;
  Result<std::string> xml = convert(*vmi, convert_options);
  if (!xml) {
    err << "vmgate-launcher: " << xml.error().message << '\n';
    return exit_usage;
  }
  if (options->print_xml) {
    out << *xml;
    return 0;
  }
  err << "vmgate-launcher: booting the domain is not implemented yet; use --print-xml\n";
  return 1;
}

}  // namespace vmgate::launcher
