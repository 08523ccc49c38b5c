#include "vmgate/node/node_labels.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "vmgate/common/json_decode.hpp"

namespace vmgate::node {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;

// Captured on a development machine (libvirt 9.0, QEMU 7.2, an AMD host whose /dev/kvm is the
// paravirtual kvm_pvm): `virsh -c qemu:///embed?root=DIR domcapabilities --machine q35 --arch
// x86_64 --virttype {qemu,kvm}`, `capabilities`, and `hypervisor-cpu-baseline --features` of
// each, as node-labeller.sh runs them.
std::string fixture(const std::string& name) {
  std::ifstream in(std::string(VMGATE_SOURCE_DIR) + "/test/fixtures/node/libvirt/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

NodeFacts facts_of(const std::string& virttype) {
  NodeFacts facts;
  Result<DomainCapabilities> domain = parse_domain_capabilities(fixture("domcapabilities-" + virttype + ".xml"));
  EXPECT_TRUE(domain) << domain.error().message;
  facts.domain = *domain;
  Result<HostCapabilities> host = parse_host_capabilities(fixture("capabilities.xml"));
  EXPECT_TRUE(host) << host.error().message;
  facts.host = *host;
  Result<std::vector<std::string>> features = parse_baseline_features(fixture("baseline-" + virttype + ".xml"));
  EXPECT_TRUE(features) << features.error().message;
  facts.supported_features = *features;
  return facts;
}

json::Document json_of(std::string_view text) {
  Result<json::Document, json::DecodeError> document = json::parse_json(text);
  EXPECT_TRUE(document) << document.error().message;
  return std::move(document.value());
}

TEST(DomainCapabilities, QemuFixtureHasHostModelAndUsableModels) {
  Result<DomainCapabilities> caps = parse_domain_capabilities(fixture("domcapabilities-qemu.xml"));
  ASSERT_TRUE(caps) << caps.error().message;
  EXPECT_EQ(caps->arch, "x86_64");
  EXPECT_EQ(caps->machine, "pc-q35-7.2");
  ASSERT_TRUE(caps->host_model.present);
  EXPECT_EQ(caps->host_model.name, "EPYC");
  EXPECT_EQ(caps->host_model.fallback, "forbid");
  EXPECT_EQ(caps->host_model.vendor, "AMD");
  EXPECT_THAT(caps->host_model.features, Contains(Pair("require", "acpi")));
  EXPECT_THAT(caps->host_model.features, Contains(Pair("disable", "vme")));
  // TCG cannot give EPYC all its features: host-model is EPYC with some disabled.
  EXPECT_THAT(caps->usable_models, Contains("qemu64"));
  EXPECT_THAT(caps->usable_models, Contains("Westmere"));
  EXPECT_THAT(caps->usable_models, Not(Contains("EPYC")));
  EXPECT_THAT(caps->usable_models, Not(Contains("Skylake-Client")));
  EXPECT_THAT(caps->known_models, Contains("Skylake-Client"));
  EXPECT_FALSE(caps->sev);
  EXPECT_FALSE(caps->tdx);
}

TEST(DomainCapabilities, KvmFixtureHostModelIsKvm64) {
  Result<DomainCapabilities> caps = parse_domain_capabilities(fixture("domcapabilities-kvm.xml"));
  ASSERT_TRUE(caps) << caps.error().message;
  EXPECT_EQ(caps->host_model.name, "kvm64");
  EXPECT_THAT(caps->usable_models, ElementsAre("pentium3", "pentium2", "pentium", "486"));
}

TEST(HostCapabilities, TscAndEveryGuestsMachines) {
  Result<HostCapabilities> caps = parse_host_capabilities(fixture("capabilities.xml"));
  ASSERT_TRUE(caps) << caps.error().message;
  ASSERT_TRUE(caps->tsc.has_value());
  EXPECT_EQ(caps->tsc->frequency, 2596126000U);
  EXPECT_FALSE(caps->tsc->scaling);
  EXPECT_THAT(caps->machines, Contains("q35"));
  EXPECT_THAT(caps->machines, Contains("pc-q35-7.2"));
  EXPECT_THAT(caps->machines, Contains("pc"));
  // i686 and x86_64 list the same machines: each once.
  EXPECT_EQ(std::count(caps->machines.begin(), caps->machines.end(), "q35"), 1);
}

TEST(BaselineFeatures, RequiredOnly) {
  Result<std::vector<std::string>> features = parse_baseline_features(fixture("baseline-kvm.xml"));
  ASSERT_TRUE(features) << features.error().message;
  EXPECT_THAT(*features, Contains("apic"));
  EXPECT_THAT(*features, Not(Contains("pni")));  // policy='disable'
}

TEST(HostModelCpuXml, CarriesModelVendorAndEveryFeature) {
  Result<DomainCapabilities> caps = parse_domain_capabilities(fixture("domcapabilities-kvm.xml"));
  ASSERT_TRUE(caps);
  const std::string xml = host_model_cpu_xml(caps->host_model);
  EXPECT_THAT(xml, HasSubstr("<cpu mode='custom' match='exact'>"));
  EXPECT_THAT(xml, HasSubstr("<model fallback='forbid'>kvm64</model>"));
  EXPECT_THAT(xml, HasSubstr("<vendor>AMD</vendor>"));
  EXPECT_THAT(xml, HasSubstr("<feature policy='disable' name='pni'/>"));
  EXPECT_EQ(host_model_cpu_xml(HostModel{}), "");
  HostModel odd{.present = true, .name = "a<b", .fallback = "", .vendor = "", .features = {{"require", "x'y"}}};
  EXPECT_THAT(host_model_cpu_xml(odd), HasSubstr("<model>a&lt;b</model>"));
  EXPECT_THAT(host_model_cpu_xml(odd), HasSubstr("name='x&apos;y'"));
}

TEST(NodeLabels, QemuFixtureWithDefaults) {
  const std::map<std::string, std::string> labels = node_labels(facts_of("qemu"), KubeVirtSettings{});
  EXPECT_THAT(labels, Contains(Pair("cpu-model.node.kubevirt.io/Westmere", "true")));
  EXPECT_THAT(labels, Contains(Pair("cpu-model.node.kubevirt.io/Nehalem", "true")));
  EXPECT_THAT(labels, Contains(Pair("cpu-model.node.kubevirt.io/Penryn", "true")));
  EXPECT_THAT(labels, Not(Contains(Key("cpu-model.node.kubevirt.io/EPYC"))));
  // Obsolete by KubeVirt's default list although usable.
  EXPECT_THAT(labels, Not(Contains(Key("cpu-model.node.kubevirt.io/qemu64"))));
  EXPECT_THAT(labels, Not(Contains(Key("cpu-model.node.kubevirt.io/486"))));
  // Known but not usable: a migration label only.
  EXPECT_THAT(labels, Not(Contains(Key("cpu-model.node.kubevirt.io/Skylake-Client"))));
  EXPECT_THAT(labels, Contains(Pair("cpu-model-migration.node.kubevirt.io/Skylake-Client", "true")));
  EXPECT_THAT(labels, Not(Contains(Key("cpu-model-migration.node.kubevirt.io/Conroe"))));
  EXPECT_THAT(labels, Contains(Pair("host-model-cpu.node.kubevirt.io/EPYC", "true")));
  EXPECT_THAT(labels, Contains(Pair("host-model-required-features.node.kubevirt.io/acpi", "true")));
  EXPECT_THAT(labels, Not(Contains(Key("host-model-required-features.node.kubevirt.io/vme"))));  // disable
  EXPECT_THAT(labels, Contains(Pair("cpu-vendor.node.kubevirt.io/AMD", "true")));
  EXPECT_THAT(labels, Contains(Pair("cpu-feature.node.kubevirt.io/apic", "true")));
  EXPECT_THAT(labels, Contains(Pair("machine-type.node.kubevirt.io/q35", "true")));
  EXPECT_THAT(labels, Contains(Pair("machine-type.node.kubevirt.io/pc-q35-7.2", "true")));
  EXPECT_THAT(labels, Contains(Pair("cpu-timer.node.kubevirt.io/tsc-frequency", "2596126000")));
  EXPECT_THAT(labels, Contains(Pair("cpu-timer.node.kubevirt.io/tsc-scalable", "false")));
  EXPECT_THAT(labels, Not(Contains(Key("node-labeller.kubevirt.io/obsolete-host-model"))));
  EXPECT_THAT(labels, Not(Contains(Key("kubevirt.io/sev"))));
  EXPECT_THAT(labels, Not(Contains(Key("kubevirt.io/realtime"))));
  for (const auto& [key, value] : labels) {
    EXPECT_TRUE(is_labeller_label(key)) << key;
  }
}

TEST(NodeLabels, KvmFixtureHasNoUsableModelOutsideTheDefaultObsoleteList) {
  const std::map<std::string, std::string> labels = node_labels(facts_of("kvm"), KubeVirtSettings{});
  for (const auto& [key, value] : labels) {
    EXPECT_FALSE(key.starts_with("cpu-model.node.kubevirt.io/")) << key;
  }
  EXPECT_THAT(labels, Contains(Pair("host-model-cpu.node.kubevirt.io/kvm64", "true")));
  // Without the CR's own list, KubeVirt never marks host-model obsolete (a nil map lookup).
  EXPECT_THAT(labels, Not(Contains(Key("node-labeller.kubevirt.io/obsolete-host-model"))));
}

TEST(NodeLabels, CrListReplacesTheDefaultsAndMarksHostModelObsolete) {
  KubeVirtSettings settings;
  settings.obsolete_cpu_models = std::set<std::string>{"EPYC", "Westmere"};
  const std::map<std::string, std::string> labels = node_labels(facts_of("qemu"), settings);
  EXPECT_THAT(labels, Not(Contains(Key("cpu-model.node.kubevirt.io/Westmere"))));
  EXPECT_THAT(labels, Not(Contains(Key("cpu-model-migration.node.kubevirt.io/EPYC"))));
  EXPECT_THAT(labels, Contains(Pair("cpu-model.node.kubevirt.io/Nehalem", "true")));
  EXPECT_THAT(labels, Contains(Pair("cpu-model.node.kubevirt.io/qemu64", "true")));  // not in the CR's list
  EXPECT_THAT(labels, Contains(Pair("node-labeller.kubevirt.io/obsolete-host-model", "true")));
  EXPECT_THAT(labels, Contains(Pair("host-model-cpu.node.kubevirt.io/EPYC", "true")));
}

TEST(NodeLabels, NoUsableModels) {
  constexpr std::string_view xml = R"(<domainCapabilities><arch>x86_64</arch><cpu>
      <mode name='host-model' supported='yes'><model fallback='forbid'>Penryn</model><vendor>Intel</vendor></mode>
      <mode name='custom' supported='yes'><model usable='no'>Haswell</model><model usable='no'>Penryn</model></mode>
    </cpu></domainCapabilities>)";
  Result<DomainCapabilities> caps = parse_domain_capabilities(xml);
  ASSERT_TRUE(caps) << caps.error().message;
  EXPECT_THAT(caps->usable_models, IsEmpty());
  NodeFacts facts;
  facts.domain = *caps;
  const std::map<std::string, std::string> labels = node_labels(facts, {});
  EXPECT_THAT(labels, ElementsAre(Pair("cpu-model-migration.node.kubevirt.io/Haswell", "true"),
                                  Pair("cpu-model-migration.node.kubevirt.io/Penryn", "true"),
                                  Pair("cpu-vendor.node.kubevirt.io/Intel", "true"),
                                  Pair("host-model-cpu.node.kubevirt.io/Penryn", "true")));
}

TEST(NodeLabels, UnknownElementsAndSevSnpTdx) {
  constexpr std::string_view xml = R"(<domainCapabilities><future a='b'><x/></future><arch>x86_64</arch>
    <cpu><mode name='host-model' supported='yes'><model>EPYC-Milan</model><vendor>AMD</vendor>
      <feature policy='require' name='x2apic'/><newthing/></mode>
      <mode name='shiny' supported='yes'><model usable='yes'>Shiny</model></mode>
      <mode name='custom' supported='yes'><model usable='yes' deprecated='yes'>EPYC-Milan</model>
        <model usable='yes'>  </model><model>NoUsableAttribute</model><model usable='yes'>Bad/Name</model></mode></cpu>
    <features><sev supported='yes'><cbitpos>51</cbitpos><maxESGuests>509</maxESGuests></sev>
      <launchSecurity supported='yes'><enum name='sectype'><value>sev</value><value>sev-snp</value></enum></launchSecurity>
      <tdx supported='yes'/></features></domainCapabilities>)";
  Result<DomainCapabilities> caps = parse_domain_capabilities(xml);
  ASSERT_TRUE(caps) << caps.error().message;
  EXPECT_TRUE(caps->sev);
  EXPECT_TRUE(caps->sev_es);
  EXPECT_TRUE(caps->sev_snp);
  EXPECT_TRUE(caps->tdx);
  // As KubeVirt: every mode's models with a usable attribute count, whatever the mode.
  EXPECT_THAT(caps->usable_models, ElementsAre("Shiny", "EPYC-Milan", "Bad/Name"));
  NodeFacts facts;
  facts.domain = *caps;
  facts.realtime = true;
  facts.hyperv = {"base", "synic"};
  const std::map<std::string, std::string> labels = node_labels(facts, {});
  EXPECT_THAT(labels, Contains(Pair("kubevirt.io/sev", "true")));
  EXPECT_THAT(labels, Contains(Pair("kubevirt.io/sev-es", "true")));
  EXPECT_THAT(labels, Contains(Pair("kubevirt.io/sev-snp", "true")));
  EXPECT_THAT(labels, Contains(Pair("kubevirt.io/tdx", "true")));
  EXPECT_THAT(labels, Contains(Pair("kubevirt.io/realtime", "true")));
  EXPECT_THAT(labels, Contains(Pair("hyperv.node.kubevirt.io/synic", "true")));
  EXPECT_THAT(labels, Contains(Pair("cpu-model.node.kubevirt.io/Shiny", "true")));
  // A name that is no label name is left out rather than failing the patch.
  for (const auto& [key, value] : labels) {
    EXPECT_THAT(key, Not(HasSubstr("Bad")));
  }
}

TEST(NodeLabels, SevWithoutEsGuests) {
  Result<DomainCapabilities> caps = parse_domain_capabilities(
      "<domainCapabilities><features><sev supported='yes'><maxESGuests>0</maxESGuests></sev>"
      "<launchSecurity supported='yes'><enum name='sectype'><value>sev-snp</value></enum></launchSecurity>"
      "</features></domainCapabilities>");
  ASSERT_TRUE(caps) << caps.error().message;
  EXPECT_TRUE(caps->sev);
  EXPECT_FALSE(caps->sev_es);
  EXPECT_FALSE(caps->sev_snp);
}

TEST(DomainCapabilities, Errors) {
  EXPECT_THAT(parse_domain_capabilities("<domainCapabilities>").error().message, HasSubstr("not well-formed"));
  EXPECT_THAT(parse_domain_capabilities("<capabilities/>").error().message, HasSubstr("not <domainCapabilities>"));
  EXPECT_THAT(parse_domain_capabilities(
                  "<domainCapabilities><cpu><mode name='host-model' supported='yes'/></cpu></domainCapabilities>")
                  .error()
                  .message,
              HasSubstr("expected to contain a model"));
  // Unsupported and empty: no host-model, no error.
  Result<DomainCapabilities> unsupported = parse_domain_capabilities(
      "<domainCapabilities><cpu><mode name='host-model' supported='no'/></cpu></domainCapabilities>");
  ASSERT_TRUE(unsupported) << unsupported.error().message;
  EXPECT_FALSE(unsupported->host_model.present);
  EXPECT_FALSE(parse_host_capabilities("<domainCapabilities/>"));
  EXPECT_FALSE(parse_baseline_features("not xml"));
  // An external entity is not fetched or expanded.
  Result<DomainCapabilities> entity = parse_domain_capabilities(
      "<!DOCTYPE d [<!ENTITY e SYSTEM 'file:///etc/passwd'>]><domainCapabilities><arch>&e;</arch>"
      "</domainCapabilities>");
  if (entity) {
    EXPECT_THAT(entity->arch, Not(HasSubstr("root")));
  }
}

TEST(KubeVirtSettings, DefaultsWithoutCr) {
  const KubeVirtSettings settings = kubevirt_settings({});
  EXPECT_FALSE(settings.obsolete_cpu_models.has_value());
  EXPECT_FALSE(settings.use_emulation);
  EXPECT_EQ(settings.source, "");
}

TEST(KubeVirtSettings, ReadsTheChosenCr) {
  const json::Document deleting = json_of(
      R"({"metadata":{"name":"a","namespace":"kubevirt","deletionTimestamp":"x"},
          "spec":{"configuration":{"obsoleteCPUModels":{"Haswell":true}}}})");
  const json::Document unready = json_of(R"({"metadata":{"name":"b","namespace":"kubevirt"}})");
  const json::Document deployed = json_of(
      R"({"metadata":{"name":"c","namespace":"kubevirt"},"status":{"phase":"Deployed"},
          "spec":{"configuration":{"obsoleteCPUModels":{"EPYC":true,"Penryn":false},
            "developerConfiguration":{"useEmulation":true,"featureGates":["CPUManager"]}}}})");
  const std::vector<const json::Value*> crs{&deleting, &unready, &deployed};
  const KubeVirtSettings settings = kubevirt_settings(crs);
  EXPECT_EQ(settings.source, "kubevirt/c");
  ASSERT_TRUE(settings.obsolete_cpu_models.has_value());
  // Presence counts, as KubeVirt's `_, ok := obsolete[model]`.
  EXPECT_EQ(*settings.obsolete_cpu_models, (std::set<std::string>{"EPYC", "Penryn"}));
  EXPECT_TRUE(settings.use_emulation);
  EXPECT_TRUE(settings.cpu_manager_gate);
  EXPECT_THAT(settings.errors, IsEmpty());

  const json::Document empty_list =
      json_of(R"({"metadata":{"name":"k"},"spec":{"configuration":{"obsoleteCPUModels":{}}}})");
  const std::vector<const json::Value*> one{&empty_list};
  const KubeVirtSettings none_obsolete = kubevirt_settings(one);
  ASSERT_TRUE(none_obsolete.obsolete_cpu_models.has_value());
  EXPECT_THAT(*none_obsolete.obsolete_cpu_models, IsEmpty());

  const json::Document malformed =
      json_of(R"({"metadata":{"name":"k"},"spec":{"configuration":{"obsoleteCPUModels":["x"]}}})");
  const std::vector<const json::Value*> bad{&malformed};
  const KubeVirtSettings fallback = kubevirt_settings(bad);
  EXPECT_FALSE(fallback.obsolete_cpu_models.has_value());
  EXPECT_THAT(fallback.errors, ElementsAre(HasSubstr("obsoleteCPUModels")));
}

TEST(VirtType, KvmOnlyWithAHardwareModuleAndNoEmulation) {
  EXPECT_EQ(virt_type(false, true, true), "kvm");
  EXPECT_EQ(virt_type(true, true, true), "qemu");
  EXPECT_EQ(virt_type(false, true, false), "qemu");  // kvm_pvm and the like
  EXPECT_EQ(virt_type(false, false, true), "qemu");
}

TEST(LabelsPatch, SetsNewRemovesOwnStaleKeepsForeign) {
  const json::Document current = json_of(
      R"({"kubernetes.io/hostname":"node0","cpu-model.node.kubevirt.io/Old":"true",
          "cpu-model.node.kubevirt.io/EPYC":"true","host-model-cpu.node.kubevirt.io/EPYC":"false",
          "kubevirt.io/schedulable":"true","example.com/cpu-model.node.kubevirt.io":"x"})");
  const std::map<std::string, std::string> desired{{"cpu-model.node.kubevirt.io/EPYC", "true"},
                                                   {"host-model-cpu.node.kubevirt.io/EPYC", "true"},
                                                   {"machine-type.node.kubevirt.io/q35", "true"}};
  const std::optional<std::string> patch = labels_patch(&current, desired);
  ASSERT_TRUE(patch.has_value());
  const json::Document parsed = json_of(*patch);
  const json::Value* labels = json::find_path(parsed, {"metadata", "labels"});
  ASSERT_NE(labels, nullptr);
  EXPECT_TRUE(json::find(*labels, "cpu-model.node.kubevirt.io/Old")->IsNull());
  EXPECT_EQ(json::find_string(*labels, "host-model-cpu.node.kubevirt.io/EPYC"), "true");
  EXPECT_EQ(json::find_string(*labels, "machine-type.node.kubevirt.io/q35"), "true");
  EXPECT_FALSE(json::has(*labels, "cpu-model.node.kubevirt.io/EPYC"));  // unchanged
  EXPECT_FALSE(json::has(*labels, "kubernetes.io/hostname"));
  EXPECT_FALSE(json::has(*labels, "kubevirt.io/schedulable"));  // the heartbeat's
  EXPECT_FALSE(json::has(*labels, "example.com/cpu-model.node.kubevirt.io"));
  EXPECT_EQ(labels->MemberCount(), 3U);
}

TEST(LabelsPatch, NothingToChange) {
  const json::Document current = json_of(R"({"a":"b","machine-type.node.kubevirt.io/q35":"true"})");
  EXPECT_FALSE(labels_patch(&current, {{"machine-type.node.kubevirt.io/q35", "true"}}).has_value());
  EXPECT_TRUE(labels_patch(nullptr, {{"machine-type.node.kubevirt.io/q35", "true"}}).has_value());
  EXPECT_FALSE(labels_patch(nullptr, {}).has_value());
}

TEST(LabelOwnership, Prefixes) {
  EXPECT_TRUE(is_labeller_label("cpu-feature.node.kubevirt.io/avx"));
  EXPECT_TRUE(is_labeller_label("kubevirt.io/sev-snp"));
  EXPECT_TRUE(is_labeller_label("node-labeller.kubevirt.io/obsolete-host-model"));
  EXPECT_TRUE(is_labeller_label("kubevirt.io/vm-arch-arm64"));
  EXPECT_FALSE(is_labeller_label("kubevirt.io/schedulable"));
  EXPECT_FALSE(is_labeller_label("kubevirt.io/cpumanager"));
  EXPECT_FALSE(is_labeller_label("node-labeller.kubevirt.io/skip-node"));
  EXPECT_FALSE(is_labeller_label("kubernetes.io/arch"));
}

TEST(Heartbeat, PatchAndSkipAndCpuManager) {
  const json::Document patch = json_of(heartbeat_patch(false, true, "2026-01-02T03:04:05Z"));
  EXPECT_EQ(json::find_string(*json::find_path(patch, {"metadata", "labels"}), "kubevirt.io/schedulable"), "false");
  EXPECT_EQ(json::find_string(*json::find_path(patch, {"metadata", "labels"}), "kubevirt.io/cpumanager"), "true");
  EXPECT_EQ(json::find_string(*json::find_path(patch, {"metadata", "labels"}), "cpumanager"), "true");
  EXPECT_EQ(json::find_string(*json::find_path(patch, {"metadata", "annotations"}), "kubevirt.io/heartbeat"),
            "2026-01-02T03:04:05Z");
  EXPECT_TRUE(skip_node(json_of(R"({"metadata":{"annotations":{"node-labeller.kubevirt.io/skip-node":""}}})")));
  EXPECT_FALSE(skip_node(json_of(R"({"metadata":{}})")));
  EXPECT_TRUE(cpu_manager_static(R"({"policyName":"static","defaultCpuSet":"0-3"})"));
  EXPECT_FALSE(cpu_manager_static(R"({"policyName":"none"})"));
  EXPECT_FALSE(cpu_manager_static("garbage"));
}

}  // namespace
}  // namespace vmgate::node
