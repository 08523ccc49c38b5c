// The pure parts of the client and the cache: paths, escaping, Status messages. The informers
// themselves are tested against a real kube-apiserver (test/e2e/cluster_test.sh).
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "vmgate/kube/api_client.hpp"
#include "vmgate/kube/watch_cache.hpp"

namespace vmgate::kube {
namespace {

const ResourceSpec& spec_of(const std::vector<ResourceSpec>& specs, admission::ObjectKind kind) {
  for (const ResourceSpec& spec : specs) {
    if (spec.kind == kind) {
      return spec;
    }
  }
  throw std::logic_error("no such kind");
}

TEST(ResourceSpec, PathsAndApiVersions) {
  const std::vector<ResourceSpec> specs = admission_resources();
  const ResourceSpec& pvc = spec_of(specs, admission::ObjectKind::persistent_volume_claim);
  EXPECT_EQ(pvc.collection_path(), "/api/v1/persistentvolumeclaims");
  EXPECT_EQ(pvc.object_path("team-a", "disk-1"), "/api/v1/namespaces/team-a/persistentvolumeclaims/disk-1");
  EXPECT_EQ(pvc.api_version(), "v1");
  const ResourceSpec& cluster_instancetype = spec_of(specs, admission::ObjectKind::cluster_instancetype);
  EXPECT_EQ(cluster_instancetype.object_path("ignored", "u1.medium"),
            "/apis/instancetype.kubevirt.io/v1beta1/virtualmachineclusterinstancetypes/u1.medium");
  EXPECT_EQ(cluster_instancetype.api_version(), "instancetype.kubevirt.io/v1beta1");
  EXPECT_EQ(spec_of(specs, admission::ObjectKind::data_source).api_version(), "cdi.kubevirt.io/v1beta1");
}

// Only the install namespace's KubeVirt CR configures vmgate: one a tenant creates elsewhere is
// never listed.
TEST(ResourceSpec, TheKubeVirtCrIsReadFromOneNamespace) {
  EXPECT_EQ(spec_of(admission_resources(), admission::ObjectKind::kubevirt).collection_path(),
            "/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts");
  EXPECT_EQ(spec_of(admission_resources("kv-system"), admission::ObjectKind::kubevirt).collection_path(),
            "/apis/kubevirt.io/v1/namespaces/kv-system/kubevirts");
  for (const ResourceSpec& spec : admission_resources()) {
    EXPECT_EQ(spec.only_namespace.empty(), spec.kind != admission::ObjectKind::kubevirt) << spec.resource;
  }
}

TEST(ResourceSpec, EveryKindTheStoreHoldsIsReadOnceAndOnlyTheKubeVirtCrIsNotLookedUpLive) {
  std::set<admission::ObjectKind> kinds;
  for (const ResourceSpec& spec : admission_resources()) {
    EXPECT_TRUE(kinds.insert(spec.kind).second) << spec.resource;
    EXPECT_EQ(spec.namespaced, admission::is_namespaced(spec.kind)) << spec.resource;
    EXPECT_EQ(spec.resource, admission::resource_name(spec.kind)) << spec.resource;
    EXPECT_EQ(spec.live_lookup, spec.kind != admission::ObjectKind::kubevirt) << spec.resource;
  }
  EXPECT_EQ(kinds.size(), static_cast<std::size_t>(admission::ObjectKind::kubevirt) + 1);
}

TEST(QueryEscape, KeepsUnreservedAndEncodesTheRest) {
  EXPECT_EQ(query_escape("disk-1_a.b~c"), "disk-1_a.b~c");
  EXPECT_EQ(query_escape("instancetype.kubevirt.io/object-kind"), "instancetype.kubevirt.io%2Fobject-kind");
  EXPECT_EQ(query_escape("a b&c=d"), "a%20b%26c%3Dd");
  EXPECT_EQ(query_escape("\xC3\xA9"), "%C3%A9");
}

TEST(StatusMessage, TheStatusMessageElseTheBodyElseTheCode) {
  EXPECT_EQ(status_message({403, R"({"kind":"Status","message":"pvcs is forbidden"})"}), "pvcs is forbidden");
  EXPECT_EQ(status_message({502, "bad gateway\n"}), "bad gateway");
  EXPECT_EQ(status_message({503, ""}), "HTTP 503");
  EXPECT_EQ(status_message({500, std::string(300, 'x')}).size(), 200U);
}

}  // namespace
}  // namespace vmgate::kube
