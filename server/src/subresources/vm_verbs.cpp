// `vmgate start|stop|restart|pause|unpause`: virtctl's verbs over the subresources API.
#include "vmgate/server/vm_verbs.hpp"

#include <termios.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <thread>

#include "vmgate/common/json.hpp"
#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/client_config.hpp"

namespace vmgate::subresources {

namespace {

constexpr std::string_view verbs[] = {"start", "stop", "restart", "pause", "unpause", "console"};

Result<std::string_view> value_of(std::span<const std::string_view> args, std::size_t& i, std::string_view name) {
  const std::string_view arg = args[i];
  if (const std::size_t equals = arg.find('='); equals != std::string_view::npos) {
    return arg.substr(equals + 1);
  }
  if (i + 1 >= args.size()) {
    return Error{std::string(name) + " needs a value"};
  }
  return args[++i];
}

bool is(std::string_view arg, std::string_view name) {
  return arg == name || (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=');
}

Result<bool> flag_value(std::string_view arg, std::string_view name) {
  if (arg == name || arg == std::string(name) + "=true") {
    return true;
  }
  if (arg == std::string(name) + "=false") {
    return false;
  }
  return Error{std::string(name) + " takes true or false, not \"" + std::string(arg.substr(name.size() + 1)) + "\""};
}

// The terminal in raw mode while the console is open (as virtctl's), restored after.
class RawTerminal {
 public:
  explicit RawTerminal(int fd) : fd_(fd) {
    if (::isatty(fd_) == 1 && ::tcgetattr(fd_, &saved_) == 0) {
      termios raw = saved_;
      ::cfmakeraw(&raw);
      active_ = ::tcsetattr(fd_, TCSANOW, &raw) == 0;
    }
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  ~RawTerminal() {
    if (active_) {
      ::tcsetattr(fd_, TCSANOW, &saved_);
    }
  }

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

// virtctl console: retried while the API answers 400 (the VMI is not running yet), for
// --timeout minutes; stdin and stdout relayed; Ctrl+] ends it.
int run_console(kube::ApiConnection& api, const VmVerb& verb, std::string_view namespace_, std::ostream& out,
                std::ostream& err) {
  constexpr unsigned char escape = 0x1d;  // Ctrl+]
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(verb.timeout_minutes);
  for (;;) {
    std::optional<RawTerminal> raw;
    Result<kube::ApiConnection::Relayed, kube::TransportError> relayed =
        api.relay_websocket(vm_verb_path(verb, namespace_), "plain.kubevirt.io", STDIN_FILENO, STDOUT_FILENO, escape,
                            std::chrono::seconds(30), [&] {
                              out << verb.done << std::endl;
                              raw.emplace(STDIN_FILENO);
                            });
    raw.reset();
    if (!relayed) {
      err << verb.error_prefix << relayed.error().message << "\n";
      return 1;
    }
    if (!relayed->refused) {
      return 0;
    }
    if (relayed->refused->status != 400 || std::chrono::steady_clock::now() >= give_up) {
      err << verb.error_prefix << kube::status_message(*relayed->refused) << "\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace

bool is_vm_verb(std::string_view command) {
  for (std::string_view verb : verbs) {
    if (command == verb) {
      return true;
    }
  }
  return false;
}

Result<VmVerb> parse_vm_verb(std::string_view verb, std::span<const std::string_view> args) {
  VmVerb parsed;
  parsed.subresource = std::string(verb);
  bool dry_run = false;
  bool paused = false;
  std::optional<bool> force;
  std::optional<std::int64_t> grace_period;
  std::vector<std::string_view> operands;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "-h" || arg == "--help") {
      parsed.help = true;
      return parsed;
    }
    Result<std::string_view> value = std::string_view();
    if (is(arg, "-n") || is(arg, "--namespace")) {
      value = value_of(args, i, arg.substr(0, arg.find('=')));
      if (value) {
        parsed.namespace_ = std::string(*value);
      }
    } else if (is(arg, "--kubeconfig")) {
      value = value_of(args, i, "--kubeconfig");
      if (value) {
        parsed.kubeconfig = std::string(*value);
      }
    } else if (is(arg, "--context")) {
      value = value_of(args, i, "--context");
      if (value) {
        parsed.context = std::string(*value);
      }
    } else if (verb != "console" && is(arg, "--dry-run")) {
      Result<bool> on = flag_value(arg, "--dry-run");
      if (!on) {
        return on.error();
      }
      dry_run = *on;
    } else if (verb == "start" && is(arg, "--paused")) {
      Result<bool> on = flag_value(arg, "--paused");
      if (!on) {
        return on.error();
      }
      paused = *on;
    } else if ((verb == "stop" || verb == "restart") && is(arg, "--force")) {
      Result<bool> on = flag_value(arg, "--force");
      if (!on) {
        return on.error();
      }
      force = *on;
    } else if ((verb == "stop" || verb == "restart") && is(arg, "--grace-period")) {
      value = value_of(args, i, "--grace-period");
      if (value) {
        std::int64_t seconds = 0;
        const auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), seconds);
        if (error != std::errc() || end != value->data() + value->size()) {
          return Error{"--grace-period must be a number of seconds, not \"" + std::string(*value) + "\""};
        }
        grace_period = seconds;
      }
    } else if (verb == "console" && is(arg, "--timeout")) {
      value = value_of(args, i, "--timeout");
      if (value) {
        int minutes = 0;
        const auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), minutes);
        if (error != std::errc() || end != value->data() + value->size() || minutes < 0) {
          return Error{"--timeout must be a number of minutes, not \"" + std::string(*value) + "\""};
        }
        parsed.timeout_minutes = minutes;
      }
    } else if (arg.size() > 1 && arg.front() == '-') {
      return Error{"unknown flag: " + std::string(arg.substr(0, arg.find('=')))};
    } else {
      operands.push_back(arg);
    }
    if (!value) {
      return value.error();
    }
  }
  const bool by_kind = verb == "pause" || verb == "unpause";
  const std::size_t wanted = by_kind ? 2 : 1;
  if (operands.size() != wanted) {
    return Error{by_kind ? "expected vm|vmi NAME" : "expected one VM name"};
  }
  if (by_kind) {
    const std::string_view kind = operands[0];
    if (kind == "vm" || kind == "virtualmachine") {
      parsed.target_kind = "vm";
    } else if (kind == "vmi" || kind == "virtualmachineinstance") {
      parsed.target_kind = "vmi";
    } else {
      return Error{"unsupported resource type \"" + std::string(kind) + "\": vm or vmi"};
    }
  } else {
    parsed.target_kind = verb == "console" ? "vmi" : "vm";
  }
  parsed.name = std::string(operands.back());
  if (verb == "console") {
    parsed.method = "GET";
    parsed.done = "Successfully connected to " + parsed.name + " console. Press Ctrl+] to exit console.";
    parsed.error_prefix = "Can't connect to the console of VirtualMachineInstance " + parsed.name + ": ";
    return parsed;
  }
  if (force.value_or(false) != grace_period.has_value()) {
    return Error{"Must both use --force=true and set --grace-period."};
  }
  json::Document body(rapidjson::kObjectType);
  auto& a = body.GetAllocator();
  if (dry_run) {
    json::Value list(rapidjson::kArrayType);
    list.PushBack(json::make_string("All", a), a);
    json::set(body, "dryRun", std::move(list), a);
  }
  if (paused) {
    json::set(body, "paused", json::Value(true), a);
  }
  if (grace_period) {
    json::set(body, verb == "stop" ? "gracePeriod" : "gracePeriodSeconds", json::Value(*grace_period), a);
  }
  parsed.body = json::to_string(body);
  if (verb == "start" || verb == "stop" || verb == "restart") {
    parsed.done = "VM " + parsed.name + " was scheduled to " + std::string(verb);
    parsed.error_prefix =
        verb == "start"  ? "Error starting VirtualMachine "
        : verb == "stop" ? (force ? "error force stopping VirtualMachine: " : "error stopping VirtualMachine ")
                         : (force ? "error force restarting VirtualMachine: " : "error restarting VirtualMachine: ");
  } else {
    parsed.done = "VMI " + parsed.name + " was scheduled to " + std::string(verb);
    parsed.error_prefix = std::string(verb == "pause" ? "Error pausing" : "Error unpausing") +
                          " VirtualMachineInstance " + parsed.name + ": ";
  }
  return parsed;
}

std::string vm_verb_path(const VmVerb& verb, std::string_view namespace_) {
  const std::string_view resource =
      verb.subresource == "pause" || verb.subresource == "unpause" || verb.subresource == "console"
          ? "virtualmachineinstances"
          : "virtualmachines";
  return "/apis/subresources.kubevirt.io/v1/namespaces/" + std::string(namespace_) + "/" + std::string(resource) + "/" +
         verb.name + "/" + verb.subresource;
}

std::string vm_verb_usage(std::string_view command_name, std::string_view verb) {
  const std::string name(command_name);
  if (verb == "console") {
    return "Usage: " + name +
           " console NAME [-n NS] [--timeout MINUTES] [--kubeconfig FILE] [--context NAME]\n"
           "The VMI's serial console, as `virtctl console` (Ctrl+] leaves it; a VMI not running yet is\n"
           "waited for up to --timeout minutes, 5 by default).\n";
  }
  if (verb == "pause" || verb == "unpause") {
    return "Usage: " + name + " " + std::string(verb) +
           " vm|vmi NAME [-n NS] [--dry-run] [--kubeconfig FILE] [--context NAME]\n";
  }
  std::string extra = verb == "start" ? " [--paused]" : " [--force --grace-period 0]";
  return "Usage: " + name + " " + std::string(verb) + " NAME [-n NS]" + extra +
         " [--dry-run] [--kubeconfig FILE] [--context NAME]\n"
         "Sends KubeVirt's subresource request, as `virtctl " +
         std::string(verb) + "` does (docs/subresources.md).\n";
}

int run_vm_verb(std::string_view verb, std::span<const std::string_view> args, std::string_view command_name,
                const std::optional<std::string>& default_kubeconfig, std::ostream& out, std::ostream& err) {
  Result<VmVerb> parsed = parse_vm_verb(verb, args);
  if (!parsed) {
    err << "error: " << parsed.error().message << "\n" << vm_verb_usage(command_name, verb);
    return 1;
  }
  if (parsed->help) {
    out << vm_verb_usage(command_name, verb);
    return 0;
  }
  const std::string kubeconfig =
      !parsed->kubeconfig.empty() ? parsed->kubeconfig : default_kubeconfig.value_or(std::string());
  Result<kube::ClientConfig> config =
      kube::kubeconfig_or_in_cluster(kubeconfig, parsed->context, "no cluster: give --kubeconfig");
  if (!config) {
    err << "error: " << config.error().message << "\n";
    return 1;
  }
  const std::string namespace_ = !parsed->namespace_.empty()          ? parsed->namespace_
                                 : !config->default_namespace.empty() ? config->default_namespace
                                                                      : std::string("default");
  Result<std::unique_ptr<kube::ApiConnection>> api = kube::ApiConnection::create(*config);
  if (!api) {
    err << "error: " << api.error().message << "\n";
    return 1;
  }
  constexpr auto deadline = std::chrono::seconds(30);
  if (verb == "console") {
    return run_console(**api, *parsed, namespace_, out, err);
  }
  std::string vm_strategy;
  if (parsed->target_kind == "vm" && (verb == "pause" || verb == "unpause")) {
    // virtctl reads the VM first: a missing VM is its error, and a paused VM's VMI has its name.
    Result<kube::HttpResponse, kube::TransportError> vm =
        (*api)->get("/apis/kubevirt.io/v1/namespaces/" + namespace_ + "/virtualmachines/" + parsed->name, deadline);
    if (!vm || vm->status != 200) {
      err << "Error getting VirtualMachine " << parsed->name << ": "
          << (vm ? kube::status_message(*vm) : vm.error().message) << "\n";
      return 1;
    }
  }
  Result<kube::HttpResponse, kube::TransportError> response =
      (*api)->request("PUT", vm_verb_path(*parsed, namespace_), parsed->body, "application/json", deadline);
  if (!response) {
    err << parsed->error_prefix << response.error().message << "\n";
    return 1;
  }
  if (response->status < 200 || response->status > 299) {
    err << parsed->error_prefix << kube::status_message(*response) << "\n";
    return 1;
  }
  out << parsed->done << "\n";
  return 0;
}

}  // namespace vmgate::subresources
