// vmgate-container-disk: copies a containerDisk's disk out of its image in an init container of
// the launcher pod (docs/controller.md, "The launcher pod"). Statically linked, since it runs in
// the containerDisk's image, which has no libc of its own (KubeVirt's are FROM scratch):
//   vmgate-container-disk install DEST       (image: the launcher's) this binary to DEST, 0555
//   vmgate-container-disk copy --to DIR [--image-root ROOT]
//                                            (image: the containerDisk's) ROOT/disk/* to DIR/disk/
// Exit: 0 done, 1 the copy failed (one line on stderr why), 2 usage. main() only wires.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "vmgate/launcher/container_disk.hpp"

namespace {

constexpr std::string_view usage =
    "Usage: vmgate-container-disk install DEST\n"
    "       vmgate-container-disk copy --to DIR [--image-root ROOT]\n\n"
    "install: copies this (static) binary to DEST, mode 0555, for the containerDisk init\n"
    "containers of a launcher pod.\n"
    "copy: copies the one regular file under ROOT/disk/ (default ROOT: /, the containerDisk's\n"
    "image) to DIR/disk/<its name>, where vmgate-launcher reads it. A disk/ that holds nothing,\n"
    "several entries, or anything but a regular file of the image (raw, or qcow2 without a\n"
    "backing file) is refused.\n";

int fail(const std::string& message, int code) {
  std::fprintf(stderr, "vmgate-container-disk: %s\n", message.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int exit_usage = 2;
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::fputs(usage.data(), stdout);
    return 0;
  }
  if (args.size() == 2 && args[0] == "install") {
    if (vmgate::Status installed = vmgate::launcher::install_executable("/proc/self/exe", std::string(args[1]));
        !installed) {
      return fail(installed.error().message, 1);
    }
    return 0;
  }
  if (!args.empty() && args[0] == "copy") {
    std::string to;
    std::string image_root = "/";
    for (std::size_t i = 1; i < args.size(); i += 2) {
      if (i + 1 >= args.size() || args[i + 1].empty()) {
        return fail(std::string(args[i]) + " needs a value\n" + std::string(usage), exit_usage);
      }
      if (args[i] == "--to") {
        to = args[i + 1];
      } else if (args[i] == "--image-root") {
        image_root = args[i + 1];
      } else {
        return fail("unknown option " + std::string(args[i]) + "\n" + std::string(usage), exit_usage);
      }
    }
    if (to.empty()) {
      return fail("copy needs --to DIR\n" + std::string(usage), exit_usage);
    }
    vmgate::Result<std::string> copied = vmgate::launcher::copy_container_disk(image_root, to);
    if (!copied) {
      return fail(copied.error().message, 1);
    }
    std::fprintf(stderr, "vmgate-container-disk: copied the disk to %s\n", copied->c_str());
    return 0;
  }
  return fail("expected install DEST or copy --to DIR\n" + std::string(usage), exit_usage);
}
