// `vmgate serve`: main()'s wiring of the webhook server.
#include "vmgate/server/serve_command.hpp"

#include <malloc.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/command_frame.hpp"
#include "vmgate/kube/log_line.hpp"
#include "vmgate/server/api_cluster_source.hpp"
#include "vmgate/server/metrics.hpp"
#include "vmgate/server/request_time.hpp"
#include "vmgate/server/serve_options.hpp"
#include "vmgate/server/server.hpp"
#include "vmgate/server/sources.hpp"
#include "vmgate/server/tls.hpp"

namespace vmgate::serve {

namespace {

using kube::exit_usage;

// The CPUs this process may run on (taskset, cgroup cpusets), not the machine's.
unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) {
      return static_cast<unsigned>(count);
    }
  }
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<unsigned>(online) : 1U;
}

struct DescriptorLimit {
  rlim_t before = 0;
  rlim_t after = 0;
  int error = 0;  // errno of a failed getrlimit/setrlimit
};

// Each open connection is a descriptor: the soft limit (often 1024) would cap connections
// far below --max-connections, so raise it to the hard limit.
DescriptorLimit raise_descriptor_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return {0, 0, errno};
  }
  DescriptorLimit result{limit.rlim_cur, limit.rlim_cur, 0};
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) == 0) {
      result.after = limit.rlim_max;
    } else {
      result.error = errno;
    }
  }
  return result;
}

std::string limit_text(rlim_t limit) {
  return limit == RLIM_INFINITY ? std::string("unlimited") : std::to_string(limit);
}

Result<bool> write_file(const std::filesystem::path& path, const std::string& content, mode_t mode) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << content;
  file.close();
  if (!file) {
    return Error{"cannot write " + path.string()};
  }
  ::chmod(path.c_str(), mode);
  return true;
}

struct DevelopmentCertificate {
  std::filesystem::path directory;
  tls::ServerFiles files;
};

// A CA and a certificate for localhost and the in-cluster service names, so that curl and a
// webhook configuration can verify the server against ca.crt.
Result<DevelopmentCertificate> make_development_certificate(const std::string& configured_directory) {
  std::filesystem::path directory = configured_directory;
  if (directory.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    directory = std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "vmgate-dev-cert";
  }
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    return Error{"--dev-cert-dir " + directory.string() + ": " + error.message()};
  }
  ::chmod(directory.c_str(), 0700);
  Result<tls::Authority> authority = tls::make_authority("vmgate development CA");
  if (!authority) {
    return authority.error();
  }
  Result<tls::IssuedCertificate> issued =
      tls::issue_certificate(*authority, "vmgate.vmgate-system.svc",
                             {"localhost", "vmgate", "vmgate.vmgate-system", "vmgate.vmgate-system.svc",
                              "vmgate.vmgate-system.svc.cluster.local"},
                             {"127.0.0.1", "::1"});
  if (!issued) {
    return issued.error();
  }
  DevelopmentCertificate result{directory, {(directory / "tls.crt").string(), (directory / "tls.key").string(), {}}};
  for (const auto& [name, content, mode] :
       {std::tuple{"ca.crt", tls::certificate_pem(*authority->certificate), mode_t{0644}},
        std::tuple{"tls.crt", issued->certificate_pem, mode_t{0644}},
        std::tuple{"tls.key", issued->private_key_pem, mode_t{0600}}}) {
    if (Result<bool> written = write_file(directory / name, content, mode); !written) {
      return written.error();
    }
  }
  return result;
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void log_event(kube::LogSink& log, std::string_view level, std::string_view message,
               std::initializer_list<std::pair<std::string_view, std::string_view>> fields = {}) {
  log.write_now(kube::event_line(std::chrono::system_clock::now(), level, message, fields));
}

// The Kubernetes API when --kubeconfig is given or vmgate runs in a pod (and --objects is not
// given); nullopt for the files.
Result<std::optional<kube::ClientConfig>> api_config(const ServeOptions& options) {
  if (!options.kubeconfig.empty()) {
    Result<kube::ClientConfig> config = kube::load_kubeconfig(options.kubeconfig, options.context);
    if (!config) {
      return config.error();
    }
    return std::optional<kube::ClientConfig>(std::move(config.value()));
  }
  const kube::Getenv getenv = [](const char* name) { return std::getenv(name); };
  if (options.objects.empty() && kube::in_cluster(getenv)) {
    Result<kube::ClientConfig> config = kube::in_cluster_config(getenv);
    if (!config) {
      return config.error();
    }
    return std::optional<kube::ClientConfig>(std::move(config.value()));
  }
  return std::optional<kube::ClientConfig>();
}

Result<std::unique_ptr<ClusterSource>> open_cluster(const ServeOptions& options, const admission::Pipeline& pipeline,
                                                    kube::LogSink& log) {
  Result<std::optional<kube::ClientConfig>> api = api_config(options);
  if (!api) {
    return api.error();
  }
  if (api->has_value()) {
    const kube::ClientConfig& config = **api;
    for (const std::string& warning : config.warnings) {
      log_event(log, "warning", "kubeconfig", {{"warning", warning}});
    }
    kube::CacheLog cache_log = [&log](std::string_view level, std::string_view message,
                                      const std::vector<std::pair<std::string, std::string>>& fields) {
      std::vector<std::pair<std::string_view, std::string_view>> views(fields.begin(), fields.end());
      log.write_now(kube::event_line(std::chrono::system_clock::now(), level, message, views));
    };
    kube::CacheTuning tuning;
    tuning.watch_idle = options.watch_idle;
    Result<std::unique_ptr<kube::WatchCache>> cache = kube::WatchCache::create(
        config, pipeline, std::move(cache_log), tuning, kube::admission_resources(options.kubevirt_namespace));
    if (!cache) {
      return cache.error();
    }
    (*cache)->start();
    log_event(log, "info", "reading the cluster from the Kubernetes API",
              {{"source", config.origin}, {"server", config.server}});
    if (!(*cache)->wait_synced(options.cache_sync_timeout)) {
      log_event(log, "warning", "cluster cache not synced yet; not ready until it is",
                {{"reason", (*cache)->not_synced_reason()}});
    }
    return std::unique_ptr<ClusterSource>(std::make_unique<ApiClusterSource>(std::move(cache.value())));
  }
  if (options.objects.empty()) {
    log_event(log, "warning",
              "no --objects: no instancetypes, preferences or volumes are known; VMs that reference them are "
              "admitted with a warning naming what is missing");
  }
  auto files = std::make_unique<FileClusterSource>(options.objects, "default", pipeline);
  const auto objects = files->load();
  if (!objects) {
    return Error{"--objects: " + objects.error().message};
  }
  for (const std::string& note : (*objects)->notes) {
    log_event(log, "info", "objects: skipped", {{"note", note}});
  }
  log_event(log, "info", "objects loaded", {{"objects", std::to_string((*objects)->store.size())}});
  return std::unique_ptr<ClusterSource>(std::move(files));
}

}  // namespace

int run_serve(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  kube::CommandStart<ServeOptions> start =
      kube::start_command(parse_serve_options(args, [](const char* name) { return std::getenv(name); }),
                          {"error: ", "vmgate serve"}, serve_usage, out, err);
  if (!start.options) {
    return start.exit_code;
  }
  ServeOptions& options = *start.options;
  // Keep freed heap instead of trimming it back to the kernel after every request: each
  // admission allocates and frees a few 64 KiB RapidJSON pools, and trimming them costs page
  // faults worth ~20 us per small VM (bench/README.md).
  mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
  mallopt(M_TOP_PAD, 16 * 1024 * 1024);
  const DescriptorLimit descriptors = raise_descriptor_limit();
  if (options.threads == 0) {
    options.threads = usable_cpus();
  }

  kube::LogSink log(STDERR_FILENO);
  auto event = [&log](std::string_view level, std::string_view message,
                      std::initializer_list<std::pair<std::string_view, std::string_view>> fields = {}) {
    log.write_now(kube::event_line(std::chrono::system_clock::now(), level, message, fields));
  };

  if (descriptors.error != 0) {
    event("warning", "cannot raise the descriptor limit",
          {{"limit", limit_text(descriptors.before)}, {"err", std::strerror(descriptors.error)}});
  } else if (descriptors.after != descriptors.before) {
    event("info", "descriptor limit raised to the hard limit",
          {{"from", limit_text(descriptors.before)}, {"to", limit_text(descriptors.after)}});
  }
  // At the limit accepting pauses until connections close: say so when it comes before
  // --max-connections (with a few dozen descriptors for the listeners, files and event loop).
  if (descriptors.after != RLIM_INFINITY && descriptors.after < options.max_connections + 64) {
    event("warning", "the descriptor limit is below --max-connections; accepting pauses when it is reached",
          {{"limit", limit_text(descriptors.after)}, {"max_connections", std::to_string(options.max_connections)}});
  }

  tls::ServerFiles files{options.tls_cert, options.tls_key, options.client_ca};
  if (options.tls_cert.empty()) {
    Result<DevelopmentCertificate> development = make_development_certificate(options.dev_cert_dir);
    if (!development) {
      err << "error: cannot generate a development certificate: " << development.error().message << '\n';
      return exit_usage;
    }
    files = development->files;
    event("warning", "no --tls-cert: serving a generated development certificate; not for production",
          {{"ca", (development->directory / "ca.crt").string()},
           {"cert", files.certificate},
           {"key", files.private_key}});
  }
  CertificateSource certificates(files, options.tls_profile);
  const auto certificate = certificates.load();
  if (!certificate) {
    err << "error: " << certificate.error().message << '\n';
    return exit_usage;
  }
  event("info", "certificate loaded",
        {{"subject", (*certificate)->subject}, {"not_after", std::to_string((*certificate)->not_after)}});

  const admission::Pipeline pipeline(options.release);
  Metrics metrics;
  Result<std::unique_ptr<ClusterSource>> cluster = open_cluster(options, pipeline, log);
  if (!cluster) {
    err << "error: " << cluster.error().message << '\n';
    return exit_usage;
  }
  metrics.set_objects((*cluster)->object_count(), unix_now());
  metrics.record_objects_reload((*cluster)->current() != nullptr);
  metrics.record_certificate_reload(true);

  webhook::ReviewOptions review_options;
  review_options.kubevirt_service_accounts = webhook::kubevirt_service_account_usernames(options.kubevirt_namespace);
  review_options.now = [] { return webhook::metav1_time(std::chrono::system_clock::now()); };
  Result<std::unique_ptr<Server>> server =
      Server::bind(ServerParts{options, pipeline, certificates, **cluster, metrics, log, std::move(review_options)});
  if (!server) {
    err << "error: " << server.error().message << '\n';
    return exit_usage;
  }
  ListenAddress https = options.listen;
  https.port = (*server)->https_port();
  ListenAddress health = options.metrics_listen;
  health.port = (*server)->metrics_port();
  event("info", "serving",
        {{"https", https.str()},
         {"metrics", health.str()},
         {"threads", std::to_string(options.threads)},
         {"tls_profile", options.tls_profile == TlsProfile::modern ? "modern" : "intermediate"},
         // --kubevirt-version, or the KubeVirt CR's observedKubeVirtVersion (each answer warns then).
         {"kubevirt_version", options.release ? std::string(admission::to_string(*options.release)) : "cluster"}});
  (*server)->run(true);
  return 0;
}

}  // namespace vmgate::serve
