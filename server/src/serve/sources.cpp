#include "vmgate/server/sources.hpp"

#include <sstream>
#include <utility>

namespace vmgate::serve {

CertificateSource::CertificateSource(tls::ServerFiles files, TlsProfile profile)
    : files_(std::move(files)), profile_(profile) {}

std::vector<FileStamp> CertificateSource::stamps() const {
  std::vector<FileStamp> stamps{stamp_file(files_.certificate), stamp_file(files_.private_key)};
  if (!files_.client_ca.empty()) {
    stamps.push_back(stamp_file(files_.client_ca));
  }
  return stamps;
}

Result<std::shared_ptr<const tls::ServerContext>> CertificateSource::load() {
  // Stamps first: a file changed while it is read is read again at the next poll.
  last_attempt_ = stamps();
  Result<tls::ServerContext> loaded = tls::load_server_context(files_, profile_);
  if (!loaded) {
    return loaded.error();
  }
  auto context = std::make_shared<const tls::ServerContext>(std::move(loaded.value()));
  current_.set(context);
  return std::shared_ptr<const tls::ServerContext>(context);
}

std::optional<ReloadOutcome> CertificateSource::poll() {
  if (stamps() == last_attempt_) {
    return std::nullopt;
  }
  Result<std::shared_ptr<const tls::ServerContext>> loaded = load();
  if (!loaded) {
    return ReloadOutcome{false, loaded.error().message + " (still serving the previous certificate)"};
  }
  return ReloadOutcome{true, "loaded certificate " + (*loaded)->subject};
}

FileClusterSource::FileClusterSource(std::vector<std::string> inputs, std::string default_namespace,
                                     const admission::Pipeline& pipeline)
    : inputs_(std::move(inputs)), default_namespace_(std::move(default_namespace)), pipeline_(pipeline) {}

Result<std::shared_ptr<const kube::LoadedCluster>> FileClusterSource::load() {
  last_attempt_ = stamp_inputs(inputs_);
  std::istringstream no_stdin;
  Result<kube::LoadedCluster> loaded = kube::load_cluster(inputs_, default_namespace_, pipeline_, no_stdin);
  if (!loaded) {
    return loaded.error();
  }
  auto cluster = std::make_shared<const kube::LoadedCluster>(std::move(loaded.value()));
  current_.set(cluster);
  return std::shared_ptr<const kube::LoadedCluster>(cluster);
}

std::optional<ReloadOutcome> FileClusterSource::poll() {
  if (stamp_inputs(inputs_) == last_attempt_) {
    return std::nullopt;
  }
  Result<std::shared_ptr<const kube::LoadedCluster>> loaded = load();
  if (!loaded) {
    return ReloadOutcome{false, loaded.error().message + " (still serving the previous objects)"};
  }
  return ReloadOutcome{true, "loaded " + std::to_string((*loaded)->store.size()) + " cluster objects"};
}

std::shared_ptr<const admission::ClusterView> FileClusterSource::current() const {
  std::shared_ptr<const kube::LoadedCluster> cluster = current_.get();
  if (cluster == nullptr) {
    return nullptr;
  }
  // Aliasing: the view keeps the whole loaded cluster alive.
  return std::shared_ptr<const admission::ClusterView>(cluster, &cluster->store);
}

std::size_t FileClusterSource::object_count() const {
  const std::shared_ptr<const kube::LoadedCluster> cluster = current_.get();
  return cluster == nullptr ? 0 : cluster->store.size();
}

std::string FileClusterSource::not_ready_reason() const {
  return current_.get() == nullptr ? "not loaded" : "";
}

}  // namespace vmgate::serve
