// The launcher's link to its VMI: the client configuration (the status patch is the kube layer's,
// test/kube/status/vmi_status_test.cpp; the API side runs in test/e2e/controller_test.sh).
#include "vmgate/launcher/vmi_link.hpp"

#include <gtest/gtest.h>

namespace vmgate::launcher {
namespace {

TEST(VmiClientConfig, NeedsAKubeconfigOutsideAPod) {
  // The launcher tests run with KUBERNETES_SERVICE_HOST empty: not in a pod.
  Result<kube::ClientConfig> config = vmi_client_config("", "");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("--vmi-name needs --kubeconfig"), std::string::npos);
  Result<kube::ClientConfig> missing = vmi_client_config("/nonexistent/kubeconfig", "");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("/nonexistent/kubeconfig"), std::string::npos) << missing.error().message;
}

}  // namespace
}  // namespace vmgate::launcher
