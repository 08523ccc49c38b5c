// <devices>: the disks and interfaces from their parts, then the devices KubeVirt's converter
// adds itself: serial console, inputs, graphics, watchdog, rng, memory balloon.
#include "converter_core.hpp"

#include "vmgate/launcher/pod_layout.hpp"

#include <algorithm>
#include <iterator>
#include <string>
#include <string_view>

namespace vmgate::launcher::detail {

void Converter::map_devices(XmlElement& domain, const Value& spec_domain) {
  const Value* device_spec = json::find(spec_domain, "devices");
  const std::string path = "spec.domain.devices";
  static const Value empty_object(rapidjson::kObjectType);
  if (device_spec == nullptr) {
    device_spec = &empty_object;
  }
  check_keys(device_spec, path,
             {"disks",
              "interfaces",
              "inputs",
              "watchdog",
              "rng",
              "autoattachGraphicsDevice",
              "autoattachMemBalloon",
              "autoattachSerialConsole",
              "autoattachPodInterface",
              "useVirtioTransitional",
              "logSerialConsole",
              "autoattachInputDevice",
              "blockMultiQueue",
              "networkInterfaceMultiqueue",
              "disableHotplug",
              "tpm",
              "sound",
              "panicDevices",
              "video",
              "clientPassthrough",
              "filesystems",
              "downwardMetrics"});
  if (!device_spec->IsObject()) {
    return;
  }
  virtio_transitional_ = get_bool(*device_spec, "useVirtioTransitional", path).value_or(false);
  // virtio-blk and virtio-net queues: one per vCPU the guest starts with (disk.go, network/builder.go).
  block_multi_queue_ = get_bool(*device_spec, "blockMultiQueue", path).value_or(false);
  interface_multi_queue_ = get_bool(*device_spec, "networkInterfaceMultiqueue", path).value_or(false);
  // disableHotplug only keeps KubeVirt from reserving PCIe ports for hotplug: no device here.
  (void)get_bool(*device_spec, "disableHotplug", path);
  auto& devices = domain.add_child("devices");
  map_disks(devices, *device_spec);
  map_interfaces(devices, *device_spec);

  // The serial console (console.go): a unix socket QEMU listens on, as KubeVirt's
  // `virt-serial0`, which the node agent relays to `virtctl console`, logged to a file for
  // `--console-log`, the guest-console-log container and the tests.
  if (get_bool(*device_spec, "autoattachSerialConsole", path).value_or(true)) {
    const std::string log = options_.layout.serial_log.empty()
                                ? options_.layout.private_dir + "/" + std::string(kube::pod_paths::serial_log_name)
                                : options_.layout.serial_log;
    const std::string socket = options_.layout.private_dir + "/" + std::string(kube::pod_paths::serial_socket_name);
    auto& serial = devices.add_child("serial").set_attribute("type", "unix");
    serial.add_child("source").set_attribute("mode", "bind").set_attribute("path", socket);
    serial.add_child("log").set_attribute("file", log).set_attribute("append", "on");
    serial.add_child("target").set_attribute("port", "0");
    auto& console = devices.add_child("console").set_attribute("type", "unix");
    console.add_child("source").set_attribute("mode", "bind").set_attribute("path", socket);
    console.add_child("target").set_attribute("type", "serial").set_attribute("port", "0");
  } else if (bios_use_serial_) {
    // libvirt: "need at least one serial port to use BIOS serial output".
    fail("spec.domain.firmware.bootloader.bios.useSerial", "needs the serial console (autoattachSerialConsole)");
  }
  const Value* inputs = json::find(*device_spec, "inputs");
  if ((inputs == nullptr || (inputs->IsArray() && inputs->Empty())) &&
      get_bool(*device_spec, "autoattachInputDevice", path).value_or(false)) {
    // The VM controller's AutoAttachInputDevice adds "default-0", which the VMI defaults make a
    // usb tablet.
    devices.add_child("input")
        .set_attribute("type", "tablet")
        .set_attribute("bus", "usb")
        .add_child("alias")
        .set_attribute("name", "ua-default-0");
  }
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
    // graphics.go: devices.video.type when set, else vga; 16 MiB of VRAM, one head.
    std::string type = "vga";
    if (const Value* video = json::find(*device_spec, "video"); check_keys(video, path + ".video", {"type"})) {
      type = get_string(*video, "type", path + ".video").value_or("vga");
      static constexpr std::string_view types[] = {"vga", "cirrus", "virtio", "bochs", "ramfb"};
      if (std::find(std::begin(types), std::end(types), type) == std::end(types)) {
        fail(path + ".video.type", "must be one of vga, cirrus, virtio, bochs, ramfb");
      }
    }
    auto& model = devices.add_child("video").add_child("model").set_attribute("type", type);
    if (type != "ramfb") {
      model.set_attribute("vram", "16384");
    }
    model.set_attribute("heads", "1");
  } else if (json::find(*device_spec, "video") != nullptr) {
    check_keys(json::find(*device_spec, "video"), path + ".video", {"type"});
  }
  // tpm.go: an emulated TPM 2.0 (swtpm); persistent state on tpm-crb.
  if (const Value* tpm = json::find(*device_spec, "tpm"); check_keys(tpm, path + ".tpm", {"enabled", "persistent"})) {
    if (get_bool(*tpm, "enabled", path + ".tpm").value_or(true)) {
      const bool persistent = get_bool(*tpm, "persistent", path + ".tpm").value_or(false);
      auto& backend = devices.add_child("tpm")
                          .set_attribute("model", persistent ? "tpm-crb" : "tpm-tis")
                          .add_child("backend")
                          .set_attribute("type", "emulator")
                          .set_attribute("version", "2.0");
      if (persistent) {
        backend.set_attribute("persistent_state", "yes");
      }
    }
  }
  if (const Value* sound = json::find(*device_spec, "sound"); check_keys(sound, path + ".sound", {"name", "model"})) {
    const std::string model = get_string(*sound, "model", path + ".sound").value_or("ich9");
    if (model != "ich9" && model != "ac97") {
      fail(path + ".sound.model", "must be ich9 or ac97");
    }
    auto& card = devices.add_child("sound").set_attribute("model", model);
    if (auto name = get_string(*sound, "name", path + ".sound"); name && !name->empty()) {
      card.add_child("alias").set_attribute("name", "ua-" + *name);
    }
  }
  if (const Value* panics = json::find(*device_spec, "panicDevices"); panics != nullptr) {
    if (!panics->IsArray()) {
      fail(path + ".panicDevices", "must be an array");
    } else {
      for (rapidjson::SizeType i = 0; i < panics->Size(); ++i) {
        const std::string item = path + ".panicDevices[" + std::to_string(i) + "]";
        if (check_keys(&(*panics)[i], item, {"model"})) {
          const std::string model = get_string((*panics)[i], "model", item).value_or("isa");
          if (model != "isa" && model != "hyperv") {
            fail(item + ".model", "must be isa or hyperv on amd64");
          }
          devices.add_child("panic").set_attribute("model", model);
        }
      }
    }
  }
  // usb_redir.go: four USB redirection sockets for virtctl usbredir.
  if (const Value* client = json::find(*device_spec, "clientPassthrough");
      check_keys(client, path + ".clientPassthrough", {})) {
    const Value* metadata = json::find(vmi_, "metadata");
    const std::string uid =
        metadata != nullptr && metadata->IsObject() ? std::string(json::find_string(*metadata, "uid")) : std::string();
    usb_needed_ = true;
    for (int i = 0; i < 4; ++i) {
      devices.add_child("redirdev")
          .set_attribute("type", "unix")
          .set_attribute("bus", "usb")
          .add_child("source")
          .set_attribute("mode", "bind")
          .set_attribute("path", options_.layout.private_dir + "/" + (uid.empty() ? name_ : uid) + "/virt-usbredir-" +
                                     std::to_string(i));
    }
  }
  if (const Value* watchdog = json::find(*device_spec, "watchdog");
      check_keys(watchdog, path + ".watchdog", {"name", "i6300esb"})) {
    // A watchdog without a model is an i6300esb on amd64 (pkg/defaults SetAmd64Watchdog).
    static const Value no_settings(rapidjson::kObjectType);
    const Value* esb = json::find(*watchdog, "i6300esb");
    if (esb == nullptr) {
      esb = &no_settings;
    }
    if (check_keys(esb, path + ".watchdog.i6300esb", {"action"})) {
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
  map_filesystems(devices, *device_spec);
  // channels.go: the downward metrics reach the guest on a virtio-serial port (vhostmd).
  if (const Value* metrics = json::find(*device_spec, "downwardMetrics");
      check_keys(metrics, path + ".downwardMetrics", {})) {
    auto& channel = devices.add_child("channel").set_attribute("type", "unix");
    channel.add_child("source")
        .set_attribute("mode", "bind")
        .set_attribute("path", options_.layout.private_dir + "/downwardmetrics-channel/downwardmetrics.sock");
    channel.add_child("target").set_attribute("type", "virtio").set_attribute("name", "org.github.vhostmd.1");
  }
  map_memory_device(devices);
  if (usb_needed_) {
    // controllers.go: a qemu-xhci controller when a USB device needs one.
    devices.add_child("controller")
        .set_attribute("type", "usb")
        .set_attribute("index", "0")
        .set_attribute("model", "qemu-xhci");
  }
}

// virtiofs.go: each filesystem is served by virtiofsd in its own container of the pod, on a
// socket named after it; the guest mounts it by the tag `name`.
void Converter::map_filesystems(XmlElement& devices, const Value& device_spec) {
  const std::string path = "spec.domain.devices.filesystems";
  const Value* filesystems = json::find(device_spec, "filesystems");
  if (filesystems == nullptr) {
    return;
  }
  if (!filesystems->IsArray()) {
    fail(path, "must be an array");
    return;
  }
  for (rapidjson::SizeType i = 0; i < filesystems->Size(); ++i) {
    const std::string item = path + "[" + std::to_string(i) + "]";
    const Value& filesystem = (*filesystems)[i];
    if (!check_keys(&filesystem, item, {"name", "virtiofs"})) {
      continue;
    }
    const std::string name = get_string(filesystem, "name", item).value_or("");
    if (json::find(filesystem, "virtiofs") == nullptr) {
      fail(item + ".virtiofs", "required");
      continue;
    }
    if (!is_file_name(name)) {
      fail(item + ".name", "cannot name a file in the pod (contains '/' or is '.' or '..')");
      continue;
    }
    auto& element =
        devices.add_child("filesystem").set_attribute("type", "mount").set_attribute("accessmode", "passthrough");
    element.add_child("driver").set_attribute("type", "virtiofs").set_attribute("queue", "1024");
    element.add_child("source").set_attribute("socket", virtiofs_socket(options_.layout, name));
    element.add_child("target").set_attribute("dir", name);
  }
}

}  // namespace vmgate::launcher::detail
