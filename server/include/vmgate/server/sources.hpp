#pragma once
// What `vmgate serve` re-reads while it runs: the serving certificate and the cluster objects.
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

class ClusterSource {
 public:
  /// `pipeline` must outlive the source.
  ClusterSource(std::vector<std::string> inputs, std::string default_namespace, const admission::Pipeline& pipeline);

  /// Loads the inputs now. Errors: load_cluster's.
  Result<std::shared_ptr<const kube::LoadedCluster>> load();
  /// Reloads when a file was added, removed or changed since the last attempt; nullopt otherwise.
  std::optional<ReloadOutcome> poll();
  /// nullptr until a load succeeded.
  [[nodiscard]] std::shared_ptr<const kube::LoadedCluster> current() const { return current_.get(); }

 private:
  std::vector<std::string> inputs_;
  std::string default_namespace_;
  const admission::Pipeline& pipeline_;
  std::vector<FileStamp> last_attempt_;
  Snapshot<kube::LoadedCluster> current_;
};

}  // namespace vmgate::serve
