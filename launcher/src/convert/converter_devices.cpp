// <devices>: the disks and interfaces from their parts, then the devices KubeVirt's converter
// adds itself: serial console, inputs, graphics, watchdog, rng, memory balloon.
#include "converter_core.hpp"

#include <string>

namespace vmgate::launcher::detail {

void Converter::map_devices(XmlElement& domain, const Value& spec_domain) {
  const Value* device_spec = json::find(spec_domain, "devices");
  const std::string path = "spec.domain.devices";
  static const Value empty_object(rapidjson::kObjectType);
  if (device_spec == nullptr) {
    device_spec = &empty_object;
  }
  check_keys(device_spec, path,
             {"disks", "interfaces", "inputs", "watchdog", "rng", "autoattachGraphicsDevice", "autoattachMemBalloon",
              "autoattachSerialConsole", "autoattachPodInterface", "useVirtioTransitional", "logSerialConsole"});
  if (!device_spec->IsObject()) {
    return;
  }
  virtio_transitional_ = get_bool(*device_spec, "useVirtioTransitional", path).value_or(false);
  auto& devices = domain.add_child("devices");
  map_disks(devices, *device_spec);
  map_interfaces(devices, *device_spec);

  // The serial console (console.go), logged to a file for `--console-log` and the tests.
  if (get_bool(*device_spec, "autoattachSerialConsole", path).value_or(true)) {
    const std::string log = options_.layout.serial_log.empty() ? options_.layout.private_dir + "/virt-serial0-log"
                                                               : options_.layout.serial_log;
    auto& serial = devices.add_child("serial").set_attribute("type", "file");
    serial.add_child("source").set_attribute("path", log).set_attribute("append", "on");
    serial.add_child("target").set_attribute("port", "0");
    devices.add_child("console").set_attribute("type", "file").add_child("target").set_attribute("type", "serial");
  } else if (bios_use_serial_) {
    // libvirt: "need at least one serial port to use BIOS serial output".
    fail("spec.domain.firmware.bootloader.bios.useSerial", "needs the serial console (autoattachSerialConsole)");
  }
  const Value* inputs = json::find(*device_spec, "inputs");
  if (inputs != nullptr && inputs->IsArray()) {
    for (rapidjson::SizeType i = 0; i < inputs->Size(); ++i) {
      const std::string item = path + ".inputs[" + std::to_string(i) + "]";
      const Value& input = (*inputs)[i];
      if (!check_keys(&input, item, {"name", "type", "bus"})) {
        continue;
      }
      const std::string type = get_string(input, "type", item).value_or("tablet");
      const std::string bus = get_string(input, "bus", item).value_or("usb");
      if (type != "tablet") {
        fail(item + ".type", "only tablet is supported");
      }
      if (bus != "usb" && bus != "virtio") {
        fail(item + ".bus", "must be usb or virtio");
      }
      // No virtio model on a tablet: libvirt 9.0's QEMU driver rejects it.
      auto& element = devices.add_child("input").set_attribute("type", "tablet").set_attribute("bus", bus);
      if (auto name = get_string(input, "name", item)) {
        element.add_child("alias").set_attribute("name", "ua-" + *name);
      }
    }
  } else if (inputs != nullptr) {
    fail(path + ".inputs", "must be an array");
  }
  if (get_bool(*device_spec, "autoattachGraphicsDevice", path).value_or(true)) {
    devices.add_child("graphics")
        .set_attribute("type", "vnc")
        .add_child("listen")
        .set_attribute("type", "socket")
        .set_attribute("socket", options_.layout.private_dir + "/virt-vnc");
    devices.add_child("video")
        .add_child("model")
        .set_attribute("type", "vga")
        .set_attribute("vram", "16384")
        .set_attribute("heads", "1");
  }
  if (const Value* watchdog = json::find(*device_spec, "watchdog");
      check_keys(watchdog, path + ".watchdog", {"name", "i6300esb"})) {
    const Value* esb = json::find(*watchdog, "i6300esb");
    if (esb == nullptr) {
      fail(path + ".watchdog.i6300esb", "required");
    } else if (check_keys(esb, path + ".watchdog.i6300esb", {"action"})) {
      const std::string action = get_string(*esb, "action", path + ".watchdog.i6300esb").value_or("reset");
      if (action != "reset" && action != "poweroff" && action != "shutdown") {
        fail(path + ".watchdog.i6300esb.action", "must be reset, poweroff or shutdown");
      }
      auto& element = devices.add_child("watchdog").set_attribute("model", "i6300esb").set_attribute("action", action);
      if (auto name = get_string(*watchdog, "name", path + ".watchdog")) {
        element.add_child("alias").set_attribute("name", "ua-" + *name);
      }
    }
  }
  if (const Value* rng = json::find(*device_spec, "rng"); check_keys(rng, path + ".rng", {})) {
    devices.add_child("rng")
        .set_attribute("model", virtio_model())
        .add_child("backend")
        .set_attribute("model", "random")
        .set_text("/dev/urandom");
  }
  if (get_bool(*device_spec, "autoattachMemBalloon", path).value_or(true)) {
    auto& balloon = devices.add_child("memballoon").set_attribute("model", virtio_model());
    balloon.set_attribute("freePageReporting", "off");
    balloon.add_child("stats").set_attribute("period", "10");
  } else {
    devices.add_child("memballoon").set_attribute("model", "none");
  }
  map_memory_device(devices);
}

}  // namespace vmgate::launcher::detail
