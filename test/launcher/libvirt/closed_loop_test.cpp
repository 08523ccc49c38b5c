// The closed loop (docs/launcher.md, "The closed loop"): every VM and VMI that the admission core
// admits, from five sources, goes through the launcher's converter and is defined with
// VIR_DOMAIN_DEFINE_VALIDATE on test:///default. The converter may refuse only what needs
// hardware (the list below, each refusal naming its field); everything it converts must define.
// One process: admission, conversion and libvirt's test driver all run in-process.
//   - KubeVirt's examples (VMGATE_SHARED_DIR/data/real-world/kubevirt-examples; skipped when absent),
//   - the admission fixtures (test/fixtures/admission-cases),
//   - the acceptance sample (VMGATE_SHARED_DIR/acceptance-sample; skipped when absent),
//   - the common-instancetypes matrix (VMGATE_SHARED_DIR/data/common-instancetypes: every
//     cluster instancetype with every cluster preference; skipped when absent),
//   - the differential generator (tools/differential/generate.py, fixed seed and count).
// Each source prints its counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "support/json_test_support.hpp"
#include "support/temporary_directory.hpp"
#include "vmgate/admission/pipeline.hpp"
#include "vmgate/kube/manifest_loader.hpp"
#include "vmgate/launcher/converter.hpp"
#include "vmgate/launcher/libvirt.hpp"

namespace vmgate::launcher {
namespace {

namespace fs = std::filesystem;

// Fields that need hardware or a host the launcher's node may not have; the converter refuses
// them by name (docs/launcher.md, "The closed loop"). A refusal of any other field fails the test,
// unless it is on kubevirt_fails_too below.
constexpr std::string_view hardware_fields[] = {
    "spec.domain.devices.gpus",              // GPU passthrough and vGPUs (device plugins)
    "spec.domain.devices.hostDevices",       // PCI and mediated host devices (device plugins)
    "spec.domain.devices.interfaces.sriov",  // SR-IOV virtual functions (device plugins)
    "spec.resourceClaims",                   // DRA resource claims
    "spec.domain.launchSecurity",            // SEV / SEV-SNP / TDX: the CPU's memory encryption
    "spec.architecture",                     // an arm64 or s390x guest needs a node of its own
};

// Admitted inputs that KubeVirt's own launcher cannot boot either: libvirt or QEMU refuse the
// domain KubeVirt would write. The converter names the field and libvirt's reason instead.
struct FailsToo {
  std::string_view field;    // the refused field, without list indexes
  std::string_view message;  // a part of the converter's message
};
constexpr FailsToo kubevirt_fails_too[] = {
    {"spec.domain.memory.guest", "required"},  // no memory at all: a 0-byte domain
    {"spec.domain.memory.guest", "must be a positive quantity"},
    {"spec.domain.memory.guest", "(the virtio-mem block)"},  // QEMU: virtio-mem sizes are block multiples
    {"spec.domain.memory.maxGuest", "(the virtio-mem block)"},
    {"spec.domain.memory.maxGuest", "must not be less than"},  // libvirt: maxMemory below memory
    {"spec.domain.cpu", "must be at least 1"},                 // a topology of 0 vCPUs
    {"spec.domain.features.hyperv.spinlocks.spinlocks", "at least 4095"},
    {"spec.domain.clock.timezone", "time zone name"},
    {"spec.domain.cpu.features.name", "listed twice"},
    {"spec.volumes", "a lun disk needs a block volume"},
    {"spec.domain.devices.disks.disk.bus", "must be virtio, sata, scsi or usb"},  // ide (not on q35), nvme
    {"spec.domain.devices.disks.lun.bus", "must be virtio, scsi or sata"},
    {"spec.domain.devices.inputs.bus", "must be usb or virtio"},       // input.go: "unsupported bus"
    {"spec.domain.devices.inputs.type", "only tablet"},                // input.go: "unsupported type"
    {"spec.domain.devices.video.type", "must be one of"},              // libvirt: unknown video model
    {"spec.domain.memory.hugepages.pageSize", "must be a page size"},  // no such huge page size
};

// Admitted inputs KubeVirt runs with a newer libvirt, which libvirt 9.0 (Debian 12, this
// launcher's) cannot express: refused by name, not dropped.
constexpr std::string_view libvirt9_fields[] = {
    "spec.domain.features.hyperv.tlbflush.direct",    // <tlbflush><direct/> (libvirt 10)
    "spec.domain.features.hyperv.tlbflush.extended",  // <tlbflush><extended/> (libvirt 10)
    "spec.domain.ioThreadsPolicy",                    // supplementalPool: <driver><iothreads> (libvirt 10)
    "spec.domain.ioThreads",
    "spec.domain.devices.disks.blockSize.custom.discardGranularity",  // <blockio discard_granularity>
};

bool is_hardware(std::string_view field) {
  return std::any_of(std::begin(hardware_fields), std::end(hardware_fields), [&](std::string_view prefix) {
    return field.starts_with(prefix) &&
           (field.size() == prefix.size() || field[prefix.size()] == '.' || field[prefix.size()] == '[');
  });
}

bool needs_newer_libvirt(std::string_view field) {
  return std::find(std::begin(libvirt9_fields), std::end(libvirt9_fields), field) != std::end(libvirt9_fields);
}

bool fails_too(std::string_view field, std::string_view message) {
  return std::any_of(std::begin(kubevirt_fails_too), std::end(kubevirt_fails_too), [&](const FailsToo& entry) {
    return field == entry.field && message.find(entry.message) != std::string_view::npos;
  });
}

// One admission request with its cluster.
struct Case {
  std::string name;
  json::Document objects;  // array
  json::Document request;  // {operation, namespace, object, oldObject}
};

struct Counts {
  int cases = 0;
  int denied = 0;
  int not_expandable = 0;  // a VM admitted without its instancetype or preference (the webhook warns)
  int vms = 0;             // admitted VMs and VMIs that reached the converter
  int vmis = 0;
  int converted = 0;
  int defined = 0;
  std::map<std::string, int> hardware;     // refused field (without indexes) → count
  std::map<std::string, int> failing;      // refused as KubeVirt's launcher fails too: field → count
  std::map<std::string, int> libvirt9;     // refused as libvirt 9.0 cannot express it: field → count
  std::vector<std::string> unexplained;    // "case: error"
  std::vector<std::string> define_errors;  // "case: libvirt's message"
};

std::string without_indexes(std::string_view field) {
  std::string out;
  bool in_index = false;
  for (const char c : field) {
    if (c == '[') {
      in_index = true;
    } else if (c == ']') {
      in_index = false;
    } else if (!in_index) {
      out.push_back(c);
    }
  }
  return out;
}

// The claims of `vmi` that the pod mounts as block devices: PVCs of volumeMode Block in the
// case's cluster (a DataVolume's PVC has its name), as KubeVirt's pod template mounts them.
std::set<std::string> block_claims(const json::Value& vmi, const json::Value& objects) {
  std::set<std::string> block_pvc_names;
  if (objects.IsArray()) {
    for (const json::Value& object : objects.GetArray()) {
      const json::Value* mode = json::find_path(object, {"spec", "volumeMode"});
      const json::Value* metadata = json::find(object, "metadata");
      if (json::find_string(object, "kind") == "PersistentVolumeClaim" && mode != nullptr && mode->IsString() &&
          json::as_view(*mode) == "Block" && metadata != nullptr && metadata->IsObject()) {
        block_pvc_names.insert(std::string(json::find_string(*metadata, "name")));
      }
    }
  }
  std::set<std::string> volumes;
  const json::Value* list = json::find_path(vmi, {"spec", "volumes"});
  if (list != nullptr && list->IsArray()) {
    for (const json::Value& volume : list->GetArray()) {
      const json::Value* pvc = json::find(volume, "persistentVolumeClaim");
      const json::Value* dv = json::find(volume, "dataVolume");
      std::string_view claim;
      if (pvc != nullptr && pvc->IsObject()) {
        claim = json::find_string(*pvc, "claimName");
      } else if (dv != nullptr && dv->IsObject()) {
        claim = json::find_string(*dv, "name");
      }
      if (!claim.empty() && block_pvc_names.count(std::string(claim)) != 0) {
        volumes.insert(std::string(json::find_string(volume, "name")));
      }
    }
  }
  return volumes;
}

class ClosedLoop : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loop_ = new EventLoop();
    Result<ConnectHandle> connection = open_connection("test:///default");
    ASSERT_TRUE(connection.ok()) << connection.error().message;
    connection_ = connection->release();
  }
  static void TearDownTestSuite() {
    if (connection_ != nullptr) {
      virConnectClose(connection_);
      connection_ = nullptr;
    }
    delete loop_;
    loop_ = nullptr;
  }

  // Admits, converts and defines every case; prints the source's counts.
  Counts run(const std::string& source, const std::vector<Case>& cases) const {
    Counts counts;
    ConvertOptions options;
    options.software_emulation = true;
    // A pod on a large node of two NUMA nodes: dedicatedCpuPlacement finds its CPUs.
    for (int cpu = 0; cpu < 1024; ++cpu) {
      options.cpuset.push_back(cpu);
      options.cpu_numa_nodes[cpu] = cpu / 512;  // two NUMA nodes of 512 CPUs
    }
    // blockSize.matchVolume: every volume as if probed on an ext4 file system (4 KiB blocks).
    const BlockSizes ext4{4096, 4096};
    for (const Case& c : cases) {
      ++counts.cases;
      admission::ObjectStore store;
      if (c.objects.IsArray()) {
        for (const json::Value& object : c.objects.GetArray()) {
          // Kinds the store does not hold are skipped, as `vmgate check --objects` skips them.
          (void)store.add(object);
        }
      }
      const json::Value* object = json::find(c.request, "object");
      if (object == nullptr || !object->IsObject()) {
        ++counts.denied;
        continue;
      }
      admission::Request request;
      request.object = object;
      const bool is_vmi = json::find_string(*object, "kind") == "VirtualMachineInstance";
      request.resource = is_vmi ? admission::Resource::virtual_machine_instance : admission::Resource::virtual_machine;
      request.operation = json::find_string(c.request, "operation") == "UPDATE" ? admission::Operation::update
                                                                                : admission::Operation::create;
      if (const std::string_view ns = json::find_string(c.request, "namespace"); !ns.empty()) {
        request.namespace_name = std::string(ns);
      }
      const json::Value* old_object = json::find(c.request, "oldObject");
      request.old_object = old_object != nullptr && old_object->IsObject() ? old_object : nullptr;
      const admission::Outcome outcome = pipeline_.admit(request, store);
      if (!outcome.verdict.allowed) {
        ++counts.denied;
        continue;
      }
      const json::Value& vmi = is_vmi ? outcome.admitted : outcome.expanded;
      if (!vmi.IsObject()) {
        ++counts.not_expandable;
        continue;
      }
      ++(is_vmi ? counts.vmis : counts.vms);
      options.layout.block_pvcs = block_claims(vmi, c.objects);
      options.block_sizes.clear();
      if (const json::Value* volumes = json::find_path(vmi, {"spec", "volumes"});
          volumes != nullptr && volumes->IsArray()) {
        for (const json::Value& volume : volumes->GetArray()) {
          options.block_sizes[std::string(json::find_string(volume, "name"))] = ext4;
        }
      }
      Result<std::string> xml = convert(vmi, options);
      if (!xml) {
        const std::string& message = xml.error().message;
        const std::string field = without_indexes(message.substr(0, message.find(": ")));
        if (is_hardware(field)) {
          ++counts.hardware[field];
        } else if (fails_too(field, message)) {
          ++counts.failing[field];
        } else if (needs_newer_libvirt(field)) {
          ++counts.libvirt9[field];
        } else {
          counts.unexplained.push_back(c.name + ": " + message);
        }
        continue;
      }
      ++counts.converted;
      DomainHandle domain(virDomainDefineXMLFlags(connection_, xml->c_str(), VIR_DOMAIN_DEFINE_VALIDATE));
      if (!domain) {
        counts.define_errors.push_back(c.name + ": " + last_libvirt_error() + "\n" + *xml);
        continue;
      }
      ++counts.defined;
      EXPECT_EQ(virDomainUndefine(domain.get()), 0) << c.name << ": " << last_libvirt_error();
    }
    int hardware = 0;
    std::ostringstream refused;
    for (const auto& [field, count] : counts.hardware) {
      hardware += count;
      refused << " " << field << "=" << count;
    }
    int failing = 0;
    std::ostringstream failed;
    for (const auto& [field, count] : counts.failing) {
      failing += count;
      failed << " " << field << "=" << count;
    }
    int libvirt9 = 0;
    std::ostringstream newer;
    for (const auto& [field, count] : counts.libvirt9) {
      libvirt9 += count;
      newer << " " << field << "=" << count;
    }
    std::cout << "closed loop, " << source << ": " << counts.cases << " cases, " << counts.denied << " denied, "
              << counts.not_expandable << " admitted VMs not expandable; " << counts.vms << " VMs + " << counts.vmis
              << " VMIs admitted; " << counts.converted << " converted, " << counts.defined << " defined; " << hardware
              << " refused for hardware" << (hardware != 0 ? " (" + refused.str().substr(1) + ")" : "") << "; "
              << failing << " refused as KubeVirt's launcher fails too"
              << (failing != 0 ? " (" + failed.str().substr(1) + ")" : "") << "; " << libvirt9
              << " refused as libvirt 9.0 cannot express them"
              << (libvirt9 != 0 ? " (" + newer.str().substr(1) + ")" : "") << "; " << counts.unexplained.size()
              << " unexplained refusals, " << counts.define_errors.size() << " define errors\n";
    std::map<std::string, int> unexplained_fields;
    for (const std::string& refusal : counts.unexplained) {
      const std::size_t start = refusal.find(": ") + 2;
      ++unexplained_fields[without_indexes(refusal.substr(start, refusal.find(": ", start) - start))];
    }
    for (const auto& [field, count] : unexplained_fields) {
      std::cout << "  unexplained: " << field << " x" << count << "\n";
    }
    for (const std::string& refusal : counts.unexplained) {
      ADD_FAILURE() << "refused, and not for hardware: " << refusal;
    }
    for (const std::string& error : counts.define_errors) {
      ADD_FAILURE() << "libvirt refused the domain: " << error;
    }
    EXPECT_EQ(counts.converted, counts.defined);
    EXPECT_EQ(counts.vms + counts.vmis,
              counts.converted + hardware + failing + libvirt9 + static_cast<int>(counts.unexplained.size()));
    return counts;
  }

  static inline EventLoop* loop_ = nullptr;
  static inline virConnectPtr connection_ = nullptr;
  const admission::Pipeline pipeline_;
};

// Acceptance-format case files (objects, request) below `dir`, sorted.
std::vector<Case> case_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<Case> cases;
  for (const fs::path& file : files) {
    json::Document document = vmgate::testing::parse(vmgate::testing::read_file(file.string()));
    Case c;
    c.name = fs::relative(file, dir).string();
    if (json::Value* objects = json::find(document, "objects"); objects != nullptr) {
      c.objects.CopyFrom(*objects, c.objects.GetAllocator());
    } else {
      c.objects.SetArray();
    }
    if (json::Value* request = json::find(document, "request"); request != nullptr) {
      c.request.CopyFrom(*request, c.request.GetAllocator());
    } else {
      c.request.SetObject();
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

const fs::path shared_dir = VMGATE_SHARED_DIR;

TEST_F(ClosedLoop, AdmissionFixtures) {
  const std::vector<Case> cases = case_files(fs::path(VMGATE_SOURCE_DIR) / "test/fixtures/admission-cases");
  ASSERT_GE(cases.size(), 600U);
  const Counts counts = run("admission fixtures", cases);
  EXPECT_GE(counts.converted, 200);
}

TEST_F(ClosedLoop, AcceptanceSample) {
  const fs::path dir = shared_dir / "acceptance-sample/cases";
  if (!fs::exists(dir)) {
    GTEST_SKIP() << "no acceptance sample in VMGATE_SHARED_DIR (" << shared_dir << ")";
  }
  const Counts counts = run("acceptance sample", case_files(dir));
  EXPECT_GE(counts.converted, 10);
}

// Every cluster instancetype with every cluster preference, as a user's VM: a containerDisk root
// disk and a cloud-init disk, the rest from the instancetype and the preference. In three shards
// (instancetypes by index modulo 3), each its own ctest: under the sanitizers the whole matrix
// takes minutes.
class ClosedLoopMatrix : public ClosedLoop, public ::testing::WithParamInterface<int> {};
constexpr int matrix_shards = 3;

TEST_P(ClosedLoopMatrix, CommonInstancetypes) {
  const fs::path dir = shared_dir / "data/common-instancetypes";
  if (!fs::exists(dir)) {
    GTEST_SKIP() << "no common-instancetypes in VMGATE_SHARED_DIR (" << shared_dir << ")";
  }
  std::istringstream no_input;
  Result<std::vector<kube::ManifestObject>> instancetypes =
      kube::load_manifests({(dir / "cluster-instancetypes.yaml").string()}, no_input);
  Result<std::vector<kube::ManifestObject>> preferences =
      kube::load_manifests({(dir / "cluster-preferences.yaml").string()}, no_input);
  ASSERT_TRUE(instancetypes.ok()) << instancetypes.error().message;
  ASSERT_TRUE(preferences.ok()) << preferences.error().message;
  ASSERT_GE(instancetypes->size(), 60U);
  ASSERT_GE(preferences->size(), 50U);
  std::vector<Case> cases;
  int index = -1;
  for (const kube::ManifestObject& instancetype : *instancetypes) {
    if (++index % matrix_shards != GetParam()) {
      continue;
    }
    const std::string_view it_name = json::find_string(*json::find(instancetype.object(), "metadata"), "name");
    for (const kube::ManifestObject& preference : *preferences) {
      const std::string_view pref_name = json::find_string(*json::find(preference.object(), "metadata"), "name");
      Case c;
      c.name = std::string(it_name) + " x " + std::string(pref_name);
      c.objects.SetArray();
      c.objects.PushBack(json::copy(instancetype.object(), c.objects.GetAllocator()), c.objects.GetAllocator());
      c.objects.PushBack(json::copy(preference.object(), c.objects.GetAllocator()), c.objects.GetAllocator());
      c.request = vmgate::testing::parse(R"({"operation":"CREATE","namespace":"default","object":{
        "apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"vm","namespace":"default"},
        "spec":{"runStrategy":"Always",
          "instancetype":{"kind":"VirtualMachineClusterInstancetype","name":")" +
                                         std::string(it_name) + R"("},
          "preference":{"kind":"VirtualMachineClusterPreference","name":")" +
                                         std::string(pref_name) + R"("},
          "template":{"spec":{"domain":{"devices":{"disks":[{"name":"rootdisk"},{"name":"cloudinit"}]}},
            "volumes":[{"name":"rootdisk","containerDisk":{"image":"quay.io/containerdisks/fedora:41"}},
                       {"name":"cloudinit","cloudInitNoCloud":{"userData":"#cloud-config\n"}}]}}}}})");
      cases.push_back(std::move(c));
    }
  }
  const Counts counts = run("common-instancetypes matrix (shard " + std::to_string(GetParam() + 1) + " of " +
                                std::to_string(matrix_shards) + ")",
                            cases);
  EXPECT_GE(counts.converted, 600);
}

INSTANTIATE_TEST_SUITE_P(Shards, ClosedLoopMatrix, ::testing::Range(0, matrix_shards));

// KubeVirt's published examples (kubevirt/kubevirt examples/), with the instancetypes and
// preferences they name and the KubeVirt CR of the feature gates KubeVirt validates them with:
// every example admission admits converts, but those that need hardware, which are refused by
// name (GPUs, SR-IOV, resource claims, arm64).
TEST_F(ClosedLoop, KubevirtExamples) {
  const fs::path dir = shared_dir / "data/real-world/kubevirt-examples";
  if (!fs::exists(dir)) {
    GTEST_SKIP() << "no real-world data in VMGATE_SHARED_DIR (" << shared_dir << ")";
  }
  std::vector<std::string> object_files;
  for (const char* sub : {"objects", "cluster-gates"}) {
    for (const auto& entry : fs::directory_iterator(dir / sub)) {
      object_files.push_back(entry.path().string());
    }
  }
  std::sort(object_files.begin(), object_files.end());
  std::istringstream no_input;
  Result<std::vector<kube::ManifestObject>> objects = kube::load_manifests(object_files, no_input);
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir / "vms")) {
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Case> cases;
  for (const fs::path& file : files) {
    Result<std::vector<kube::ManifestObject>> loaded = kube::load_manifests({file.string()}, no_input);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    for (const kube::ManifestObject& object : *loaded) {
      Case c;
      c.name = file.filename().string();
      c.objects.SetArray();
      for (const kube::ManifestObject& cluster_object : *objects) {
        c.objects.PushBack(json::copy(cluster_object.object(), c.objects.GetAllocator()), c.objects.GetAllocator());
      }
      c.request.SetObject();
      json::set_string(c.request, "operation", "CREATE", c.request.GetAllocator());
      json::set_string(c.request, "namespace", "default", c.request.GetAllocator());
      json::set(c.request, "object", json::copy(object.object(), c.request.GetAllocator()), c.request.GetAllocator());
      cases.push_back(std::move(c));
    }
  }
  ASSERT_EQ(cases.size(), 34U);
  const Counts counts = run("KubeVirt's examples", cases);
  EXPECT_EQ(counts.vms + counts.vmis, 28);
  EXPECT_GE(counts.converted, 24);
}

// tools/differential/generate.py, a fixed seed and count: plausible VMs and VMIs with faults
// injected into about half (those are denied).
TEST_F(ClosedLoop, DifferentialGenerator) {
  if (std::system("command -v python3 >/dev/null") != 0) {
    if (std::getenv("CI") != nullptr) {
      FAIL() << "python3 is needed for tools/differential/generate.py";
    }
    GTEST_SKIP() << "no python3";
  }
  constexpr int seed = 20261126;
  constexpr int count = 1500;
  const vmgate::testing::TemporaryDirectory directory;
  const std::string command = "python3 '" + std::string(VMGATE_SOURCE_DIR) +
                              "/tools/differential/generate.py' --seed " + std::to_string(seed) + " --count " +
                              std::to_string(count) + " --out '" + directory.path().string() + "' >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const std::vector<Case> cases = case_files(directory.path());
  ASSERT_EQ(cases.size(), static_cast<std::size_t>(count));
  const Counts counts = run("differential generator (seed " + std::to_string(seed) + ")", cases);
  EXPECT_GE(counts.converted, 300);
}

}  // namespace
}  // namespace vmgate::launcher
