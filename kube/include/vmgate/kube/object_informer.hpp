#pragma once
// One resource kept current from the Kubernetes API for the VM controller (VirtualMachines,
// VirtualMachineInstances, launcher pods): list, then watch from the list's resourceVersion with
// bookmarks; a 410 Gone or any failure re-lists after a backoff; a silent watch is restarted.
// Objects are held whole (as the API returned them, managedFields and all) and handed out as
// immutable shared documents. The controller plans from a copy of the set, so a plan never
// waits on the informer. Thread-safety: objects(), synced() and the callbacks from any thread;
// start() and stop() from the owner.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vmgate/common/json.hpp"
#include "vmgate/common/result.hpp"
#include "vmgate/kube/client_config.hpp"
#include "vmgate/kube/watch_cache.hpp"

namespace vmgate::kube {

struct InformerSpec {
  std::string resource;         // for messages: "virtualmachines"
  std::string collection_path;  // "/apis/kubevirt.io/v1/virtualmachines" or ".../namespaces/NS/..."
  std::string label_selector;   // empty: every object
  std::string field_selector;   // "metadata.name=NAME"; empty: none
};

class ObjectInformer {
 public:
  /// `on_change` is called from the informer's thread after each list and each batch of events.
  /// Errors: the TLS settings of `config` unusable.
  static Result<std::unique_ptr<ObjectInformer>> create(const ClientConfig& config, InformerSpec spec, CacheLog log,
                                                        std::function<void()> on_change, CacheTuning tuning = {});
  ObjectInformer(const ObjectInformer&) = delete;
  ObjectInformer& operator=(const ObjectInformer&) = delete;
  ~ObjectInformer();  // stops

  void start();
  void stop();  // idempotent; interrupts the request in flight

  /// Listed at least once.
  [[nodiscard]] bool synced() const;
  /// The objects as last seen, in key order (namespace/name).
  [[nodiscard]] std::vector<std::shared_ptr<const json::Document>> objects() const;

 private:
  struct Impl;
  explicit ObjectInformer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vmgate::kube
