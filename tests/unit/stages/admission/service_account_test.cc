// ServiceAccount: the pod's account defaults to `default` and must exist,
// in kube-apiserver's words; the request's own accounts and namespaces count.
#include "admission_fixture.h"

namespace podflow::admission {
namespace {

// Only default/default and team/builder are stored.
Result<bool> Stored(const std::string& ns, const std::string& name) {
  return (ns == "default" && name == "default") || (ns == "team" && name == "builder");
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

}  // namespace
}  // namespace podflow::admission
