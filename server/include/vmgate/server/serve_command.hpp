#pragma once
// `vmgate serve`: wires options, certificates, cluster objects, metrics and the log into the
// server and runs it until SIGTERM/SIGINT has drained it (docs/webhook.md, "vmgate serve command line").
#include <ostream>
#include <span>
#include <string_view>

namespace vmgate::serve {

/// Runs `vmgate serve <args>`. Exit status 0 after a graceful shutdown (or --help), 2 when
/// the arguments, the certificate, the objects or the listen addresses are unusable (the
/// message, on `err`, names the option or file). Log lines go to stderr.
int run_serve(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace vmgate::serve
