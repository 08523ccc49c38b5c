#pragma once
// `vmgate certs`: the executor of the rotation planner (certs_plan.hpp). Each pass re-reads the
// Secret and the webhook configurations, asks the planner for the next step and does it (issue
// a pair, PUT or create the Secret, PATCH the caBundles, probe the endpoints), re-reading after
// every write, until the planner says steady or wait; --write-dir is kept equal to the Secret's
// serving pair whenever that pair is valid. A 409 (another replica wrote first) re-reads and
// plans again. docs/certificates.md.
#include <ostream>
#include <span>
#include <string_view>

namespace vmgate::certs {

/// Runs `vmgate certs <args>`. Exit status: 0 (--once done, or SIGTERM/SIGINT in continuous
/// mode, or --help), 1 when a pass fails in --once mode (the reason on stderr as a JSON log line
/// and as "error: ..." — an API refusal names the verb and the resource), 2 for unusable
/// arguments or credentials. Continuous mode logs a failed pass and tries again on the next
/// --check-interval.
int run_certs(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

}  // namespace vmgate::certs
