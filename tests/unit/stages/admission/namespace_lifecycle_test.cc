// NamespaceLifecycle: a namespaced object needs its namespace, and not one
// being terminated; namespaces created earlier in the request count.
#include <map>

#include "admission_fixture.h"

namespace podflow::admission {
namespace {

NamespaceLookup Stored(std::map<std::string, api::NamespacePhase> namespaces) {
  return [namespaces = std::move(namespaces)](const std::string& name) -> Result<std::optional<NamespaceInfo>> {
    auto it = namespaces.find(name);
    if (it == namespaces.end()) return std::optional<NamespaceInfo>();
    return std::optional<NamespaceInfo>(NamespaceInfo{it->second, {}});
  };
}

const char kPodIn[] = "{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: %s}, "
                      "spec: {containers: [{name: c, image: nginx}]}}";

std::string PodIn(const std::string& ns) {
  char buf[256];
  std::snprintf(buf, sizeof buf, kPodIn, ns.c_str());
  return buf;
}

TEST_CASE("NamespaceLifecycle refuses what has no namespace to live in", "[admission][namespaces]") {
  Admission admission = testing::TestAdmission();
  const NamespaceLookup stored =
      Stored({{"default", api::NamespacePhase::Active}, {"leaving", api::NamespacePhase::Terminating}});
  auto admit = [&](const std::string& manifest) {
    AdmitReply reply = admission.Admit(testing::kAdminToken, manifest, {.namespaces = stored});
    REQUIRE_FALSE(reply.failure.has_value());
    return reply.results;
  };

  SECTION("a namespace that does not exist is 404, before validation") {
    std::vector<AdmissionOutcome> out =
        admit("{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: nope}, spec: {containers: [{name: c}]}}");
    CHECK(out[0].status.code == 404);
    CHECK(out[0].status.reason == "NotFound");
    CHECK(out[0].status.message == "namespaces \"nope\" not found");
    CHECK(KubectlMessage(out[0].status) == "Error from server (NotFound): namespaces \"nope\" not found");
    CHECK(out[0].bytes.empty());
  }
  SECTION("a terminating namespace takes nothing new") {
    std::vector<AdmissionOutcome> out = admit(PodIn("leaving"));
    CHECK(out[0].status.code == 403);
    CHECK(out[0].status.message ==
          "pods \"p\" is forbidden: unable to create new content in namespace leaving because it is being "
          "terminated");
  }
  SECTION("a namespace earlier in the same request, and cluster-scoped kinds, pass") {
    std::vector<AdmissionOutcome> out = admit("{apiVersion: v1, kind: Namespace, metadata: {name: team-a}}\n---\n" +
                                              PodIn("team-a") + "\n---\n" +
                                              "{apiVersion: v1, kind: Node, metadata: {name: node-a}}\n---\n" +
                                              PodIn("default"));
    REQUIRE(out.size() == 4);
    for (const AdmissionOutcome& o : out) {
      INFO(o.status.message);
      CHECK(o.admitted());
    }
    CHECK(out[1].key == "/registry/pods/team-a/p");
  }
  SECTION("a pod before its namespace in the file is refused, as kube-apiserver would") {
    std::vector<AdmissionOutcome> out =
        admit(PodIn("team-b") + "\n---\n{apiVersion: v1, kind: Namespace, metadata: {name: team-b}}");
    CHECK(out[0].status.code == 404);
    CHECK(out[1].admitted());
  }
  SECTION("the lookup failing is an internal error, not an admission") {
    AdmitReply reply = admission.Admit(testing::kAdminToken, PodIn("default"),
                                       {.namespaces = [](const std::string&) -> Result<std::optional<NamespaceInfo>> {
                                         return Status::Unavailable("persistence is not answering");
                                       }});
    REQUIRE(reply.results.size() == 1);
    CHECK(reply.results[0].status.code == 500);
  }
}

TEST_CASE("A new namespace is Active, held by the kubernetes finalizer", "[admission][namespaces]") {
  auto ns = testing::AdmittedObject<api::Namespace>(testing::AdmitOne("{apiVersion: v1, kind: Namespace, "
                                                                      "metadata: {name: team-a}}"));
  CHECK(ns->status->phase == api::NamespacePhase::Active);
  CHECK(ns->spec->finalizers == std::vector<std::string>{"kubernetes"});
  REQUIRE(ns->metadata->labels.size() == 1);
  CHECK(ns->metadata->labels[0]->key == "kubernetes.io/metadata.name");
  CHECK(ns->metadata->labels[0]->value == "team-a");
}

}  // namespace
}  // namespace podflow::admission
