// PodSecurity: the namespace's labels choose the level; enforce refuses a
// pod, warn admits it with kube-apiserver's warning; workloads' templates
// are warned about only.
#include "admission_fixture.h"

namespace podflow::admission {
namespace {

AdmissionOutcome AdmitIn(const std::map<std::string, std::string>& labels, const std::string& manifest) {
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken, manifest, {.namespaces = testing::Labelled(labels)});
  REQUIRE_FALSE(reply.failure.has_value());
  REQUIRE(reply.results.size() == 1);
  return std::move(reply.results[0]);
}

// The docs' example-baseline-pod.yaml.
constexpr std::string_view kBaselinePod = R"(apiVersion: v1
kind: Pod
metadata:
  name: nginx
spec:
  containers:
    - image: nginx
      name: nginx
      ports:
        - containerPort: 80
      securityContext:
        privileged: true
  hostNetwork: true
  volumes:
  - name: host
    hostPath:
      path: /
)";

// A Deployment whose pod template shares the host's PID namespace.
constexpr std::string_view kHostPidDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      hostPID: true
      containers: [{name: web, image: nginx}]
)";

constexpr std::string_view kPlainPod =
    "{apiVersion: v1, kind: Pod, metadata: {name: nginx}, spec: {containers: [{name: nginx, image: nginx}]}}";

TEST_CASE("PodSecurity: enforce refuses what the level forbids, in kube-apiserver's words", "[admission][podsecurity]") {
  AdmissionOutcome baseline = AdmitIn({{"pod-security.kubernetes.io/enforce", "baseline"}}, std::string(kBaselinePod));
  CHECK(baseline.status.code == 403);
  CHECK(baseline.status.reason == "Forbidden");
  // hostNetwork makes the container port a host port too.
  CHECK(baseline.status.message ==
        "pods \"nginx\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true), "
        "hostPath volumes (volume \"host\"), hostPort (container \"nginx\" uses hostPort 80), privileged (container "
        "\"nginx\" must not set securityContext.privileged=true)");

  AdmissionOutcome restricted = AdmitIn(
      {{"pod-security.kubernetes.io/enforce", "restricted"}, {"pod-security.kubernetes.io/enforce-version", "v1.30"}},
      std::string(kPlainPod));
  CHECK(restricted.status.message ==
        "pods \"nginx\" is forbidden: violates PodSecurity \"restricted:v1.30\": allowPrivilegeEscalation != false "
        "(container \"nginx\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities "
        "(container \"nginx\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or "
        "container \"nginx\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"nginx\" "
        "must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")");

  // A pod written for restricted passes it.
  AdmissionOutcome hardened = AdmitIn({{"pod-security.kubernetes.io/enforce", "restricted"}}, R"(apiVersion: v1
kind: Pod
metadata: {name: hardened}
spec:
  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: app
    image: nginx
    securityContext:
      allowPrivilegeEscalation: false
      capabilities: {drop: [ALL], add: [NET_BIND_SERVICE]}
  volumes: [{name: scratch, emptyDir: {}}]
)");
  INFO(hardened.status.message);
  CHECK(hardened.admitted());
  CHECK(hardened.warnings.empty());
}

TEST_CASE("PodSecurity: restricted's other checks name every offender", "[admission][podsecurity]") {
  AdmissionOutcome out = AdmitIn({{"pod-security.kubernetes.io/enforce", "restricted"}}, R"(apiVersion: v1
kind: Pod
metadata: {name: loose}
spec:
  securityContext: {runAsNonRoot: true, runAsUser: 0, seccompProfile: {type: Unconfined}, sysctls: [{name: kernel.msgmax, value: "1"}]}
  initContainers:
  - name: setup
    image: busybox
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL], add: [SYS_ADMIN, NET_ADMIN]}}
  containers:
  - name: app
    image: nginx
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}, runAsNonRoot: false, procMount: Unmasked}
  volumes: [{name: data, nfs: {server: nfs.example.com, path: /data}}]
)");
  // The baseline checks first, then the restricted ones.
  CHECK(out.status.message ==
        "pods \"loose\" is forbidden: violates PodSecurity \"restricted:latest\": procMount (container \"app\" must "
        "not set securityContext.procMount to \"Unmasked\"), forbidden sysctls (kernel.msgmax), unrestricted "
        "capabilities (container \"setup\" must not include \"NET_ADMIN\", \"SYS_ADMIN\" in "
        "securityContext.capabilities.add), restricted volume types (volume \"data\" uses restricted volume type "
        "\"nfs\"), runAsNonRoot != true (container \"app\" must not set securityContext.runAsNonRoot=false), "
        "runAsUser=0 (pod must not set runAsUser=0), seccompProfile (pod must not set "
        "securityContext.seccompProfile.type to \"Unconfined\")");
  // A privileged pod with a hostPath volume: baseline's findings lead, and
  // restricted's volume check stands for baseline's hostPath one.
  AdmissionOutcome host = AdmitIn({{"pod-security.kubernetes.io/enforce", "restricted"}}, R"(apiVersion: v1
kind: Pod
metadata: {name: host}
spec:
  securityContext: {runAsNonRoot: false, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: c
    image: nginx
    securityContext: {privileged: true, runAsNonRoot: false, allowPrivilegeEscalation: true, capabilities: {drop: [ALL]}}
  volumes: [{name: root, hostPath: {path: /}}]
)");
  CHECK(host.status.message ==
        "pods \"host\" is forbidden: violates PodSecurity \"restricted:latest\": privileged (container \"c\" must not "
        "set securityContext.privileged=true), allowPrivilegeEscalation != false (container \"c\" must set "
        "securityContext.allowPrivilegeEscalation=false), restricted volume types (volume \"root\" uses restricted "
        "volume type \"hostPath\"), runAsNonRoot != true (pod and container \"c\" must not set "
        "securityContext.runAsNonRoot=false)");
}

TEST_CASE("PodSecurity: warn admits with a warning; workloads are warned about, never refused",
          "[admission][podsecurity]") {
  const std::map<std::string, std::string> labels = {{"pod-security.kubernetes.io/warn", "baseline"},
                                                     {"pod-security.kubernetes.io/warn-version", "latest"}};
  AdmissionOutcome pod = AdmitIn(labels, std::string(kBaselinePod));
  CHECK(pod.admitted());
  CHECK(pod.warnings == std::vector<std::string>{
                            "would violate PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true), hostPath "
                            "volumes (volume \"host\"), hostPort (container \"nginx\" uses hostPort 80), privileged "
                            "(container \"nginx\" must not set securityContext.privileged=true)"});

  AdmissionOutcome deployment = AdmitIn({{"pod-security.kubernetes.io/enforce", "restricted"},
                                         {"pod-security.kubernetes.io/warn", "baseline"}},
                                        std::string(kHostPidDeployment));
  CHECK(deployment.admitted());
  CHECK(deployment.warnings ==
        std::vector<std::string>{"would violate PodSecurity \"baseline:latest\": host namespaces (hostPID=true)"});

  // No labels, or privileged: nothing is checked.
  CHECK(AdmitIn({}, std::string(kBaselinePod)).admitted());
  CHECK(AdmitIn({{"pod-security.kubernetes.io/enforce", "privileged"}}, std::string(kBaselinePod)).admitted());
  // A level that is not one: enforce takes it as restricted (failing
  // closed), warn as privileged (failing open); a version that is not one
  // reads as latest.
  CHECK(AdmitIn({{"pod-security.kubernetes.io/enforce", "strict"},
                 {"pod-security.kubernetes.io/enforce-version", "v1.x"}},
                std::string(kPlainPod))
            .status.message.find("violates PodSecurity \"restricted:latest\"") != std::string::npos);
  AdmissionOutcome warned = AdmitIn({{"pod-security.kubernetes.io/warn", "strict"}}, std::string(kBaselinePod));
  CHECK(warned.admitted());
  CHECK(warned.warnings.empty());
}

TEST_CASE("PodSecurity: a namespace made earlier in the request brings its labels", "[admission][podsecurity]") {
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken, R"(apiVersion: v1
kind: Namespace
metadata:
  name: locked
  labels: {pod-security.kubernetes.io/enforce: baseline}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: locked}
spec:
  hostIPC: true
  containers: [{name: c, image: nginx}]
)",
                                     {.namespaces = [](const std::string&) -> Result<std::optional<NamespaceInfo>> {
                                       return std::optional<NamespaceInfo>();
                                     }});
  REQUIRE(reply.results.size() == 2);
  CHECK(reply.results[0].admitted());
  CHECK(reply.results[1].status.message ==
        "pods \"p\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostIPC=true)");
}

}  // namespace
}  // namespace podflow::admission

namespace podflow::admission {
namespace {

TEST_CASE("PodSecurity on updates: a changed image is checked, a label change is not, a status write never",
          "[admission][podsecurity]") {
  // A pod admitted while the namespace allowed it.
  AdmissionOutcome admitted = AdmitIn({}, std::string(kBaselinePod));
  REQUIRE(admitted.admitted());
  const StoredObject stored{admitted.key, admitted.bytes, 5};
  Admission admission = testing::TestAdmission();
  ChangeContext context;
  context.cluster.namespaces = testing::Labelled({{"pod-security.kubernetes.io/enforce", "baseline"},
                                                  {"pod-security.kubernetes.io/warn", "restricted"}});
  // A label: let through, though the pod breaks the level now enforced.
  ChangeOutcome labelled = admission.Patch(model::Kind("Pod"), "default", "nginx", "", model::PatchType::kMerge,
                                           R"({"metadata":{"labels":{"tier":"web"}}})", stored, context);
  INFO(labelled.status.message);
  CHECK(labelled.ok());
  CHECK(labelled.warnings.empty());
  // A status write: never checked.
  ChangeOutcome status = admission.Patch(model::Kind("Pod"), "default", "nginx", "status", model::PatchType::kMerge,
                                         R"({"status":{"message":"hi"}})", stored, context);
  CHECK(status.ok());
  // A new image: the whole pod is checked against the level, as on create.
  ChangeOutcome image = admission.Patch(model::Kind("Pod"), "default", "nginx", "", model::PatchType::kJson,
                                        R"([{"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.27"}])",
                                        stored, context);
  CHECK(image.status.code == 403);
  CHECK(image.status.message.starts_with(
      "pods \"nginx\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)"));
  CHECK(image.write == ChangeOutcome::Write::kNone);

  // Under warn only, the same update goes through with the warning.
  context.cluster.namespaces = testing::Labelled({{"pod-security.kubernetes.io/warn", "baseline"}});
  ChangeOutcome warned = admission.Patch(model::Kind("Pod"), "default", "nginx", "", model::PatchType::kJson,
                                         R"([{"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.27"}])",
                                         stored, context);
  CHECK(warned.ok());
  REQUIRE(warned.warnings.size() == 1);
  CHECK(warned.warnings[0].starts_with("would violate PodSecurity \"baseline:latest\": host namespaces"));
}

}  // namespace
}  // namespace podflow::admission

namespace podflow::admission {
namespace {

TEST_CASE("PodSecurity on updates: a workload is warned about again only when its template changes",
          "[admission][podsecurity]") {
  AdmissionOutcome admitted = AdmitIn({}, std::string(kHostPidDeployment));
  REQUIRE(admitted.admitted());
  const StoredObject stored{admitted.key, admitted.bytes, 5};
  Admission admission = testing::TestAdmission();
  ChangeContext context;
  context.cluster.namespaces = testing::Labelled({{"pod-security.kubernetes.io/enforce", "baseline"},
                                                  {"pod-security.kubernetes.io/warn", "baseline"}});
  ChangeOutcome scaled = admission.Patch(*admitted.kind, "default", "web", "", model::PatchType::kMerge,
                                         R"({"spec":{"replicas":3}})", stored, context);
  INFO(scaled.status.message);
  CHECK(scaled.ok());
  CHECK(scaled.warnings.empty());
  ChangeOutcome retagged = admission.Patch(*admitted.kind, "default", "web", "", model::PatchType::kMerge,
                                           R"({"spec":{"template":{"metadata":{"labels":{"tier":"front"}}}}})",
                                           stored, context);
  // Workloads are warned about, never refused.
  CHECK(retagged.ok());
  REQUIRE(retagged.warnings.size() == 1);
  CHECK(retagged.warnings[0] == "would violate PodSecurity \"baseline:latest\": host namespaces (hostPID=true)");
}

}  // namespace
}  // namespace podflow::admission
