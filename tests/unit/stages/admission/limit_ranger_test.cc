// LimitRanger, through the Kubernetes docs' walkthroughs: default requests
// and limits for a namespace, minimum and maximum constraints, the limit to
// request ratio, and per-pod totals.
#include "admission_fixture.h"

namespace podflow::admission {
namespace {

// A lister holding `manifests` as the log would: each LimitRange admitted
// (so defaulted), then read back.
LimitRangeLister Stored(const std::vector<std::string>& manifests) {
  auto bytes = std::make_shared<std::vector<std::string>>();
  for (const std::string& m : manifests) bytes->push_back(testing::AdmitOne(m).bytes);
  return [bytes](const std::string& ns) -> Result<std::vector<api::LimitRangeT>> {
    std::vector<api::LimitRangeT> out;
    for (const std::string& b : *bytes) {
      auto range = model::Unpack<api::LimitRange>(b);
      if (range->metadata->namespace_ == ns) out.push_back(std::move(*range));
    }
    return out;
  };
}

AdmissionOutcome AdmitPod(const LimitRangeLister& ranges, const std::string& resources,
                          const std::string& name = "demo") {
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken,
                                     "{apiVersion: v1, kind: Pod, metadata: {name: " + name +
                                         "}, spec: {containers: [{name: demo-ctr, image: nginx, resources: " +
                                         resources + "}]}}",
                                     {.limit_ranges = ranges});
  REQUIRE(reply.results.size() == 1);
  return std::move(reply.results[0]);
}

std::string Entry(const std::vector<std::unique_ptr<api::QuantityEntryT>>& list, std::string_view key) {
  for (const auto& e : list) {
    if (e->key == key) return e->value;
  }
  return "<none>";
}

std::string Annotation(const api::PodT& pod, std::string_view key) {
  for (const auto& e : pod.metadata->annotations) {
    if (e->key == key) return e->value;
  }
  return "<none>";
}

TEST_CASE("LimitRanger: default memory requests and limits for a namespace", "[admission][limitranger]") {
  const LimitRangeLister ranges = Stored({R"(apiVersion: v1
kind: LimitRange
metadata: {name: mem-limit-range}
spec:
  limits:
  - default: {memory: 512Mi}
    defaultRequest: {memory: 256Mi}
    type: Container
)"});
  SECTION("a container that says nothing gets both defaults, and the annotation says so") {
    auto pod = testing::AdmittedObject<api::Pod>(AdmitPod(ranges, "{}"));
    const auto& r = *pod->spec->containers[0]->resources;
    CHECK(Entry(r.requests, "memory") == "256Mi");
    CHECK(Entry(r.limits, "memory") == "512Mi");
    CHECK(Annotation(*pod, "kubernetes.io/limit-ranger") ==
          "LimitRanger plugin set: memory request for container demo-ctr; memory limit for container demo-ctr");
    CHECK(pod->status->qos_class == api::PodQOSClass::Burstable);  // from the final resources
  }
  SECTION("a limit and no request: the request is the limit, as the docs show") {
    auto pod = testing::AdmittedObject<api::Pod>(AdmitPod(ranges, "{limits: {memory: 1Gi}}"));
    const auto& r = *pod->spec->containers[0]->resources;
    CHECK(Entry(r.requests, "memory") == "1Gi");
    CHECK(Entry(r.limits, "memory") == "1Gi");
  }
  SECTION("a request and no limit: the default limit") {
    auto pod = testing::AdmittedObject<api::Pod>(AdmitPod(ranges, "{requests: {memory: 128Mi}}"));
    const auto& r = *pod->spec->containers[0]->resources;
    CHECK(Entry(r.requests, "memory") == "128Mi");
    CHECK(Entry(r.limits, "memory") == "512Mi");
  }
  SECTION("another namespace's ranges do not apply") {
    auto pod = testing::AdmittedObject<api::Pod>(AdmitPod(Stored({R"(apiVersion: v1
kind: LimitRange
metadata: {name: elsewhere, namespace: other}
spec: {limits: [{type: Container, default: {memory: 1Gi}}]}
)"}),
                                                          "{}"));
    CHECK(pod->spec->containers[0]->resources->limits.empty());
  }
}

TEST_CASE("LimitRanger: minimum and maximum constraints, in kube-apiserver's words", "[admission][limitranger]") {
  const LimitRangeLister ranges = Stored({R"(apiVersion: v1
kind: LimitRange
metadata: {name: cpu-min-max-demo-lr}
spec:
  limits:
  - max: {cpu: 800m}
    min: {cpu: 200m}
    type: Container
)"});
  SECTION("a limit over the maximum") {
    AdmissionOutcome out =
        AdmitPod(ranges, "{limits: {cpu: '1.5'}, requests: {cpu: 500m}}", "constraints-cpu-demo-2");
    CHECK(out.status.code == 403);
    CHECK(KubectlMessage(out.status) ==
          "Error from server (Forbidden): pods \"constraints-cpu-demo-2\" is forbidden: maximum cpu usage per "
          "Container is 800m, but limit is 1500m");
    CHECK(out.bytes.empty());
  }
  SECTION("a request under the minimum") {
    AdmissionOutcome out = AdmitPod(ranges, "{limits: {cpu: 800m}, requests: {cpu: 100m}}", "constraints-cpu-demo-3");
    CHECK(out.status.message ==
          "pods \"constraints-cpu-demo-3\" is forbidden: minimum cpu usage per Container is 200m, but request is "
          "100m");
  }
  SECTION("no resources: the maximum is the default limit and request") {
    auto pod = testing::AdmittedObject<api::Pod>(AdmitPod(ranges, "{}"));
    const auto& r = *pod->spec->containers[0]->resources;
    CHECK(Entry(r.limits, "cpu") == "800m");
    CHECK(Entry(r.requests, "cpu") == "800m");
  }
}

TEST_CASE("LimitRanger: limit to request ratio, pod totals and claims", "[admission][limitranger]") {
  const LimitRangeLister ranges = Stored({R"(apiVersion: v1
kind: LimitRange
metadata: {name: limits}
spec:
  limits:
  - type: Container
    maxLimitRequestRatio: {memory: "2"}
  - type: Pod
    max: {cpu: "2"}
  - type: PersistentVolumeClaim
    min: {storage: 1Gi}
    max: {storage: 2Gi}
)"});
  AdmissionOutcome ratio = AdmitPod(ranges, "{limits: {memory: 800Mi, cpu: '1'}, requests: {memory: 250Mi}}");
  CHECK(ratio.status.message ==
        "pods \"demo\" is forbidden: memory max limit to request ratio per Container is 2, but provided ratio is "
        "3.200000");

  Admission admission = testing::TestAdmission();
  AdmitReply two = admission.Admit(testing::kAdminToken, R"(apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers:
  - {name: a, image: nginx, resources: {limits: {cpu: "2", memory: 1Gi}}}
  - {name: b, image: nginx, resources: {limits: {cpu: "1", memory: 1Gi}}}
)",
                                   {.limit_ranges = ranges});
  REQUIRE(two.results.size() == 1);
  CHECK(two.results[0].status.message == "pods \"big\" is forbidden: maximum cpu usage per Pod is 2, but limit is 3");

  // An init container runs before the containers, a sidecar beside them:
  // the Pod total is the larger of the two ways of counting.
  AdmitReply staged = admission.Admit(testing::kAdminToken, R"(apiVersion: v1
kind: Pod
metadata: {name: staged}
spec:
  initContainers:
  - {name: init, image: busybox, resources: {limits: {cpu: "1", memory: 64Mi}}}
  containers:
  - {name: app, image: nginx, resources: {limits: {cpu: "1", memory: 64Mi}}}
)",
                                      {.limit_ranges = ranges});
  REQUIRE(staged.results.size() == 1);
  CHECK(staged.results[0].admitted());
  AdmitReply sidecar = admission.Admit(testing::kAdminToken, R"(apiVersion: v1
kind: Pod
metadata: {name: sidecar}
spec:
  initContainers:
  - {name: log, image: busybox, restartPolicy: Always, resources: {limits: {cpu: 1500m, memory: 64Mi}}}
  containers:
  - {name: app, image: nginx, resources: {limits: {cpu: "1", memory: 64Mi}}}
)",
                                       {.limit_ranges = ranges});
  REQUIRE(sidecar.results.size() == 1);
  CHECK(sidecar.results[0].status.message ==
        "pods \"sidecar\" is forbidden: maximum cpu usage per Pod is 2, but limit is 2500m");

  AdmitReply claim = admission.Admit(testing::kAdminToken, R"(apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: pvc-limit-lower}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 500Mi}}
)",
                                     {.limit_ranges = ranges});
  REQUIRE(claim.results.size() == 1);
  CHECK(claim.results[0].status.message ==
        "persistentvolumeclaims \"pvc-limit-lower\" is forbidden: minimum storage usage per PersistentVolumeClaim "
        "is 1Gi, but request is 500Mi");
}

TEST_CASE("LimitRanger: a LimitRange earlier in the file applies to the pods after it", "[admission][limitranger]") {
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken, R"(apiVersion: v1
kind: Pod
metadata: {name: before}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: LimitRange
metadata: {name: mem}
spec: {limits: [{type: Container, default: {memory: 512Mi}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: after}
spec: {containers: [{name: c, image: nginx}]}
)");
  REQUIRE(reply.results.size() == 3);
  auto before = testing::AdmittedObject<api::Pod>(reply.results[0]);
  auto after = testing::AdmittedObject<api::Pod>(reply.results[2]);
  CHECK(before->spec->containers[0]->resources == nullptr);
  REQUIRE(after->spec->containers[0]->resources != nullptr);
  CHECK(Entry(after->spec->containers[0]->resources->limits, "memory") == "512Mi");
  CHECK(Entry(after->spec->containers[0]->resources->requests, "memory") == "512Mi");
}

TEST_CASE("The plugin chain is configured as kube-apiserver's flags configure it", "[admission][limitranger]") {
  CHECK(AdmissionChain().enabled() == std::vector<std::string>{"NamespaceLifecycle", "LimitRanger", "ServiceAccount",
                                                                "PodSecurity", "Priority", "DefaultTolerationSeconds",
                                                                "SidecarInjector", "ResourceQuota"});
  Result<AdmissionChain> without =
      AdmissionChain::Create({}, {"LimitRanger", "PodSecurity", "DefaultTolerationSeconds", "SidecarInjector",
                                  "ResourceQuota"});
  REQUIRE(without.ok());
  CHECK(without->enabled() == std::vector<std::string>{"NamespaceLifecycle", "ServiceAccount", "Priority"});
  Result<AdmissionChain> unknown = AdmissionChain::Create({"AlwaysPullImages"}, {});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().starts_with("admission plugin \"AlwaysPullImages\" is unknown"));

  // Disabled: nothing defaulted, nothing bounded.
  AdmissionConfig config = testing::TestConfig();
  config.plugins = *without;
  Admission admission = testing::TestAdmission(std::move(config));
  AdmitReply reply = admission.Admit(
      testing::kAdminToken, "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: "
                            "nginx}]}}",
      {.limit_ranges = Stored({"{apiVersion: v1, kind: LimitRange, metadata: {name: l}, spec: {limits: [{type: Container, "
                                  "max: {cpu: 100m}}]}}"})});
  auto pod = testing::AdmittedObject<api::Pod>(reply.results[0]);
  CHECK(pod->spec->containers[0]->resources == nullptr);
  CHECK(pod->spec->tolerations.empty());
}

}  // namespace
}  // namespace podflow::admission
