// Reads/writes: VM spec.template.spec.domain.firmware.{uuid, serial}; reads metadata.{uid,name}.
// Follows vm-mutator.go setFirmwareDefaultsIfEmpty (CREATE only), with derived instead of random UUIDs.
#include <boost/uuid/name_generator_sha1.hpp>
#include <boost/uuid/uuid_io.hpp>

#include "vmgate/admission/defaults/vm.hpp"
#include "vmgate/admission/spec.hpp"

namespace vmgate::admission::defaults {

std::string name_based_uuid(std::string_view name) {
  // A fixed namespace UUID for vmgate (itself a v5 UUID of "vmgate.io" in the URL namespace).
  constexpr boost::uuids::uuid vmgate_namespace{
      {0x6c, 0x1e, 0x4f, 0x8a, 0x3b, 0x52, 0x5d, 0x7e, 0x9a, 0x0f, 0x2d, 0x61, 0x4b, 0x83, 0xc5, 0x17}};
  const boost::uuids::name_generator_sha1 generate(vmgate_namespace);
  return boost::uuids::to_string(generate(name.data(), name.size()));
}

void set_vm_firmware_ids(json::Value& vm, std::string_view namespace_name, json::Allocator& allocator) {
  json::Value* template_spec = json::find_path(vm, {"spec", "template", "spec"});
  if (template_spec == nullptr || !template_spec->IsObject()) {
    return;
  }
  const json::Value* metadata = json::find_object(vm, "metadata");
  std::string seed;
  if (std::string_view uid = metadata != nullptr ? json::find_string(*metadata, "uid") : ""; !uid.empty()) {
    seed = "uid:" + std::string(uid);
  } else {
    seed = "vm:" + std::string(namespace_name) + "/" +
           std::string(metadata != nullptr ? json::find_string(*metadata, "name") : "");
  }
  json::Value& firmware = json::ensure_object(spec::domain(*template_spec, allocator), "firmware", allocator);
  if (spec::empty_string(firmware, "uuid")) {
    json::set_string(firmware, "uuid", name_based_uuid(seed + "#firmware-uuid"), allocator);
  }
  if (spec::empty_string(firmware, "serial")) {
    json::set_string(firmware, "serial", name_based_uuid(seed + "#firmware-serial"), allocator);
  }
}

}  // namespace vmgate::admission::defaults
