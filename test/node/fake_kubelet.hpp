#pragma once
// The kubelet's side of device-plugin registration, played by the tests: a real gRPC
// Registration server on <directory>/kubelet.sock that records every Register call.
// Thread-safe (Register runs on gRPC's threads).
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "deviceplugin/v1beta1/api.grpc.pb.h"

namespace vmgate::node::testing {

struct Registration {
  std::string version;
  std::string endpoint;
  std::string resource_name;
};

class FakeKubelet final : public v1beta1::Registration::Service {
 public:
  /// Serves at once; fails the test when it cannot.
  explicit FakeKubelet(std::filesystem::path directory);
  ~FakeKubelet() override;
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  grpc::Status Register(grpc::ServerContext* context, const v1beta1::RegisterRequest* request,
                        v1beta1::Empty* reply) override;

  /// The registrations since the last (re)start once there are at least `count`; fewer when
  /// `patience` ran out first.
  std::vector<Registration> wait_for(std::size_t count, std::chrono::milliseconds patience = std::chrono::seconds(15));

  /// A kubelet restart: the registration server stops; with `empty_directory` every file of the
  /// directory goes as the kubelet's removeContents does at start; a new kubelet.sock appears.
  void restart(bool empty_directory);

 private:
  void start();
  void stop();

  std::filesystem::path directory_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Registration> registrations_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace vmgate::node::testing
