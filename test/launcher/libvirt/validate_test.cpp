// Every example VMI and every golden VMI converts and defines with VIR_DOMAIN_DEFINE_VALIDATE,
// on the in-process test driver and on the embedded QEMU driver (which also checks
// machine/SMM/firmware rules the test driver does not know: docs/launcher.md, "Tests: define and validate").
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"
#include "vmgate/launcher/converter.hpp"
#include "vmgate/launcher/libvirt.hpp"
#include "vmgate/launcher/options.hpp"
#include "vmgate/launcher/vmi_source.hpp"

namespace vmgate::launcher {
namespace {

const std::filesystem::path fixtures = std::filesystem::path(VMGATE_SOURCE_DIR) / "test/fixtures/launcher";

struct Case {
  std::string file;
  std::string xml;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  ConvertOptions options;
  options.software_emulation = true;
  options.cpuset = {2, 3, 5, 7};  // as the golden tests' pod
  options.cpu_numa_nodes = {{2, 0}, {3, 0}, {5, 1}, {7, 1}};
  options.layout.block_pvcs = {"lun"};
  for (const char* dir : {"examples", "golden"}) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(fixtures / dir)) {
      const auto extension = entry.path().extension();
      if (extension == ".yaml" || extension == ".json") {
        files.push_back(entry.path());
      }
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      // The examples are VMIs as users write them: loaded as the launcher loads --vmi, through
      // admission's VMI defaults. The golden VMIs are the converter's own inputs, some of which
      // admission would deny (a pc machine, a hostDisk without its feature gate): taken as they are.
      Result<json::Document> vmi = Error{""};
      if (std::string_view(dir) == "golden") {
        vmi = vmgate::testing::parse(vmgate::testing::read_file(file.string()));
      } else {
        LauncherOptions launcher_options;
        launcher_options.vmi_file = file.string();
        std::istringstream no_input;
        vmi = load_vmi(launcher_options, no_input);
      }
      EXPECT_TRUE(vmi.ok()) << file << ": " << vmi.error().message;
      if (!vmi) {
        continue;
      }
      Result<std::string> xml = convert(*vmi, options);
      EXPECT_TRUE(xml.ok()) << file << ": " << xml.error().message;
      if (xml) {
        cases.push_back({file.filename().string(), *xml});
      }
    }
  }
  return cases;
}

// Defines `xml` persistently with VIR_DOMAIN_DEFINE_VALIDATE (libvirt's RNG schema check). The
// launcher itself starts transient domains; persistent definition is only this test's check.
Result<DomainHandle> define_validated(virConnectPtr connection, const std::string& xml) {
  DomainHandle domain(virDomainDefineXMLFlags(connection, xml.c_str(), VIR_DOMAIN_DEFINE_VALIDATE));
  if (!domain) {
    return Error{"libvirt refused the domain: " + last_libvirt_error()};
  }
  return domain;
}

void define_all(const std::string& uri, const std::vector<std::string>& skip) {
  EventLoop loop;
  Result<ConnectHandle> connection = open_connection(uri);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  const std::vector<Case> cases = all_cases();
  EXPECT_GE(cases.size(), 30U);
  for (const Case& c : cases) {
    if (std::find(skip.begin(), skip.end(), c.file) != skip.end()) {
      continue;
    }
    Result<DomainHandle> domain = define_validated(connection->get(), c.xml);
    EXPECT_TRUE(domain.ok()) << c.file << ": " << domain.error().message << "\n" << c.xml;
    if (domain) {
      // The test driver refuses the NVRAM flag; the QEMU driver needs it for EFI domains.
      const bool undefined = virDomainUndefineFlags(domain->get(), VIR_DOMAIN_UNDEFINE_NVRAM) == 0 ||
                             virDomainUndefine(domain->get()) == 0;
      EXPECT_TRUE(undefined) << c.file << ": " << last_libvirt_error();
    }
  }
}

TEST(DefineValidate, TestDriver) {
  define_all("test:///default", {});
}

TEST(DefineValidate, EmbeddedQemuDriver) {
  if (!std::filesystem::exists("/usr/lib/x86_64-linux-gnu/libvirt/connection-driver/libvirt_driver_qemu.so")) {
    if (std::getenv("CI") != nullptr) {
      FAIL() << "libvirt-daemon-driver-qemu is not installed (tools/install-deps)";
    }
    GTEST_SKIP() << "libvirt-daemon-driver-qemu is not installed";
  }
  // The driver writes its state (capabilities cache, pid file, etc/qemu.conf) under the root: a
  // fresh temporary one, removed afterwards, keeps the source and build trees clean. The price is
  // one capabilities probe per run.
  const vmgate::testing::TemporaryDirectory directory;
  const std::string root = (directory.path() / "embed-root").string();
  Result<std::string> conf = write_embed_qemu_conf(root);
  ASSERT_TRUE(conf.ok()) << conf.error().message;
  // The QEMU driver validates a TPM 2.0 against swtpm's capabilities: without swtpm (KubeVirt's
  // launcher image ships it) it refuses "TPM version '2.0' is not supported".
  std::vector<std::string> skip;
  if (std::system("command -v swtpm >/dev/null 2>&1") != 0) {
    skip.push_back("tpm-persistent.json");
  }
  define_all(embed_uri(root), skip);
}

}  // namespace
}  // namespace vmgate::launcher
