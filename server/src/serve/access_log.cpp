#include "vmgate/server/access_log.hpp"

#include "vmgate/kube/log_line.hpp"

namespace vmgate::serve {

std::string admission_line(std::chrono::system_clock::time_point now, webhook::Endpoint endpoint,
                           const webhook::ReviewSummary& summary, std::chrono::nanoseconds latency) {
  kube::LogLine line(now, "info", "admission");
  line.text("uid", summary.uid)
      .text("webhook", webhook::path_of(endpoint).substr(1))
      .text("operation", summary.operation)
      .text("kind", summary.kind)
      .text("namespace", summary.namespace_name)
      .text("name", summary.name)
      .flag("dry_run", summary.dry_run);
  const bool refused = !summary.error.empty();
  line.text("decision", refused           ? "error"
                        : summary.allowed ? "allowed"
                                          : "denied")
      .integer("code", summary.code)
      .milliseconds("latency_ms", latency);
  if (refused) {
    line.text("error", summary.error);
  }
  return line.finish();
}

}  // namespace vmgate::serve
