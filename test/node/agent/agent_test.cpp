// The node agent against a kubelet played by the test: a real gRPC Registration server on
// kubelet.sock in a temporary device-plugin directory, real plugin sockets dialled back as the
// kubelet does, fake device files under a temporary device root.
#include "vmgate/node/agent.hpp"

#include <grpcpp/grpcpp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "node/fake_kubelet.hpp"
#include "vmgate/node/unique_fd.hpp"
#include "support/temporary_directory.hpp"

namespace vmgate::node {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::FakeKubelet;
using testing::Registration;
using ::testing::UnorderedElementsAre;

// run_agent on a thread, stopped through an eventfd when the object goes.
class RunningAgent {
 public:
  RunningAgent(NodeOptions options, std::string permissions)
      : options_(std::move(options)), permissions_(std::move(permissions)), stop_fd_(::eventfd(0, EFD_CLOEXEC)) {
    EXPECT_TRUE(stop_fd_.valid());
    thread_ = std::thread([this] { status_ = run_agent(options_, permissions_, stop_fd_.get(), log_); });
  }
  ~RunningAgent() { EXPECT_TRUE(stop()); }
  RunningAgent(const RunningAgent&) = delete;
  RunningAgent& operator=(const RunningAgent&) = delete;

  Status stop() {
    if (thread_.joinable()) {
      const std::uint64_t one = 1;
      EXPECT_EQ(::write(stop_fd_.get(), &one, sizeof one), static_cast<ssize_t>(sizeof one));
      thread_.join();
    }
    return status_;
  }
  std::string log() const { return out_.str(); }

 private:
  NodeOptions options_;
  std::string permissions_;
  UniqueFd stop_fd_;
  std::ostringstream out_;
  EventLog log_{out_};
  Status status_ = Ok{};
  std::thread thread_;
};

// A kubelet-side client of one plugin socket.
class PluginClient {
 public:
  explicit PluginClient(const fs::path& socket)
      : stub_(v1beta1::DevicePlugin::NewStub(
            grpc::CreateChannel("unix:" + socket.string(), grpc::InsecureChannelCredentials()))) {}

  void open_stream() {
    context_ = std::make_unique<grpc::ClientContext>();
    context_->set_deadline(std::chrono::system_clock::now() + 60s);
    stream_ = stub_->ListAndWatch(context_.get(), v1beta1::Empty{});
  }
  // The next ListAndWatch update; nullopt when the stream ended.
  std::optional<v1beta1::ListAndWatchResponse> next() {
    v1beta1::ListAndWatchResponse response;
    if (!stream_->Read(&response)) {
      return std::nullopt;
    }
    return response;
  }
  v1beta1::DevicePlugin::Stub& stub() { return *stub_; }

 private:
  std::unique_ptr<v1beta1::DevicePlugin::Stub> stub_;
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReader<v1beta1::ListAndWatchResponse>> stream_;
};

// "Healthy" when every device has that health, else "mixed"; "" for none.
std::string common_health(const v1beta1::ListAndWatchResponse& response) {
  std::string health;
  for (const v1beta1::Device& device : response.devices()) {
    if (health.empty()) {
      health = device.health();
    } else if (health != device.health()) {
      return "mixed";
    }
  }
  return health;
}

class AgentTest : public ::testing::Test {
 protected:
  AgentTest() {
    fs::create_directories(plugins());
    fs::create_directories(dev_root() / "dev/net");
    for (const char* device : {"dev/kvm", "dev/net/tun", "dev/vhost-net", "dev/vhost-vsock"}) {
      vmgate::testing::write_text(dev_root() / device, "");
    }
  }
  fs::path plugins() const { return directory_.path() / "device-plugins"; }
  fs::path dev_root() const { return directory_.path() / "root"; }
  NodeOptions options(int max_devices = 1000) const {
    NodeOptions options;
    options.device_plugin_dir = plugins().string();
    options.dev_root = dev_root().string();
    options.devices.assign(known_devices().begin(), known_devices().end());
    options.max_devices = max_devices;
    return options;
  }

  vmgate::testing::TemporaryDirectory directory_;
};

std::vector<std::string> resources(const std::vector<Registration>& registrations) {
  std::vector<std::string> names;
  for (const Registration& registration : registrations) {
    names.push_back(registration.resource_name);
  }
  return names;
}

TEST_F(AgentTest, RegistersEveryPluginWithItsResourceVersionAndEndpoint) {
  FakeKubelet kubelet(plugins());
  RunningAgent agent(options(), "rw");
  const std::vector<Registration> registrations = kubelet.wait_for(4);
  ASSERT_EQ(registrations.size(), 4U) << agent.log();
  std::map<std::string, std::string> endpoints;
  for (const Registration& registration : registrations) {
    EXPECT_EQ(registration.version, "v1beta1");
    endpoints[registration.resource_name] = registration.endpoint;
  }
  EXPECT_EQ(endpoints,
            (std::map<std::string, std::string>{{"devices.kubevirt.io/kvm", "kubevirt-kvm.sock"},
                                                {"devices.kubevirt.io/tun", "kubevirt-tun.sock"},
                                                {"devices.kubevirt.io/vhost-net", "kubevirt-vhost-net.sock"},
                                                {"devices.kubevirt.io/vhost-vsock", "kubevirt-vhost-vsock.sock"}}));
  for (const auto& [resource, endpoint] : endpoints) {
    EXPECT_TRUE(fs::is_socket(plugins() / endpoint)) << endpoint;
  }
}

TEST_F(AgentTest, ListAndWatchReportsThousandUnitsAndFollowsTheDeviceNode) {
  FakeKubelet kubelet(plugins());
  RunningAgent agent(options(), "rw");
  ASSERT_EQ(kubelet.wait_for(4).size(), 4U) << agent.log();

  PluginClient kvm(plugins() / "kubevirt-kvm.sock");
  kvm.open_stream();
  std::optional<v1beta1::ListAndWatchResponse> update = kvm.next();
  ASSERT_TRUE(update);
  ASSERT_EQ(update->devices_size(), 1000);
  EXPECT_EQ(update->devices(0).id(), "kvm0");
  EXPECT_EQ(update->devices(999).id(), "kvm999");
  EXPECT_EQ(common_health(*update), "Healthy");

  fs::remove(dev_root() / "dev/kvm");
  update = kvm.next();
  ASSERT_TRUE(update);
  EXPECT_EQ(update->devices_size(), 1000);
  EXPECT_EQ(common_health(*update), "Unhealthy");

  vmgate::testing::write_text(dev_root() / "dev/kvm", "");
  update = kvm.next();
  ASSERT_TRUE(update);
  EXPECT_EQ(common_health(*update), "Healthy");

  // On stop the stream gets an empty list, then ends; the sockets are gone.
  ASSERT_TRUE(agent.stop());
  update = kvm.next();
  ASSERT_TRUE(update);
  EXPECT_EQ(update->devices_size(), 0);
  EXPECT_FALSE(kvm.next());
  for (const char* socket :
       {"kubevirt-kvm.sock", "kubevirt-tun.sock", "kubevirt-vhost-net.sock", "kubevirt-vhost-vsock.sock"}) {
    EXPECT_FALSE(fs::exists(plugins() / socket)) << socket;
  }
  EXPECT_TRUE(fs::exists(plugins() / "kubelet.sock"));
}

TEST_F(AgentTest, AMissingDeviceIsAdvertisedUnhealthyFromTheStart) {
  fs::remove(dev_root() / "dev/net/tun");
  FakeKubelet kubelet(plugins());
  RunningAgent agent(options(3), "rw");
  ASSERT_EQ(kubelet.wait_for(4).size(), 4U) << agent.log();
  PluginClient tun(plugins() / "kubevirt-tun.sock");
  tun.open_stream();
  std::optional<v1beta1::ListAndWatchResponse> update = tun.next();
  ASSERT_TRUE(update);
  EXPECT_EQ(update->devices_size(), 3);
  EXPECT_EQ(common_health(*update), "Unhealthy");

  // The whole directory comes back (a module loaded late): healthy again.
  vmgate::testing::write_text(dev_root() / "dev/net/tun", "");
  update = tun.next();
  ASSERT_TRUE(update);
  EXPECT_EQ(common_health(*update), "Healthy");
}

TEST_F(AgentTest, AllocateAnswersWithTheDeviceNodeForEachContainer) {
  FakeKubelet kubelet(plugins());
  RunningAgent agent(options(), "rwm");
  ASSERT_EQ(kubelet.wait_for(4).size(), 4U) << agent.log();

  for (const auto& [socket, id, path] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"kubevirt-kvm.sock", "kvm0", "/dev/kvm"},
           {"kubevirt-tun.sock", "tun5", "/dev/net/tun"},
           {"kubevirt-vhost-net.sock", "vhost-net999", "/dev/vhost-net"},
           {"kubevirt-vhost-vsock.sock", "vhost-vsock1", "/dev/vhost-vsock"}}) {
    PluginClient plugin(plugins() / socket);
    v1beta1::AllocateRequest request;
    request.add_container_requests()->add_devices_ids(id);
    request.add_container_requests()->add_devices_ids(id.substr(0, id.find_first_of("0123456789")) + "2");
    v1beta1::AllocateResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 15s);
    const grpc::Status status = plugin.stub().Allocate(&context, request, &response);
    ASSERT_TRUE(status.ok()) << socket << ": " << status.error_message();
    ASSERT_EQ(response.container_responses_size(), 2) << socket;
    for (const v1beta1::ContainerAllocateResponse& container : response.container_responses()) {
      ASSERT_EQ(container.devices_size(), 1) << socket;
      EXPECT_EQ(container.devices(0).host_path(), path);
      EXPECT_EQ(container.devices(0).container_path(), path);
      EXPECT_EQ(container.devices(0).permissions(), "rwm");
      EXPECT_EQ(container.mounts_size(), 0);
      EXPECT_EQ(container.envs_size(), 0);
    }
  }

  // IDs it does not advertise (a kubelet's checkpoint from a larger --max-devices) are served too.
  PluginClient kvm(plugins() / "kubevirt-kvm.sock");
  v1beta1::AllocateRequest old_ids;
  old_ids.add_container_requests()->add_devices_ids("kvm5000");
  v1beta1::AllocateResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(kvm.stub().Allocate(&context, old_ids, &response).ok());
  ASSERT_EQ(response.container_responses_size(), 1);
  ASSERT_EQ(response.container_responses(0).devices_size(), 1);
  EXPECT_EQ(response.container_responses(0).devices(0).host_path(), "/dev/kvm");

  v1beta1::DevicePluginOptions plugin_options;
  grpc::ClientContext options_context;
  ASSERT_TRUE(kvm.stub().GetDevicePluginOptions(&options_context, v1beta1::Empty{}, &plugin_options).ok());
  EXPECT_FALSE(plugin_options.pre_start_required());
  EXPECT_FALSE(plugin_options.get_preferred_allocation_available());
  v1beta1::PreStartContainerResponse prestart;
  grpc::ClientContext prestart_context;
  EXPECT_TRUE(kvm.stub().PreStartContainer(&prestart_context, v1beta1::PreStartContainerRequest{}, &prestart).ok());
}

TEST_F(AgentTest, RegistersAgainWhenTheKubeletRestartsAndEmptiesItsDirectory) {
  FakeKubelet kubelet(plugins());
  RunningAgent agent(options(), "rw");
  ASSERT_EQ(kubelet.wait_for(4).size(), 4U) << agent.log();

  const auto restarted = std::chrono::steady_clock::now();
  kubelet.restart(/*empty_directory=*/true);
  const std::vector<Registration> again = kubelet.wait_for(4);
  ASSERT_EQ(again.size(), 4U) << agent.log();
  EXPECT_LT(std::chrono::steady_clock::now() - restarted, 5s);
  EXPECT_THAT(resources(again),
              UnorderedElementsAre("devices.kubevirt.io/kvm", "devices.kubevirt.io/tun",
                                   "devices.kubevirt.io/vhost-net", "devices.kubevirt.io/vhost-vsock"));
  // Served anew: the kubelet can dial the endpoints it was given.
  PluginClient tun(plugins() / "kubevirt-tun.sock");
  tun.open_stream();
  std::optional<v1beta1::ListAndWatchResponse> update = tun.next();
  ASSERT_TRUE(update);
  EXPECT_EQ(update->devices_size(), 1000);
}

TEST_F(AgentTest, RegistersAgainWhenTheWholeDirectoryIsRecreated) {
  auto kubelet = std::make_unique<FakeKubelet>(plugins());
  RunningAgent agent(options(), "rw");
  ASSERT_EQ(kubelet->wait_for(4).size(), 4U) << agent.log();
  kubelet.reset();
  fs::remove_all(plugins());
  std::this_thread::sleep_for(200ms);
  fs::create_directories(plugins());
  kubelet = std::make_unique<FakeKubelet>(plugins());
  EXPECT_EQ(kubelet->wait_for(4).size(), 4U) << agent.log();
  EXPECT_TRUE(fs::is_socket(plugins() / "kubevirt-vhost-vsock.sock"));
}

TEST_F(AgentTest, RegistersAgainWhenOnlyKubeletSockIsReplaced) {
  FakeKubelet kubelet(plugins());
  RunningAgent agent(options(), "rw");
  ASSERT_EQ(kubelet.wait_for(4).size(), 4U) << agent.log();
  kubelet.restart(/*empty_directory=*/false);
  EXPECT_EQ(kubelet.wait_for(4).size(), 4U) << agent.log();
}

TEST_F(AgentTest, WaitsForAKubeletThatStartsLater) {
  RunningAgent agent(options(), "rw");
  std::this_thread::sleep_for(300ms);
  FakeKubelet kubelet(plugins());
  EXPECT_EQ(kubelet.wait_for(4).size(), 4U) << agent.log();
  ASSERT_TRUE(agent.stop());
  EXPECT_THAT(agent.log(), ::testing::HasSubstr("waiting for the kubelet"));
}

// A kubelet.sock that nobody serves (a kubelet that died): connections are refused.
void leave_stale_socket(const fs::path& path) {
  const UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(fd.valid());
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string name = path.string();
  ASSERT_LT(name.size(), sizeof address.sun_path);
  std::copy(name.begin(), name.end(), std::begin(address.sun_path));
  ASSERT_EQ(::bind(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
}

TEST_F(AgentTest, ANewKubeletAfterAStaleSocketIsTriedAtOnceDespiteTheBackOff) {
  leave_stale_socket(plugins() / "kubelet.sock");
  RunningAgent agent(options(), "rw");
  // Refused at 0, 1 and 3 s: the next attempt would wait until 8 s.
  std::this_thread::sleep_for(4s);
  const auto started = std::chrono::steady_clock::now();
  FakeKubelet kubelet(plugins());
  ASSERT_EQ(kubelet.wait_for(4).size(), 4U) << agent.log();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2500ms) << agent.log();
  EXPECT_THAT(agent.log(), ::testing::HasSubstr("registration failed; retrying"));
}

}  // namespace
}  // namespace vmgate::node
