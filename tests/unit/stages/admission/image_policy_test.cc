// ImagePolicy: off unless enabled; once enabled, a pod whose image the
// registry catalog (runtime.registry) does not have is refused, on create
// and on an update.
#include <yaml-cpp/yaml.h>

#include "admission_fixture.h"

namespace podflow::admission {
namespace {

constexpr std::string_view kRegistry = R"(
- {name: nginx, tags: ["1.14.2", latest]}
- {name: busybox}
)";

Admission WithPlugins(const std::string& section) {
  Result<AdmissionConfig> config = ParseAdmissionConfig(
      YAML::Load(section), "", {{"admin-token", {"admin", "1", {"system:masters"}}}}, YAML::Load(std::string(kRegistry)));
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  return testing::TestAdmission(std::move(*config));
}

constexpr std::string_view kPods = R"(apiVersion: v1
kind: Pod
metadata: {name: known}
spec:
  initContainers: [{name: init, image: "busybox:1.36"}]
  containers: [{name: web, image: "nginx:1.14.2"}]
---
apiVersion: v1
kind: Pod
metadata: {name: unknown}
spec:
  initContainers: [{name: init, image: "registry.example.com/tools:1"}]
  containers:
  - {name: web, image: "nginx:9.9"}
  - {name: again, image: "nginx:9.9"}
  - {name: side, image: "docker.io/library/nginx:latest"}
)";

TEST_CASE("ImagePolicy: off by default; enabled, an image the registry does not have is refused",
          "[admission][imagepolicy]") {
  {
    Admission admission = WithPlugins("{}");
    AdmitReply reply = admission.Admit(testing::kAdminToken, std::string(kPods));
    REQUIRE(reply.results.size() == 2);
    CHECK(reply.results[1].admitted());
  }
  Admission admission = WithPlugins("enablePlugins: [ImagePolicy]");
  AdmitReply reply = admission.Admit(testing::kAdminToken, std::string(kPods));
  REQUIRE(reply.results.size() == 2);
  INFO(reply.results[0].status.message);
  CHECK(reply.results[0].admitted());
  CHECK(reply.results[1].status.code == 403);
  CHECK(reply.results[1].status.message ==
        "pods \"unknown\" is forbidden: image policy webhook backend denied one or more images: images not in the "
        "registry: \"registry.example.com/tools:1\", \"nginx:9.9\"");

  // An update to an image the registry lacks is refused the same way.
  const StoredObject stored{reply.results[0].key, reply.results[0].bytes, 3};
  ChangeOutcome updated = admission.Patch(model::Kind("Pod"), "default", "known", "", model::PatchType::kJson,
                                          R"([{"op":"replace","path":"/spec/containers/0/image","value":"nginx:2"}])",
                                          stored);
  CHECK(updated.status.message ==
        "pods \"known\" is forbidden: image policy webhook backend denied one or more images: images not in the "
        "registry: \"nginx:2\"");
  ChangeOutcome fine = admission.Patch(model::Kind("Pod"), "default", "known", "", model::PatchType::kJson,
                                       R"([{"op":"replace","path":"/spec/containers/0/image","value":"nginx"}])",
                                       stored);
  INFO(fine.status.message);
  CHECK(fine.ok());
}

TEST_CASE("ImagePolicy: a registry that is not one is refused when the plugin is enabled", "[admission][imagepolicy]") {
  Result<AdmissionConfig> config =
      ParseAdmissionConfig(YAML::Load("enablePlugins: [ImagePolicy]"), "", {}, YAML::Load("[{tags: [a]}]"));
  CHECK(config.status().message() == "runtime.registry[0].name: Required value");
  CHECK(AdmissionChain().enabled() == std::vector<std::string>{"NamespaceLifecycle", "LimitRanger", "ServiceAccount",
                                                               "PodSecurity", "Priority", "DefaultTolerationSeconds",
                                                               "SidecarInjector", "ResourceQuota"});
  Result<AdmissionChain> chain = AdmissionChain::Create({"ImagePolicy"}, {"PodSecurity"});
  REQUIRE(chain.ok());
  CHECK(chain->enabled() == std::vector<std::string>{"NamespaceLifecycle", "LimitRanger", "ServiceAccount",
                                                     "ImagePolicy", "Priority", "DefaultTolerationSeconds",
                                                     "SidecarInjector", "ResourceQuota"});
}

}  // namespace
}  // namespace podflow::admission
