#include "plugin_server.hpp"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <system_error>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "vmgate/node/agent.hpp"

namespace vmgate::node {

namespace {

// The health every ListAndWatch stream of one server reports, and whether the server stops.
struct HealthBoard {
  std::mutex mutex;
  std::condition_variable changed;
  Health health = Health::healthy;
  std::uint64_t version = 0;
  bool stopping = false;
};

void fill_devices(v1beta1::ListAndWatchResponse& response, const std::vector<AdvertisedDevice>& devices) {
  for (const AdvertisedDevice& device : devices) {
    v1beta1::Device* entry = response.add_devices();
    entry->set_id(device.id);
    entry->set_health(std::string(health_name(device.health)));
  }
}

class DevicePluginService final : public v1beta1::DevicePlugin::Service {
 public:
  DevicePluginService(DeviceKind kind, std::string permissions, int count, std::shared_ptr<HealthBoard> board,
                      EventLog& log)
      : kind_(kind), permissions_(std::move(permissions)), count_(count), board_(std::move(board)), log_(log) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext* /*context*/, const v1beta1::Empty* /*request*/,
                                      v1beta1::DevicePluginOptions* options) override {
    // KubeVirt's generic devices need no PreStartContainer and offer no preferred allocation.
    options->set_pre_start_required(false);
    options->set_get_preferred_allocation_available(false);
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty* /*request*/,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override {
    std::unique_lock lock(board_->mutex);
    std::uint64_t sent = board_->version;
    Health health = board_->health;
    lock.unlock();
    if (!send(writer, health)) {
      return grpc::Status::OK;
    }
    lock.lock();
    while (true) {
      // Woken by a health change or stop; the timeout notices a kubelet that went away.
      board_->changed.wait_for(lock, std::chrono::milliseconds(200),
                               [&] { return board_->stopping || board_->version != sent; });
      if (board_->stopping) {
        lock.unlock();
        // No explicit deregistration exists: an empty list makes the kubelet drop the devices
        // at once rather than at the grace period's end (KubeVirt does the same).
        writer->Write(v1beta1::ListAndWatchResponse{});
        return grpc::Status::OK;
      }
      if (context->IsCancelled()) {
        return grpc::Status::CANCELLED;
      }
      if (board_->version != sent) {
        sent = board_->version;
        health = board_->health;
        lock.unlock();
        if (!send(writer, health)) {
          return grpc::Status::OK;
        }
        lock.lock();
      }
    }
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext* /*context*/,
                                      const v1beta1::PreferredAllocationRequest* /*request*/,
                                      v1beta1::PreferredAllocationResponse* /*response*/) override {
    return {grpc::StatusCode::UNIMPLEMENTED, "no preferred allocation: every unit is the same device"};
  }

  grpc::Status Allocate(grpc::ServerContext* /*context*/, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override {
    const auto containers = static_cast<std::size_t>(request->container_requests_size());
    const std::vector<ContainerAllocation> allocations = allocate(kind_, permissions_, containers);
    for (const ContainerAllocation& allocation : allocations) {
      v1beta1::ContainerAllocateResponse* container = response->add_container_responses();
      for (const DeviceSpec& spec : allocation.devices) {
        v1beta1::DeviceSpec* device = container->add_devices();
        device->set_container_path(spec.container_path);
        device->set_host_path(spec.host_path);
        device->set_permissions(spec.permissions);
      }
    }
    log_.write("info", "allocated", {{"resource", resource_name(kind_)}, {"containers", std::to_string(containers)}});
    return grpc::Status::OK;
  }

  grpc::Status PreStartContainer(grpc::ServerContext* /*context*/, const v1beta1::PreStartContainerRequest* /*request*/,
                                 v1beta1::PreStartContainerResponse* /*response*/) override {
    return grpc::Status::OK;
  }

 private:
  bool send(grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer, Health health) const {
    v1beta1::ListAndWatchResponse response;
    fill_devices(response, advertised_devices(kind_, count_, health));
    return writer->Write(response);
  }

  DeviceKind kind_;
  std::string permissions_;
  int count_;
  std::shared_ptr<HealthBoard> board_;
  EventLog& log_;
};

void remove_if_same(const std::string& path, const FileId& id) {
  if (file_id(path) == id) {
    ::unlink(path.c_str());
  }
}

}  // namespace

// One running server. Member order matters: the server is destroyed before its service.
struct PluginServer::Serving {
  std::shared_ptr<HealthBoard> board;
  std::unique_ptr<DevicePluginService> service;
  std::unique_ptr<grpc::Server> server;
  FileId socket;
};

PluginServer::PluginServer(DeviceKind kind, std::string permissions, int count, Health health, EventLog& log)
    : kind_(kind), permissions_(std::move(permissions)), count_(count), health_(health), log_(&log) {}

PluginServer::~PluginServer() {
  stop();
}

PluginServer::PluginServer(PluginServer&&) noexcept = default;

Result<FileId> PluginServer::start(const std::string& socket_path) {
  stop();
  socket_path_ = socket_path;
  // A stale socket from an agent that did not stop cleanly (KubeVirt's cleanup()).
  std::error_code ignored;
  std::filesystem::remove(socket_path, ignored);

  auto serving = std::make_unique<Serving>();
  serving->board = std::make_shared<HealthBoard>();
  serving->board->health = health_;
  serving->service = std::make_unique<DevicePluginService>(kind_, permissions_, count_, serving->board, *log_);
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort("unix:" + socket_path, grpc::InsecureServerCredentials(), &bound_port);
  builder.RegisterService(serving->service.get());
  serving->server = builder.BuildAndStart();
  if (!serving->server || bound_port == 0) {
    return Error{"cannot serve on " + socket_path};
  }
  std::optional<FileId> socket = file_id(socket_path);
  if (!socket) {
    serving->server->Shutdown();
    return Error{"socket " + socket_path + " vanished right after bind"};
  }
  serving->socket = *socket;
  serving_ = std::move(serving);
  return *socket;
}

void PluginServer::stop() {
  if (!serving_) {
    return;
  }
  {
    const std::lock_guard lock(serving_->board->mutex);
    serving_->board->stopping = true;
  }
  serving_->board->changed.notify_all();
  serving_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  serving_->server->Wait();
  remove_if_same(socket_path_, serving_->socket);
  serving_.reset();
}

void PluginServer::set_health(Health health) {
  if (health == health_) {
    return;
  }
  health_ = health;
  if (!serving_) {
    return;
  }
  {
    const std::lock_guard lock(serving_->board->mutex);
    serving_->board->health = health;
    ++serving_->board->version;
  }
  serving_->board->changed.notify_all();
}

Status PluginServer::register_with(const std::string& kubelet_socket) const {
  const std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel("unix:" + kubelet_socket, grpc::InsecureChannelCredentials());
  const std::unique_ptr<v1beta1::Registration::Stub> stub = v1beta1::Registration::NewStub(channel);
  v1beta1::RegisterRequest request;
  request.set_version(std::string(api_version));
  request.set_endpoint(std::filesystem::path(socket_path_).filename().string());
  request.set_resource_name(resource_name(kind_));
  request.mutable_options()->set_pre_start_required(false);
  request.mutable_options()->set_get_preferred_allocation_available(false);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1beta1::Empty reply;
  const grpc::Status status = stub->Register(&context, request, &reply);
  if (!status.ok()) {
    return Error{"register " + resource_name(kind_) + " with " + kubelet_socket + ": " + status.error_message()};
  }
  return Ok{};
}

}  // namespace vmgate::node
