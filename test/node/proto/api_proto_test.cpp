// Our device-plugin .proto is the kubelet's on the wire: the full service and method names (the
// HTTP/2 paths) and every field's number and type, as in
// k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1/api.proto.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "deviceplugin/v1beta1/api.pb.h"

namespace vmgate::node {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

const google::protobuf::FileDescriptor& api_file() {
  return *v1beta1::Empty::descriptor()->file();
}

TEST(DevicePluginProto, HasTheKubeletsServicesAndMethods) {
  EXPECT_EQ(api_file().package(), "v1beta1");
  const auto* registration = api_file().FindServiceByName("Registration");
  ASSERT_NE(registration, nullptr);
  EXPECT_EQ(registration->full_name(), "v1beta1.Registration");
  ASSERT_EQ(registration->method_count(), 1);
  EXPECT_EQ(registration->method(0)->name(), "Register");
  EXPECT_EQ(registration->method(0)->input_type()->full_name(), "v1beta1.RegisterRequest");
  EXPECT_EQ(registration->method(0)->output_type()->full_name(), "v1beta1.Empty");

  const auto* plugin = api_file().FindServiceByName("DevicePlugin");
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->full_name(), "v1beta1.DevicePlugin");
  const std::vector<std::tuple<std::string, std::string, std::string, bool>> methods{
      {"GetDevicePluginOptions", "v1beta1.Empty", "v1beta1.DevicePluginOptions", false},
      {"ListAndWatch", "v1beta1.Empty", "v1beta1.ListAndWatchResponse", true},
      {"GetPreferredAllocation", "v1beta1.PreferredAllocationRequest", "v1beta1.PreferredAllocationResponse", false},
      {"Allocate", "v1beta1.AllocateRequest", "v1beta1.AllocateResponse", false},
      {"PreStartContainer", "v1beta1.PreStartContainerRequest", "v1beta1.PreStartContainerResponse", false},
  };
  ASSERT_EQ(plugin->method_count(), static_cast<int>(methods.size()));
  for (const auto& [name, input, output, streaming] : methods) {
    const auto* method = plugin->FindMethodByName(name);
    ASSERT_NE(method, nullptr) << name;
    EXPECT_EQ(method->input_type()->full_name(), input) << name;
    EXPECT_EQ(method->output_type()->full_name(), output) << name;
    EXPECT_FALSE(method->client_streaming()) << name;
    EXPECT_EQ(method->server_streaming(), streaming) << name;
  }
}

struct Field {
  std::string message;
  std::string name;
  int number;
  FieldDescriptor::Type type;
  bool repeated;
};

TEST(DevicePluginProto, FieldsHaveTheKubeletsNumbersAndTypes) {
  using T = FieldDescriptor;
  const std::vector<Field> fields{
      {"DevicePluginOptions", "pre_start_required", 1, T::TYPE_BOOL, false},
      {"DevicePluginOptions", "get_preferred_allocation_available", 2, T::TYPE_BOOL, false},
      {"RegisterRequest", "version", 1, T::TYPE_STRING, false},
      {"RegisterRequest", "endpoint", 2, T::TYPE_STRING, false},
      {"RegisterRequest", "resource_name", 3, T::TYPE_STRING, false},
      {"RegisterRequest", "options", 4, T::TYPE_MESSAGE, false},
      {"ListAndWatchResponse", "devices", 1, T::TYPE_MESSAGE, true},
      {"TopologyInfo", "nodes", 1, T::TYPE_MESSAGE, true},
      {"NUMANode", "ID", 1, T::TYPE_INT64, false},
      {"Device", "ID", 1, T::TYPE_STRING, false},
      {"Device", "health", 2, T::TYPE_STRING, false},
      {"Device", "topology", 3, T::TYPE_MESSAGE, false},
      {"PreStartContainerRequest", "devices_ids", 1, T::TYPE_STRING, true},
      {"PreferredAllocationRequest", "container_requests", 1, T::TYPE_MESSAGE, true},
      {"ContainerPreferredAllocationRequest", "available_deviceIDs", 1, T::TYPE_STRING, true},
      {"ContainerPreferredAllocationRequest", "must_include_deviceIDs", 2, T::TYPE_STRING, true},
      {"ContainerPreferredAllocationRequest", "allocation_size", 3, T::TYPE_INT32, false},
      {"PreferredAllocationResponse", "container_responses", 1, T::TYPE_MESSAGE, true},
      {"ContainerPreferredAllocationResponse", "deviceIDs", 1, T::TYPE_STRING, true},
      {"AllocateRequest", "container_requests", 1, T::TYPE_MESSAGE, true},
      {"ContainerAllocateRequest", "devices_ids", 1, T::TYPE_STRING, true},
      {"CDIDevice", "name", 1, T::TYPE_STRING, false},
      {"AllocateResponse", "container_responses", 1, T::TYPE_MESSAGE, true},
      {"ContainerAllocateResponse", "envs", 1, T::TYPE_MESSAGE, true},  // map<string, string>
      {"ContainerAllocateResponse", "mounts", 2, T::TYPE_MESSAGE, true},
      {"ContainerAllocateResponse", "devices", 3, T::TYPE_MESSAGE, true},
      {"ContainerAllocateResponse", "annotations", 4, T::TYPE_MESSAGE, true},  // map<string, string>
      {"ContainerAllocateResponse", "cdi_devices", 5, T::TYPE_MESSAGE, true},
      {"Mount", "container_path", 1, T::TYPE_STRING, false},
      {"Mount", "host_path", 2, T::TYPE_STRING, false},
      {"Mount", "read_only", 3, T::TYPE_BOOL, false},
      {"DeviceSpec", "container_path", 1, T::TYPE_STRING, false},
      {"DeviceSpec", "host_path", 2, T::TYPE_STRING, false},
      {"DeviceSpec", "permissions", 3, T::TYPE_STRING, false},
  };
  std::map<std::string, int> per_message;
  for (const Field& field : fields) {
    const Descriptor* message = api_file().FindMessageTypeByName(field.message);
    ASSERT_NE(message, nullptr) << field.message;
    const FieldDescriptor* descriptor = message->FindFieldByName(field.name);
    ASSERT_NE(descriptor, nullptr) << field.message << "." << field.name;
    EXPECT_EQ(descriptor->number(), field.number) << field.message << "." << field.name;
    EXPECT_EQ(descriptor->type(), field.type) << field.message << "." << field.name;
    EXPECT_EQ(descriptor->is_repeated(), field.repeated) << field.message << "." << field.name;
    ++per_message[field.message];
  }
  // No field of ours that the kubelet does not know.
  for (const auto& [name, count] : per_message) {
    EXPECT_EQ(api_file().FindMessageTypeByName(name)->field_count(), count) << name;
  }
  EXPECT_TRUE(api_file().FindMessageTypeByName("ContainerAllocateResponse")->FindFieldByName("envs")->is_map());
  EXPECT_EQ(api_file().FindMessageTypeByName("Empty")->field_count(), 0);
  EXPECT_EQ(api_file().FindMessageTypeByName("PreStartContainerResponse")->field_count(), 0);
}

TEST(DevicePluginProto, ARegisterRequestHasTheKubeletsBytes) {
  // The bytes a Go plugin built on k8s.io/kubelet sends: field 1 "v1beta1", 2 the endpoint, 3 the
  // resource name (tag = number << 3 | 2 for length-delimited).
  v1beta1::RegisterRequest request;
  request.set_version("v1beta1");
  request.set_endpoint("k.sock");
  request.set_resource_name("a/b");
  EXPECT_EQ(request.SerializeAsString(), std::string("\x0a\x07v1beta1\x12\x06k.sock\x1a\x03"
                                                     "a/b"));
}

}  // namespace
}  // namespace vmgate::node
