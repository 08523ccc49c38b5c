#pragma once
// The command line of `vmgate certs` (docs/certificates.md, "vmgate certs command line"). Pure;
// thread-safe.
#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/common/result.hpp"

namespace vmgate::certs {

struct CertsOptions {
  std::string namespace_name;           // --namespace
  std::string service;                  // --service
  std::string secret;                   // --secret
  std::vector<std::string> mutating;    // --mutating-webhook-configuration
  std::vector<std::string> validating;  // --validating-webhook-configuration
  std::string cluster_domain = "cluster.local";
  std::chrono::seconds ca_duration{8760 * 3600};
  std::chrono::seconds cert_duration{2160 * 3600};
  std::chrono::seconds renew_before{720 * 3600};
  std::string write_dir;
  bool once = false;
  std::chrono::milliseconds check_interval{60000};
  bool force_renew = false;
  std::string kubeconfig;
  std::string context;
  bool help = false;
};

/// Parses the arguments that follow `certs`. Options take their value as the next argument or
/// after `=`. Errors, each naming the option: an unknown option, a missing value, a repeated
/// option (other than the two webhook configuration lists), an empty name, a malformed or zero
/// duration, --renew-before not shorter than --cert-duration and --ca-duration,
/// --cert-duration longer than --ca-duration, a missing --namespace, --service or --secret,
/// a name that is not a DNS label (the Service) or subdomain, --context without
/// --kubeconfig, an operand.
Result<CertsOptions> parse_certs_options(std::span<const std::string_view> args);

/// `vmgate certs --help`.
std::string certs_usage();

}  // namespace vmgate::certs
