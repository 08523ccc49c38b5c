// Tests of the VM mutator's firmware ids (vm-mutator.go setFirmwareDefaultsIfEmpty): uuid and
// serial are filled only when empty, and vmgate derives them (version 5 UUIDs) so the same VM
// always gets the same answer.
#include <gtest/gtest.h>

#include <boost/uuid/name_generator_sha1.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <string>

#include "support/json_test_support.hpp"
#include "vmgate/admission/defaults/vm.hpp"

// After json.hpp, which must define RAPIDJSON_ASSERT before any RapidJSON header.
#include <rapidjson/pointer.h>

namespace vmgate::admission::defaults {
namespace {

using vmgate::testing::dump;
using vmgate::testing::parse;

using vmgate::testing::text;

json::Document mutated(std::string_view vm_text, std::string_view namespace_name = "default") {
  json::Document vm = parse(vm_text);
  set_vm_firmware_ids(vm, namespace_name, vm.GetAllocator());
  return vm;
}

bool looks_like_v5_uuid(const std::string& id) {
  // xxxxxxxx-xxxx-5xxx-[89ab]xxx-xxxxxxxxxxxx
  return id.size() == 36 && id[8] == '-' && id[13] == '-' && id[18] == '-' && id[23] == '-' && id[14] == '5' &&
         std::string("89ab").find(id[19]) != std::string::npos;
}

TEST(DefaultsVmFirmware, NameBasedUuidIsVersion5InVmgatesNamespace) {
  // uuid.uuid5(UUID("6c1e4f8a-3b52-5d7e-9a0f-2d614b83c517"), "hello")
  EXPECT_EQ(name_based_uuid("hello"), "50b049cc-ea5d-5a84-9fb1-5899992c081d");
  EXPECT_EQ(name_based_uuid("hello"), name_based_uuid("hello"));
  EXPECT_NE(name_based_uuid("hello"), name_based_uuid("hello!"));
  EXPECT_TRUE(looks_like_v5_uuid(name_based_uuid("")));
}

TEST(DefaultsVmFirmware, NameBasedUuidAgreesWithBoostAcrossBlockBoundaries) {
  // vmgate's own SHA-1 against Boost's, for names that end anywhere in the first three blocks
  // (the namespace takes 16 bytes; the padding needs 9 more).
  const boost::uuids::uuid vmgate_namespace{
      {0x6c, 0x1e, 0x4f, 0x8a, 0x3b, 0x52, 0x5d, 0x7e, 0x9a, 0x0f, 0x2d, 0x61, 0x4b, 0x83, 0xc5, 0x17}};
  const boost::uuids::name_generator_sha1 generate(vmgate_namespace);
  std::string name;
  for (int length = 0; length <= 200; ++length) {
    EXPECT_EQ(name_based_uuid(name), boost::uuids::to_string(generate(name.data(), name.size()))) << length;
    name += static_cast<char>('a' + length % 26);
  }
}

// The memo answers as name_based_uuid whatever it holds: names asked again, names past its
// few places, the empty name (its unused places hold empty names too), names too long to keep.
TEST(DefaultsVmFirmware, RememberedUuidsAreTheComputedOnes) {
  NameBasedUuids uuids;
  EXPECT_EQ(uuids.uuid(""), name_based_uuid(""));
  const std::string long_name(600, 'n');
  for (int round = 0; round < 3; ++round) {
    for (int index = 0; index < 20; ++index) {
      const std::string name = "vm:ns/vm-" + std::to_string(index % (round == 1 ? 3 : 20)) + "#firmware-uuid";
      EXPECT_EQ(uuids.uuid(name), name_based_uuid(name)) << name;
      EXPECT_EQ(uuids.uuid(name), name_based_uuid(name)) << name << " again";
    }
    EXPECT_EQ(uuids.uuid(long_name), name_based_uuid(long_name));
    EXPECT_EQ(uuids.uuid(long_name + "x"), name_based_uuid(long_name + "x"));
  }
  EXPECT_EQ(uuids.uuid(""), name_based_uuid(""));
}

TEST(DefaultsVmFirmware, TheMemoChangesNoAnswer) {
  NameBasedUuids uuids;
  for (
      const char* vm_text :
      {R"({"metadata": {"name": "vm1", "uid": "1234"}, "spec": {"template": {"spec": {"domain": {}}}}})",
       R"({"metadata": {"name": "vm1"}, "spec": {"template": {"spec": {"domain": {}}}}})",
       R"({"metadata": {"name": "vm2"}, "spec": {"template": {"spec": {"domain": {"firmware": {"serial": "s"}}}}}})"}) {
    for (int round = 0; round < 2; ++round) {
      json::Document vm = parse(vm_text);
      set_vm_firmware_ids(vm, "ns", vm.GetAllocator(), &uuids);
      EXPECT_EQ(dump(vm), dump(mutated(vm_text, "ns"))) << vm_text;
    }
  }
}

TEST(DefaultsVmFirmware, FillsUuidAndSerialFromMetadataUid) {
  const json::Document vm = mutated(R"({"metadata": {"name": "vm1", "uid": "1234"},
                                        "spec": {"template": {"spec": {"domain": {"devices": {}}}}}})");
  const std::string uuid = text(vm, "/spec/template/spec/domain/firmware/uuid");
  const std::string serial = text(vm, "/spec/template/spec/domain/firmware/serial");
  // uuid.uuid5(vmgate namespace, "uid:1234#firmware-uuid")
  EXPECT_EQ(uuid, "0f558b77-a9fb-5567-a429-ed1f4ef0262a");
  EXPECT_TRUE(looks_like_v5_uuid(serial));
  EXPECT_NE(uuid, serial);
}

TEST(DefaultsVmFirmware, SameVmSameIdsDifferentUidDifferentIds) {
  constexpr std::string_view first = R"({"metadata": {"name": "vm1", "uid": "a"}, "spec": {"template": {"spec": {}}}})";
  constexpr std::string_view second =
      R"({"metadata": {"name": "vm1", "uid": "b"}, "spec": {"template": {"spec": {}}}})";
  EXPECT_EQ(dump(mutated(first)), dump(mutated(first)));
  EXPECT_NE(text(mutated(first), "/spec/template/spec/domain/firmware/uuid"),
            text(mutated(second), "/spec/template/spec/domain/firmware/uuid"));
}

TEST(DefaultsVmFirmware, WithoutUidTheNamespaceAndNameDecide) {
  constexpr std::string_view vm = R"({"metadata": {"name": "vm1"}, "spec": {"template": {"spec": {}}}})";
  const std::string in_default = text(mutated(vm, "default"), "/spec/template/spec/domain/firmware/uuid");
  const std::string in_other = text(mutated(vm, "other"), "/spec/template/spec/domain/firmware/uuid");
  EXPECT_TRUE(looks_like_v5_uuid(in_default));
  EXPECT_NE(in_default, in_other);
  EXPECT_EQ(in_default, name_based_uuid("vm:default/vm1#firmware-uuid"));
}

TEST(DefaultsVmFirmware, KeepsUserValues) {
  const json::Document vm = mutated(R"({"metadata": {"name": "vm1"}, "spec": {"template": {"spec": {"domain": {
      "firmware": {"uuid": "5d307ca9-b3ef-428c-8861-06e72d69f223", "serial": "my-serial"}}}}}})");
  EXPECT_EQ(text(vm, "/spec/template/spec/domain/firmware/uuid"), "5d307ca9-b3ef-428c-8861-06e72d69f223");
  EXPECT_EQ(text(vm, "/spec/template/spec/domain/firmware/serial"), "my-serial");
}

TEST(DefaultsVmFirmware, FillsOnlyTheMissingOne) {
  const json::Document vm = mutated(R"({"metadata": {"name": "vm1"}, "spec": {"template": {"spec": {"domain": {
      "firmware": {"serial": "my-serial", "uuid": ""}}}}}})");
  EXPECT_TRUE(looks_like_v5_uuid(text(vm, "/spec/template/spec/domain/firmware/uuid")));
  EXPECT_EQ(text(vm, "/spec/template/spec/domain/firmware/serial"), "my-serial");
}

TEST(DefaultsVmFirmware, NoTemplateLeavesTheVmAlone) {
  constexpr std::string_view vm = R"({"metadata": {"name": "vm1"}, "spec": {"runStrategy": "Always"}})";
  EXPECT_EQ(dump(mutated(vm)), dump(parse(vm)));
}

}  // namespace
}  // namespace vmgate::admission::defaults
