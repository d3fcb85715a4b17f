// ServiceAccount: the pod's account defaults to `default` and must exist,
// in kube-apiserver's words; the request's own accounts and namespaces count.
#include <algorithm>

#include "admission_fixture.h"

namespace podflow::admission {
namespace {

// Only default/default, team/builder and team/quiet (which mounts no
// token unless its pods ask) are stored.
Result<std::optional<ServiceAccountInfo>> Stored(const std::string& ns, const std::string& name) {
  if ((ns == "default" && name == "default") || (ns == "team" && name == "builder")) {
    return std::optional<ServiceAccountInfo>(ServiceAccountInfo{});
  }
  if (ns == "team" && name == "quiet") return std::optional<ServiceAccountInfo>(ServiceAccountInfo{false});
  return std::optional<ServiceAccountInfo>();
}

std::vector<AdmissionOutcome> Admit(const std::string& manifest) {
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken, manifest, {.service_accounts = &Stored});
  REQUIRE_FALSE(reply.failure.has_value());
  return std::move(reply.results);
}

TEST_CASE("ServiceAccount: the pod's account must exist", "[admission][serviceaccount]") {
  std::vector<AdmissionOutcome> out = Admit(R"(apiVersion: v1
kind: Pod
metadata: {name: runs-as-default}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: builds, namespace: team}
spec: {serviceAccountName: builder, containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: orphan}
spec: {serviceAccountName: deployer, containers: [{name: c, image: nginx}]}
)");
  REQUIRE(out.size() == 3);
  CHECK(out[0].admitted());
  CHECK(testing::AdmittedObject<api::Pod>(out[0])->spec->service_account_name == "default");
  CHECK(out[1].admitted());
  CHECK(out[2].status.code == 403);
  CHECK(out[2].status.message ==
        "pods \"orphan\" is forbidden: error looking up service account default/deployer: serviceaccount "
        "\"deployer\" not found");
}

TEST_CASE("ServiceAccount: accounts and namespaces made earlier in the request count", "[admission][serviceaccount]") {
  std::vector<AdmissionOutcome> out = Admit(R"(apiVersion: v1
kind: ServiceAccount
metadata: {name: deployer}
---
apiVersion: v1
kind: Pod
metadata: {name: deploys}
spec: {serviceAccountName: deployer, containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Namespace
metadata: {name: fresh}
---
apiVersion: v1
kind: Pod
metadata: {name: first, namespace: fresh}
spec: {containers: [{name: c, image: nginx}]}
)");
  REQUIRE(out.size() == 4);
  for (const AdmissionOutcome& o : out) {
    INFO(o.status.message);
    CHECK(o.admitted());
  }
}

TEST_CASE("ServiceAccount: a mirror pod runs as no account and may not name one", "[admission][serviceaccount]") {
  std::vector<AdmissionOutcome> out = Admit(R"(apiVersion: v1
kind: Pod
metadata: {name: static-web, annotations: {kubernetes.io/config.mirror: abc}}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: static-named, annotations: {kubernetes.io/config.mirror: abc}}
spec: {serviceAccountName: default, containers: [{name: c, image: nginx}]}
)");
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].admitted());
  CHECK(testing::AdmittedObject<api::Pod>(out[0])->spec->service_account_name.empty());
  CHECK(out[1].status.message == "pods \"static-named\" is forbidden: a mirror pod may not reference service accounts");
}

// The pod's volume named kube-api-access-*, or nullptr.
const api::VolumeT* TokenVolume(const api::PodT& pod) {
  for (const auto& v : pod.spec->volumes) {
    if (v->name.starts_with("kube-api-access-")) return v.get();
  }
  return nullptr;
}

TEST_CASE("ServiceAccount: the account's token is mounted as kube-apiserver's projected volume",
          "[admission][serviceaccount]") {
  std::vector<AdmissionOutcome> out = Admit(R"(apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  initContainers: [{name: init, image: busybox}]
  containers:
  - {name: app, image: nginx}
  - name: own
    image: nginx
    volumeMounts: [{name: mine, mountPath: /var/run/secrets/kubernetes.io/serviceaccount}]
  volumes: [{name: mine, emptyDir: {}}]
---
apiVersion: v1
kind: Pod
metadata: {name: opted-out}
spec: {automountServiceAccountToken: false, containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: quiet, namespace: team}
spec: {serviceAccountName: quiet, containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: asks, namespace: team}
spec: {serviceAccountName: quiet, automountServiceAccountToken: true, containers: [{name: c, image: nginx}]}
)");
  REQUIRE(out.size() == 4);
  for (const AdmissionOutcome& o : out) {
    INFO(o.status.message);
    REQUIRE(o.admitted());
  }
  auto web = testing::AdmittedObject<api::Pod>(out[0]);
  const api::VolumeT* volume = TokenVolume(*web);
  REQUIRE(volume != nullptr);
  CHECK(volume->name.size() == std::string("kube-api-access-").size() + 5);
  REQUIRE(volume->projected != nullptr);
  CHECK(volume->projected->default_mode == 420);
  REQUIRE(volume->projected->sources.size() == 3);
  const auto& sources = volume->projected->sources;
  REQUIRE(sources[0]->service_account_token != nullptr);
  CHECK(sources[0]->service_account_token->path == "token");
  CHECK(sources[0]->service_account_token->expiration_seconds == 3607);
  REQUIRE(sources[1]->config_map != nullptr);
  CHECK(sources[1]->config_map->name == "kube-root-ca.crt");
  REQUIRE(sources[1]->config_map->items.size() == 1);
  CHECK(sources[1]->config_map->items[0]->key == "ca.crt");
  CHECK(sources[1]->config_map->items[0]->path == "ca.crt");
  REQUIRE(sources[2]->downward_api != nullptr);
  REQUIRE(sources[2]->downward_api->items.size() == 1);
  CHECK(sources[2]->downward_api->items[0]->path == "namespace");
  CHECK(sources[2]->downward_api->items[0]->field_ref->field_path == "metadata.namespace");
  // Every container without its own mount at the path gets the token, read-only.
  auto token_mounts = [&](const api::ContainerT& c) {
    return std::count_if(c.volume_mounts.begin(), c.volume_mounts.end(), [&](const auto& m) {
      return m->name == volume->name && m->read_only && m->mount_path == "/var/run/secrets/kubernetes.io/serviceaccount";
    });
  };
  CHECK(token_mounts(*web->spec->init_containers[0]) == 1);
  CHECK(token_mounts(*web->spec->containers[0]) == 1);
  CHECK(token_mounts(*web->spec->containers[1]) == 0);
  CHECK(web->spec->containers[1]->volume_mounts.size() == 1);
  // The pod's word wins over its account's; without either, mounted.
  CHECK(TokenVolume(*testing::AdmittedObject<api::Pod>(out[1])) == nullptr);
  CHECK(TokenVolume(*testing::AdmittedObject<api::Pod>(out[2])) == nullptr);
  CHECK(TokenVolume(*testing::AdmittedObject<api::Pod>(out[3])) != nullptr);
}

}  // namespace
}  // namespace podflow::admission
