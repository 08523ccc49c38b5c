// container_disk_file (launcher/src/container_disk/container_disk.cpp): the one entry under disk/,
// symbolic links followed inside the image only, and KubeVirt's image checks (raw or qcow2, no
// backing file), with real qcow2 files from qemu-img.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/temporary_directory.hpp"
#include "vmgate/launcher/container_disk.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;
using vmgate::testing::TemporaryDirectory;
using vmgate::testing::write_text;

const std::string layout = " (a containerDisk image holds its disk as the one file under disk/)";

bool qemu_img(const std::string& arguments) {
  return std::system(("qemu-img " + arguments + " >/dev/null 2>&1").c_str()) == 0;
}

// An image volume with `disk/` in it.
struct Image {
  Image() { fs::create_directories(root / "disk"); }
  TemporaryDirectory directory;
  fs::path root = directory.path() / "disk_0";
  [[nodiscard]] std::string error() const { return container_disk_file(root.string()).error().message; }
};

TEST(ContainerDiskFile, TheOneEntryUnderDisk) {
  const TemporaryDirectory directory;
  const fs::path volume = directory.path() / "disk_0";
  EXPECT_EQ(container_disk_file(volume.string()).error().message,
            (volume / "disk").string() + ": does not exist" + layout);
  fs::create_directories(volume / "disk");
  EXPECT_EQ(container_disk_file(volume.string()).error().message,
            (volume / "disk").string() + ": no disk image file in it" + layout);
  write_text(volume / "disk" / "fedora.qcow2", "raw bytes");
  const Result<ContainerDisk> disk = container_disk_file(volume.string());
  ASSERT_TRUE(disk.ok()) << disk.error().message;
  EXPECT_EQ(disk->file, (volume / "disk" / "fedora.qcow2").string());
  EXPECT_EQ(disk->format, ImageFormat::raw);  // the name says nothing; the bytes do
  // Every entry counts, a directory too (KubeVirt: only one disk is allowed).
  fs::create_directories(volume / "disk" / "extra");
  EXPECT_EQ(container_disk_file(volume.string()).error().message,
            (volume / "disk").string() + ": 2 entries (extra, fedora.qcow2), which is the disk?" + layout);
  // disk is a file, not the directory.
  fs::create_directories(directory.path() / "flat");
  write_text(directory.path() / "flat" / "disk", "z");
  EXPECT_EQ(container_disk_file((directory.path() / "flat").string()).error().message,
            (directory.path() / "flat" / "disk").string() + ": cannot read the directory: Not a directory" + layout);
}

TEST(ContainerDiskFile, OnlyARegularFile) {
  Image image;
  fs::create_directories(image.root / "disk" / "a-directory");
  EXPECT_EQ(image.error(), (image.root / "disk" / "a-directory").string() + ": not a regular file" + layout);
  Image fifo;
  ASSERT_EQ(::mkfifo((fifo.root / "disk" / "pipe").c_str(), 0600), 0);
  EXPECT_EQ(fifo.error(), (fifo.root / "disk" / "pipe").string() + ": not a regular file" + layout);
}

// The reproduction of the isolation issue: a link to the launcher's service-account token. It is
// read as a path of the image, where nothing is.
TEST(ContainerDiskFile, SymbolicLinksStayInsideTheImage) {
  const TemporaryDirectory outside;
  write_text(outside.path() / "token", "secret");
  Image absolute;
  fs::create_symlink(outside.path() / "token", absolute.root / "disk" / "disk.img");
  const fs::path first = *outside.path().relative_path().begin();  // "tmp": the image has none
  EXPECT_EQ(absolute.error(), (absolute.root / "disk").string() + ": /disk/disk.img resolves to " +
                                  (absolute.root / first).string() + ", which is not in the image");
  Image climbing;
  fs::create_symlink("../../../../../../../../" + (outside.path() / "token").relative_path().string(),
                     climbing.root / "disk" / "disk.img");
  EXPECT_EQ(climbing.error(), (climbing.root / "disk").string() + ": /disk/disk.img resolves to " +
                                  (climbing.root / first).string() + ", which is not in the image");
  // The same path inside the image is the image's own file.
  fs::create_directories((climbing.root / outside.path().relative_path()));
  write_text(climbing.root / outside.path().relative_path() / "token", "the image's bytes");
  const Result<ContainerDisk> inside = container_disk_file(climbing.root.string());
  ASSERT_TRUE(inside.ok()) << inside.error().message;
  EXPECT_EQ(inside->file, (climbing.root / outside.path().relative_path() / "token").string());
  // Relative and absolute links within the image, chained.
  Image chained;
  fs::create_directories(chained.root / "images");
  write_text(chained.root / "images" / "real.img", "bytes");
  fs::create_symlink("/images/link2", chained.root / "disk" / "disk.img");
  fs::create_symlink("real.img", chained.root / "images" / "link2");
  const Result<ContainerDisk> followed = container_disk_file(chained.root.string());
  ASSERT_TRUE(followed.ok()) << followed.error().message;
  EXPECT_EQ(followed->file, (chained.root / "images" / "real.img").string());
  Image loop;
  fs::create_symlink("/disk/disk.img", loop.root / "disk" / "disk.img");
  EXPECT_EQ(loop.error(), (loop.root / "disk").string() + ": /disk/disk.img: too many levels of symbolic links");
}

TEST(ContainerDiskFile, RawOrQcow2WithoutABackingFileOrADataFile) {
  Image qcow;
  ASSERT_TRUE(qemu_img("create -f qcow2 " + (qcow.root / "disk" / "disk.qcow2").string() + " 1M"));
  const Result<ContainerDisk> plain = container_disk_file(qcow.root.string());
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->format, ImageFormat::qcow2);

  const TemporaryDirectory outside;
  write_text(outside.path() / "token", std::string(4096, 't'));
  Image backed;
  const fs::path backed_file = backed.root / "disk" / "disk.qcow2";
  ASSERT_TRUE(
      qemu_img("create -f qcow2 -b " + (outside.path() / "token").string() + " -F raw " + backed_file.string()));
  EXPECT_EQ(backed.error(), backed_file.string() +
                                ": invalid image in the containerDisk: expected no backing file, but found " +
                                (outside.path() / "token").string());

  Image data;
  const fs::path data_file = data.root / "disk" / "disk.qcow2";
  ASSERT_TRUE(qemu_img("create -f qcow2 -o data_file=" + (outside.path() / "data").string() + " " + data_file.string() +
                       " 1M"));
  EXPECT_EQ(data.error(), data_file.string() +
                              ": invalid image in the containerDisk: expected no external data file, but the qcow2 "
                              "image names one");

  Image vmdk;
  const fs::path vmdk_file = vmdk.root / "disk" / "disk.vmdk";
  ASSERT_TRUE(qemu_img("create -f vmdk " + vmdk_file.string() + " 1M"));
  EXPECT_EQ(vmdk.error(), vmdk_file.string() + ": invalid image in the containerDisk: unsupported image format: vmdk");

  Image cut;
  write_text(cut.root / "disk" / "disk.qcow2", std::string("QFI\xfb\0\0\0\3", 8));
  EXPECT_EQ(cut.error(), (cut.root / "disk" / "disk.qcow2").string() +
                             ": invalid image in the containerDisk: a qcow2 header cut short (8 bytes)");
}

}  // namespace
}  // namespace vmgate::launcher
