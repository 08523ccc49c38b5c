#pragma once
// What `vmgate serve` re-reads while it runs: the serving certificate and the cluster objects
// (from files here; from the Kubernetes API in api_cluster_source.hpp).
// Each is an immutable snapshot behind a shared_ptr, swapped whole when the files change, so a
// request or connection keeps the snapshot it started with (docs/webhook.md, "Reloading
// certificates and objects"). A failed reload keeps the previous snapshot: a half-written Secret
// update never takes the webhook down.
// Thread-safety: current() may be called from any thread at any time; load() and poll() from one
// thread at a time (the server's watch timer).
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "vmgate/admission/pipeline.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/kube/cluster_loader.hpp"
#include "vmgate/kube/request_view.hpp"
#include "vmgate/server/file_stamp.hpp"
#include "vmgate/server/serve_options.hpp"
#include "vmgate/server/tls.hpp"

namespace vmgate::serve {

/// A value swapped atomically as a whole.
template <class T>
class Snapshot {
 public:
  [[nodiscard]] std::shared_ptr<const T> get() const {
    const std::lock_guard lock(mutex_);
    return value_;
  }
  void set(std::shared_ptr<const T> value) {
    const std::lock_guard lock(mutex_);
    value_.swap(value);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const T> value_;
};

/// The outcome of a reload that poll() attempted.
struct ReloadOutcome {
  bool succeeded = false;
  std::string message;  // what was loaded, or why it failed (file and reason)
};

class CertificateSource {
 public:
  CertificateSource(tls::ServerFiles files, TlsProfile profile);

  /// Loads the files now. Errors: load_server_context's.
  Result<std::shared_ptr<const tls::ServerContext>> load();
  /// Reloads when any file's stamp differs from the last attempt; nullopt when none changed.
  std::optional<ReloadOutcome> poll();
  /// nullptr until a load succeeded.
  [[nodiscard]] std::shared_ptr<const tls::ServerContext> current() const { return current_.get(); }

 private:
  [[nodiscard]] std::vector<FileStamp> stamps() const;

  tls::ServerFiles files_;
  TlsProfile profile_;
  std::vector<FileStamp> last_attempt_;
  Snapshot<tls::ServerContext> current_;
};

/// Where admissions read the cluster: files (--objects) or the Kubernetes API (--kubeconfig,
/// in-cluster). current() is an immutable snapshot that a request keeps while it runs.
class ClusterSource {
 public:
  virtual ~ClusterSource() = default;
  /// nullptr until loaded (files) or synced once (API).
  [[nodiscard]] virtual std::shared_ptr<const admission::ClusterView> current() const = 0;
  /// The view one admission reads: current(), plus (API) live lookups of what it misses, which
  /// the server resolves without blocking (kube/request_view.hpp). nullptr until loaded.
  [[nodiscard]] virtual std::shared_ptr<kube::RequestView> request_view() const {
    std::shared_ptr<const admission::ClusterView> snapshot = current();
    return snapshot == nullptr ? nullptr : std::make_shared<kube::RequestView>(std::move(snapshot), nullptr);
  }
  /// Called on the server's watch timer: reloads changed files and reports it; nullopt when
  /// nothing was reloaded. The API source reports its first sync here.
  virtual std::optional<ReloadOutcome> poll() = 0;
  /// Objects held now (the vmgate_object_store_objects gauge).
  [[nodiscard]] virtual std::size_t object_count() const = 0;
  /// Why current() is still nullptr, for /readyz; "" otherwise.
  [[nodiscard]] virtual std::string not_ready_reason() const = 0;
  /// Extra Prometheus text for /metrics (the API source's informers); "" for files.
  [[nodiscard]] virtual std::string metrics_text() const { return {}; }
};

/// The cluster from manifest files, re-read when a file is added, removed or changed.
class FileClusterSource final : public ClusterSource {
 public:
  /// `pipeline` must outlive the source.
  FileClusterSource(std::vector<std::string> inputs, std::string default_namespace,
                    const admission::Pipeline& pipeline);

  /// Loads the inputs now. Errors: load_cluster's.
  Result<std::shared_ptr<const kube::LoadedCluster>> load();
  std::optional<ReloadOutcome> poll() override;
  [[nodiscard]] std::shared_ptr<const admission::ClusterView> current() const override;
  [[nodiscard]] std::size_t object_count() const override;
  [[nodiscard]] std::string not_ready_reason() const override;

 private:
  std::vector<std::string> inputs_;
  std::string default_namespace_;
  const admission::Pipeline& pipeline_;
  std::vector<FileStamp> last_attempt_;
  Snapshot<kube::LoadedCluster> current_;
};

}  // namespace vmgate::serve
