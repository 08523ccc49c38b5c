// copy_container_disk and install_executable (launcher/src/container_disk/container_disk_copy.cpp)
// and the static vmgate-container-disk binary that runs them in a launcher pod's init containers.
#include <elf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"
#include "vmgate/launcher/container_disk.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;
using vmgate::testing::read_file;
using vmgate::testing::TemporaryDirectory;
using vmgate::testing::write_text;

const std::string layout = " (a containerDisk image holds its disk as the one file under disk/)";

// A containerDisk image's root (`/` in the init container) and the emptyDir the copy goes to.
struct Copy {
  Copy() {
    fs::create_directories(image / "disk");
    fs::create_directories(to);
  }
  [[nodiscard]] Result<std::string> run() const { return copy_container_disk(image.string(), to.string()); }
  TemporaryDirectory directory;
  fs::path image = directory.path() / "image";
  fs::path to = directory.path() / "disk_0";
};

TEST(ContainerDiskCopy, CopiesTheOneRegularFileKeepingHoles) {
  const Copy copy;
  const std::string head = "QEMU-less raw disk";
  {
    std::ofstream disk(copy.image / "disk" / "fedora.img", std::ios::binary);
    disk << head;
    disk.seekp((64 << 20) - 1);  // 64 MiB, nearly all a hole
    disk.put('z');
  }
  Result<std::string> copied = copy.run();
  ASSERT_TRUE(copied.ok()) << copied.error().message;
  EXPECT_EQ(*copied, (copy.to / "disk" / "fedora.img").string());
  const std::string content = read_file(*copied);
  ASSERT_EQ(content.size(), std::size_t{64} << 20U);
  EXPECT_EQ(content.substr(0, head.size()), head);
  EXPECT_EQ(content.back(), 'z');
  struct stat status {};
  ASSERT_EQ(::stat(copied->c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0444U);
  EXPECT_LT(status.st_blocks * 512, 8 << 20) << "the hole was written out";
  // Only the disk is left: no temporary, and the launcher's own check takes the copy.
  EXPECT_EQ(std::distance(fs::directory_iterator(copy.to), fs::directory_iterator()), 1);
  Result<ContainerDisk> found = container_disk_file(copy.to.string());
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->file, *copied);
}

TEST(ContainerDiskCopy, ASymlinkInsideTheImageIsFollowed) {
  const Copy copy;
  fs::create_directories(copy.image / "data");
  write_text(copy.image / "data" / "real.img", "disk bytes");
  fs::create_symlink("/data/real.img", copy.image / "disk" / "disk.img");  // absolute: from the image's root
  Result<std::string> copied = copy.run();
  ASSERT_TRUE(copied.ok()) << copied.error().message;
  EXPECT_EQ(read_file(*copied), "disk bytes");
  EXPECT_FALSE(fs::is_symlink(*copied));
}

TEST(ContainerDiskCopy, RefusesAnythingButOneRegularFile) {
  {
    const Copy copy;
    EXPECT_EQ(copy.run().error().message, (copy.image / "disk").string() + ": no disk image file in it" + layout);
  }
  {
    const Copy copy;
    write_text(copy.image / "disk" / "a.img", "a");
    write_text(copy.image / "disk" / "b.img", "b");
    EXPECT_EQ(copy.run().error().message,
              (copy.image / "disk").string() + ": 2 entries (a.img, b.img), which is the disk?" + layout);
  }
  {
    const Copy copy;
    ASSERT_EQ(::mkfifo((copy.image / "disk" / "disk.img").c_str(), 0600), 0);
    EXPECT_EQ(copy.run().error().message,
              (copy.image / "disk" / "disk.img").string() + ": not a regular file" + layout);
  }
  {
    const Copy copy;
    fs::create_directories(copy.image / "disk" / "disk.img");
    EXPECT_EQ(copy.run().error().message,
              (copy.image / "disk" / "disk.img").string() + ": not a regular file" + layout);
  }
  {
    const Copy copy;
    fs::create_symlink("/dev/null", copy.image / "disk" / "disk.img");  // the image's /dev/null: absent
    EXPECT_NE(copy.run().error().message.find("is not in the image"), std::string::npos) << copy.run().error().message;
  }
  {
    const Copy copy;
    fs::remove_all(copy.image / "disk");
    EXPECT_EQ(copy.run().error().message, (copy.image / "disk").string() + ": does not exist" + layout);
  }
}

TEST(ContainerDiskCopy, TheTargetMustBeADirectory) {
  const Copy copy;
  write_text(copy.image / "disk" / "disk.img", "x");
  EXPECT_EQ(copy_container_disk(copy.image.string(), (copy.directory.path() / "absent").string()).error().message,
            (copy.directory.path() / "absent").string() + ": not a directory (the emptyDir the copy goes to)");
}

TEST(ContainerDiskInstall, CopiesAnExecutableReadOnly) {
  const TemporaryDirectory directory;
  write_text(directory.path() / "tool", "#!/bin/sh\n");
  const fs::path target = directory.path() / "init" / "vmgate-container-disk";
  fs::create_directories(target.parent_path());
  ASSERT_TRUE(install_executable((directory.path() / "tool").string(), target.string()).ok());
  EXPECT_EQ(read_file(target.string()), "#!/bin/sh\n");
  struct stat status {};
  ASSERT_EQ(::stat(target.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 07777, 0555U);
  EXPECT_EQ(install_executable((directory.path() / "absent").string(), target.string()).error().message,
            (directory.path() / "absent").string() + ": cannot open: No such file or directory");
}

// The binary runs in images without a libc: no program interpreter (what `ldd` calls "not a
// dynamic executable").
TEST(ContainerDiskBinary, IsStaticAndCopiesAsTheInitContainerRunsIt) {
  const std::string binary = VMGATE_CONTAINER_DISK_BINARY;
  const std::string elf = read_file(binary);
  ASSERT_GT(elf.size(), sizeof(Elf64_Ehdr));
  Elf64_Ehdr header{};
  std::memcpy(&header, elf.data(), sizeof header);
  bool interpreter = false;
  for (std::size_t i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr program{};
    std::memcpy(&program, elf.data() + header.e_phoff + i * header.e_phentsize, sizeof program);
    interpreter = interpreter || program.p_type == PT_INTERP;
  }
#ifndef VMGATE_SANITIZED
  EXPECT_FALSE(interpreter) << binary << " is dynamically linked";
#endif
  const Copy copy;
  write_text(copy.image / "disk" / "disk.qcow2.raw", "bytes");
  const fs::path init = copy.directory.path() / "init";
  fs::create_directories(init);
  const std::string installed = (init / "vmgate-container-disk").string();
  ASSERT_EQ(std::system((binary + " install " + installed).c_str()), 0);
  EXPECT_EQ(std::system(
                (installed + " copy --to " + copy.to.string() + " --image-root " + copy.image.string() + " 2>/dev/null")
                    .c_str()),
            0);
  EXPECT_EQ(read_file((copy.to / "disk" / "disk.qcow2.raw").string()), "bytes");
  const std::string err = (copy.directory.path() / "err").string();
  const int refused = std::system(
      (installed + " copy --to " + copy.to.string() + " --image-root " + init.string() + " 2>" + err).c_str());
  ASSERT_TRUE(WIFEXITED(refused));
  EXPECT_EQ(WEXITSTATUS(refused), 1);
  EXPECT_EQ(read_file(err), "vmgate-container-disk: " + (init / "disk").string() + ": does not exist" + layout + "\n");
  const int usage = std::system((installed + " copy 2>/dev/null").c_str());
  ASSERT_TRUE(WIFEXITED(usage));
  EXPECT_EQ(WEXITSTATUS(usage), 2);
}

}  // namespace
}  // namespace vmgate::launcher
