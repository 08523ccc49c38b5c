#include "node/fake_kubelet.hpp"

#include <gtest/gtest.h>

namespace vmgate::node::testing {

namespace fs = std::filesystem;

FakeKubelet::FakeKubelet(fs::path directory) : directory_(std::move(directory)) {
  start();
}

FakeKubelet::~FakeKubelet() {
  stop();
}

grpc::Status FakeKubelet::Register(grpc::ServerContext* /*context*/, const v1beta1::RegisterRequest* request,
                                   v1beta1::Empty* /*reply*/) {
  const std::lock_guard lock(mutex_);
  registrations_.push_back({request->version(), request->endpoint(), request->resource_name()});
  changed_.notify_all();
  return grpc::Status::OK;
}

std::vector<Registration> FakeKubelet::wait_for(std::size_t count, std::chrono::milliseconds patience) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, patience, [&] { return registrations_.size() >= count; });
  return registrations_;
}

void FakeKubelet::restart(bool empty_directory) {
  stop();
  if (empty_directory) {
    for (const fs::directory_entry& entry : fs::directory_iterator(directory_)) {
      if (!entry.is_directory()) {
        fs::remove(entry.path());
      }
    }
  }
  {
    const std::lock_guard lock(mutex_);
    registrations_.clear();
  }
  start();
}

void FakeKubelet::start() {
  const std::string socket = (directory_ / "kubelet.sock").string();
  fs::remove(socket);
  grpc::ServerBuilder builder;
  builder.AddListeningPort("unix:" + socket, grpc::InsecureServerCredentials());
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
  EXPECT_TRUE(server_) << "cannot serve " << socket;
}

void FakeKubelet::stop() {
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_.reset();
  }
}

}  // namespace vmgate::node::testing
