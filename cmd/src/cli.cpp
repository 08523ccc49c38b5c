#include "vmgate/cmd/cli.hpp"

#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "vmgate/controller/controller_command.hpp"
#include "vmgate/kube/command_frame.hpp"
#include "vmgate/server/certs_command.hpp"
#include "vmgate/server/certs_options.hpp"
#include "vmgate/server/subresources_command.hpp"
#include "vmgate/server/subresources_options.hpp"
#include "vmgate/server/vm_verbs.hpp"
#include "vmgate/server/check_command.hpp"
#include "vmgate/server/check_options.hpp"
#include "vmgate/server/kubectl_plugin.hpp"
#include "vmgate/server/serve_command.hpp"
#include "vmgate/server/serve_options.hpp"

#ifndef VMGATE_VERSION
#define VMGATE_VERSION "unknown"
#endif

namespace vmgate::cli {

namespace {

using kube::exit_usage;

int fail(const Console& console, std::string_view message) {
  console.err << "error: " << message << '\n';
  return exit_usage;
}

bool file_exists(const std::string& path) {
  std::error_code error;
  return std::filesystem::exists(path, error);
}

int check(std::span<const std::string_view> args, const Console& console, Frontend frontend) {
  const std::string command = std::string(command_name(frontend)) + " check";
  kube::CommandStart<CheckOptions> start = kube::start_command(
      parse_check_options(args, frontend), {"error: ", command}, [frontend] { return check_usage(frontend); },
      console.out, console.err);
  if (!start.options) {
    return start.exit_code;
  }
  std::optional<CheckOptions>& options = start.options;
  // kubectl's plugins act on kubectl's cluster: without a source, the kubeconfig kubectl reads.
  if (frontend == Frontend::kubectl_plugin && options->kubeconfig.empty() && options->objects.empty()) {
    Result<std::string> kubeconfig = default_kubeconfig(std::getenv("KUBECONFIG"), std::getenv("HOME"), file_exists);
    if (!kubeconfig) {
      return fail(console, kubeconfig.error().message);
    }
    options->kubeconfig = std::move(kubeconfig.value());
  }
  Result<CheckRun> run = run_check(*options, console.in);
  if (!run) {
    return fail(console, run.error().message);
  }
  for (const std::string& note : run->notes) {
    console.err << "note: " << note << '\n';
  }
  // An unusable file is reported and the others judged, as `kubectl apply -f DIR` applies
  // them; the exit status stays 2. With nothing judged, stdout stays empty.
  for (const std::string& unusable : run->unusable) {
    console.err << "error: " << unusable << '\n';
  }
  if (run->results.empty()) {
    return exit_status(*run);
  }
  // Everything is rendered before anything is written, so that a failure leaves stdout empty.
  std::string rendered;
  switch (options->output) {
    case OutputFormat::text:
      rendered = render_text(run->results, console.color);
      break;
    case OutputFormat::json:
      rendered = render_json(report_document(run->results));
      break;
    case OutputFormat::yaml: {
      Result<std::string> yaml = render_yaml(report_document(run->results));
      if (!yaml) {
        return fail(console, yaml.error().message);
      }
      rendered = std::move(yaml.value());
      break;
    }
  }
  console.out << rendered;
  console.out.flush();
  return exit_status(*run);
}

int dispatch(std::span<const std::string_view> args, const Console& console, Frontend frontend) {
  if (args.empty()) {
    console.err << usage(frontend);
    return exit_usage;
  }
  const std::string_view command = args.front();
  const std::span<const std::string_view> rest = args.subspan(1);
  if (command == "check") {
    return check(rest, console, frontend);
  }
  if (command == "-h" || command == "--help" || command == "help") {
    if (command == "help" && !rest.empty() && rest.front() == "check") {
      console.out << check_usage(frontend);
      return 0;
    }
    if (command == "help" && !rest.empty() && rest.front() == "serve") {
      console.out << serve::serve_usage();
      return 0;
    }
    if (command == "help" && !rest.empty() && rest.front() == "controller") {
      console.out << controller::controller_usage();
      return 0;
    }
    if (command == "help" && !rest.empty() && rest.front() == "subresources") {
      console.out << subresources::subresources_usage();
      return 0;
    }
    if (command == "help" && !rest.empty() && rest.front() == "certs") {
      console.out << certs::certs_usage();
      return 0;
    }
    console.out << usage(frontend);
    return 0;
  }
  if (command == "version" || command == "--version") {
    if (!rest.empty()) {
      return fail(console, "version takes no arguments");
    }
    console.out << "vmgate " << VMGATE_VERSION << '\n';
    return 0;
  }
  if (command == "serve") {
    return serve::run_serve(rest, console.out, console.err);
  }
  if (command == "certs") {
    return certs::run_certs(rest, console.out, console.err);
  }
  if (command == "controller") {
    return controller::run_controller(rest, console.out, console.err);
  }
  if (command == "subresources") {
    return subresources::run_subresources(rest, console.out, console.err);
  }
  if (subresources::is_vm_verb(command)) {
    // Without --kubeconfig, the kubeconfig kubectl reads (else the pod's service account).
    std::optional<std::string> kubeconfig;
    if (Result<std::string> found = default_kubeconfig(std::getenv("KUBECONFIG"), std::getenv("HOME"), file_exists);
        found) {
      kubeconfig = std::move(found.value());
    }
    return subresources::run_vm_verb(command, rest, command_name(frontend), kubeconfig, console.out, console.err);
  }
  console.err << "error: unknown command \"" << command << "\"\nSee '" << command_name(frontend) << " --help'.\n";
  return exit_usage;
}

}  // namespace

std::string_view usage() {
  return usage(Frontend::vmgate);
}

std::string_view usage(Frontend frontend) {
  if (frontend == Frontend::kubectl_plugin) {
    return R"(kubectl vmgate: KubeVirt-compatible admission for VirtualMachines and VirtualMachineInstances.

Usage:
  kubectl vmgate check [-f FILE|DIR|-]... [--context NAME] [-n NS] [-o text|json|yaml]
                       [--objects FILE|DIR|-... | --kubeconfig FILE] [--old FILE|-] [--operation CREATE|UPDATE]
  kubectl vmgate version
  kubectl vmgate --help

Commands:
  check    run the admission webhooks on manifests and print the verdicts, against the
           objects of the cluster kubectl uses ($KUBECONFIG or ~/.kube/config, its current
           context or --context)
  serve    serve the admission webhooks over HTTPS (as 'vmgate serve')
  version  print vmgate's version

Run 'kubectl vmgate check --help' for its options.
)";
  }
  return R"(vmgate: KubeVirt-compatible admission for VirtualMachines and VirtualMachineInstances.

Usage:
  vmgate serve [--listen ADDR:PORT] [--tls-cert FILE --tls-key FILE] [--objects DIR]... [options]
  vmgate check [-f FILE|DIR|-]... [--objects FILE|DIR|-]... [--old FILE|-]
               [--operation CREATE|UPDATE] [--namespace NS] [-o text|json|yaml]
  vmgate certs --namespace NS --service NAME --secret NAME [--write-dir DIR] [--once] [options]
  vmgate controller [--kubeconfig FILE] [--namespace NS] [--lease-namespace NS --lease-name NAME] [options]
  vmgate subresources --tls-cert FILE --tls-key FILE --node-link-cert FILE --node-link-key FILE
                      --node-link-ca FILE [options]
  vmgate start|stop|restart NAME [-n NS] [--force --grace-period 0] [--dry-run]
  vmgate pause|unpause vm|vmi NAME [-n NS] [--dry-run]
  vmgate console NAME [-n NS] [--timeout MINUTES]
  vmgate version
  vmgate --help

Commands:
  serve    serve the admission webhooks over HTTPS to kube-apiserver
  certs    keep a self-managed CA and serving certificate, and the webhooks' CA bundle
  controller  run VirtualMachines: VMIs from their run strategies, a launcher pod per VMI
  subresources  serve KubeVirt's subresources.kubevirt.io API for virtctl (start, stop, console, ...)
  check    run the admission webhooks on manifests, offline, and print the verdicts
  start, stop, restart, pause, unpause, console  virtctl's verbs, through the cluster's subresources.kubevirt.io API
  version  print vmgate's version

Run 'vmgate serve --help', 'vmgate check --help', 'vmgate certs --help',
'vmgate controller --help' or 'vmgate subresources --help' for their options.
As 'kubectl-vmgate' on the PATH (a symlink to vmgate), it is the kubectl plugin 'kubectl vmgate'.
)";
}

int run(std::span<const std::string_view> args, const Console& console, Frontend frontend) {
  try {
    return dispatch(args, console, frontend);
  } catch (const std::exception& error) {
    console.err << "error: internal error: " << error.what() << '\n';
  } catch (...) {
    console.err << "error: internal error\n";
  }
  return exit_usage;
}

int run(int argc, char** argv, std::istream& in, std::ostream& out, std::ostream& err) {
  std::vector<std::string_view> args;
  for (int i = 1; i < argc; ++i) {
    args.emplace_back(argv[i]);  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic): argv
  }
  const bool color = &out == &std::cout && ::isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr;
  // kubectl runs `kubectl vmgate ...` as kubectl-vmgate, this binary under its plugin name.
  const Frontend frontend = argc > 0 ? frontend_of(argv[0]) : Frontend::vmgate;
  return run(args, Console{in, out, err, color}, frontend);
}

}  // namespace vmgate::cli
