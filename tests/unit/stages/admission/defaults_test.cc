// Mutating admission: every default Kubernetes applies on create.
#include "stages/admission/defaults.h"

#include <regex>

#include "base/clock.h"
#include "admission_fixture.h"

namespace podflow::admission {
namespace {

TEST_CASE("image pull policy rule", "[admission][defaults]") {
  struct Case {
    std::string image;
    api::PullPolicy want;
  };
  const std::vector<Case> cases = {
      {"nginx", api::PullPolicy::Always},
      {"nginx:latest", api::PullPolicy::Always},
      {"nginx:1.14.2", api::PullPolicy::IfNotPresent},
      {"registry:5000/app", api::PullPolicy::Always},
      {"registry:5000/app:v1", api::PullPolicy::IfNotPresent},
      {"registry:5000/app:latest", api::PullPolicy::Always},
      {"app@sha256:45b23dee08af5e43a7fea6c4cf9c25ccf269ee113168c19722f87876677c5cb2",
       api::PullPolicy::IfNotPresent},
      {"app:v1@sha256:45b23dee08af5e43a7fea6c4cf9c25ccf269ee113168c19722f87876677c5cb2",
       api::PullPolicy::IfNotPresent},
      {"docker.io/library/busybox:1.36", api::PullPolicy::IfNotPresent},
  };
  for (const Case& c : cases) {
    SECTION(c.image) { CHECK(DefaultPullPolicy(c.image) == c.want); }
  }
}

std::string PodWithResources(std::string_view resources_a, std::string_view resources_b = {}) {
  std::string out = "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [";
  out += "{name: a, image: nginx, resources: " + std::string(resources_a) + "}";
  if (!resources_b.empty())
    out += ", {name: b, image: nginx, resources: " + std::string(resources_b) + "}";
  return out + "]}}";
}

TEST_CASE("QoS class", "[admission][defaults]") {
  struct Case {
    std::string name;
    std::string manifest;
    api::PodQOSClass want;
  };
  const std::vector<Case> cases = {
      {"no resources", PodWithResources("{}"), api::PodQOSClass::BestEffort},
      {"only an extended resource", PodWithResources("{limits: {nvidia.com/gpu: 1}}"),
       api::PodQOSClass::BestEffort},
      {"requests = limits for cpu and memory",
       PodWithResources(
           "{requests: {cpu: 500m, memory: 128Mi}, limits: {cpu: 500m, memory: 128Mi}}"),
       api::PodQOSClass::Guaranteed},
      {"limits only (requests default to them)",
       PodWithResources("{limits: {cpu: '1', memory: 1Gi}}"), api::PodQOSClass::Guaranteed},
      {"requests below limits",
       PodWithResources(
           "{requests: {cpu: 250m, memory: 64Mi}, limits: {cpu: 500m, memory: 128Mi}}"),
       api::PodQOSClass::Burstable},
      {"cpu limit only", PodWithResources("{limits: {cpu: '1'}}"), api::PodQOSClass::Burstable},
      {"requests only", PodWithResources("{requests: {memory: 64Mi}}"),
       api::PodQOSClass::Burstable},
      {"one guaranteed container, one best effort",
       PodWithResources("{limits: {cpu: '1', memory: 1Gi}}", "{}"), api::PodQOSClass::Burstable},
      {"two guaranteed containers",
       PodWithResources("{limits: {cpu: '1', memory: 1Gi}}", "{limits: {cpu: 200m, memory: 1Mi}}"),
       api::PodQOSClass::Guaranteed},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      auto pod = testing::AdmittedObject<api::Pod>(testing::AdmitOne(c.manifest));
      CHECK(pod->status->qos_class == c.want);
    }
  }
}

TEST_CASE("pod defaults", "[admission][defaults]") {
  AdmissionOutcome out = testing::AdmitOne(testing::ReadManifest("nginx-pod.yaml"));
  CHECK(out.status.code == 201);
  CHECK(out.status.message == "pod/nginx-pod created");
  CHECK(out.key == "/registry/pods/default/nginx-pod");
  CHECK(out.namespace_ == "default");
  CHECK(out.name == "nginx-pod");
  auto pod = testing::AdmittedObject<api::Pod>(out);

  const api::ObjectMetaT& meta = *pod->metadata;
  CHECK(meta.namespace_ == "default");
  CHECK(meta.creation_timestamp == "2026-11-21T14:00:00Z");
  CHECK(std::regex_match(
      meta.uid, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")));

  const api::PodSpecT& spec = *pod->spec;
  CHECK(spec.restart_policy == api::RestartPolicy::Always);
  CHECK(spec.dns_policy == api::DNSPolicy::ClusterFirst);
  CHECK(spec.scheduler_name == "default-scheduler");
  CHECK(spec.termination_grace_period_seconds.value() == 30);
  CHECK(spec.security_context != nullptr);
  CHECK(spec.enable_service_links.value() == true);
  CHECK(spec.priority.value() == 0);
  CHECK(spec.preemption_policy == api::PreemptionPolicy::PreemptLowerPriority);
  CHECK(spec.service_account_name == "default");
  REQUIRE(spec.tolerations.size() == 2);
  CHECK(spec.tolerations[0]->key == "node.kubernetes.io/not-ready");
  CHECK(spec.tolerations[1]->key == "node.kubernetes.io/unreachable");
  CHECK(spec.tolerations[1]->operator_ == api::TolerationOperator::Exists);
  CHECK(spec.tolerations[1]->effect == api::TaintEffect::NoExecute);
  CHECK(spec.tolerations[1]->toleration_seconds.value() == 300);

  const api::ContainerT& c = *spec.containers[0];
  CHECK(c.image_pull_policy == api::PullPolicy::IfNotPresent);  // nginx:1.14.2
  CHECK(c.termination_message_path == "/dev/termination-log");
  CHECK(c.termination_message_policy == api::TerminationMessagePolicy::File);
  CHECK(c.ports[0]->protocol == api::Protocol::TCP);

  CHECK(pod->status->phase == api::PodPhase::Pending);
  CHECK(pod->status->qos_class == api::PodQOSClass::BestEffort);

  SECTION("the bytes print as a Kubernetes object") {
    std::string yaml = model::ToYaml(model::Kind("Pod"), out.bytes);
    CHECK(yaml.find("imagePullPolicy: IfNotPresent") != std::string::npos);
    CHECK(yaml.find("phase: Pending") != std::string::npos);
  }
}

TEST_CASE("pod defaults keep what the manifest says", "[admission][defaults]") {
  auto pod = testing::AdmittedObject<api::Pod>(testing::AdmitOne(R"(
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: prod, uid: forged, creationTimestamp: "2000-01-01T00:00:00Z"}
spec:
  restartPolicy: Never
  dnsPolicy: Default
  schedulerName: my-scheduler
  terminationGracePeriodSeconds: 5
  priority: 0
  preemptionPolicy: PreemptLowerPriority
  enableServiceLinks: false
  tolerations: [{operator: Exists}]
  initContainers:
  - {name: init, image: busybox, imagePullPolicy: Never}
  containers:
  - name: app
    image: nginx
    terminationMessagePolicy: FallbackToLogsOnError
    ports: [{containerPort: 53, protocol: UDP}]
    resources: {limits: {cpu: '1'}, requests: {memory: 1Gi}}
    readinessProbe: {httpGet: {port: 80}}
status: {phase: Running}
)"));
  CHECK(pod->metadata->namespace_ == "prod");
  CHECK(pod->metadata->uid != "forged");  // the server owns uid and creationTimestamp
  CHECK(pod->metadata->creation_timestamp == "2026-11-21T14:00:00Z");
  const api::PodSpecT& spec = *pod->spec;
  CHECK(spec.restart_policy == api::RestartPolicy::Never);
  CHECK(spec.dns_policy == api::DNSPolicy::Default);
  CHECK(spec.scheduler_name == "my-scheduler");
  CHECK(spec.termination_grace_period_seconds.value() == 5);
  CHECK(spec.priority.value() == 0);  // what the Priority plugin computes may be repeated
  CHECK(spec.preemption_policy == api::PreemptionPolicy::PreemptLowerPriority);
  CHECK(spec.enable_service_links.value() == false);
  CHECK(spec.tolerations.size() == 1);  // "tolerate everything" covers both defaults
  CHECK(spec.init_containers[0]->image_pull_policy == api::PullPolicy::Never);
  CHECK(spec.init_containers[0]->termination_message_path == "/dev/termination-log");
  const api::ContainerT& c = *spec.containers[0];
  CHECK(c.image_pull_policy == api::PullPolicy::Always);  // nginx: no tag
  CHECK(c.termination_message_policy == api::TerminationMessagePolicy::FallbackToLogsOnError);
  CHECK(c.ports[0]->protocol == api::Protocol::UDP);
  // requests: the cpu limit is copied in, in key order.
  REQUIRE(c.resources->requests.size() == 2);
  CHECK(c.resources->requests[0]->key == "cpu");
  CHECK(c.resources->requests[0]->value == "1");
  CHECK(c.resources->requests[1]->key == "memory");
  CHECK(c.readiness_probe->timeout_seconds == 1);
  CHECK(c.readiness_probe->period_seconds == 10);
  CHECK(c.readiness_probe->success_threshold == 1);
  CHECK(c.readiness_probe->failure_threshold == 3);
  CHECK(c.readiness_probe->http_get->path == "/");
  CHECK(c.readiness_probe->http_get->scheme == api::URIScheme::HTTP);
  CHECK(pod->status->phase == api::PodPhase::Pending);  // status is the server's
}

TEST_CASE("service defaults", "[admission][defaults]") {
  auto svc = testing::AdmittedObject<api::Service>(testing::AdmitOne(R"(
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: a, port: 80}, {name: b, port: 81, targetPort: http}]
)"));
  const api::ServiceSpecT& spec = *svc->spec;
  CHECK(spec.type == api::ServiceType::ClusterIP);
  CHECK(spec.session_affinity == api::ServiceAffinity::None);
  CHECK(spec.internal_traffic_policy == api::ServiceInternalTrafficPolicy::Cluster);
  CHECK(spec.ip_family_policy == api::IPFamilyPolicy::SingleStack);
  CHECK(spec.ip_families == std::vector<api::IPFamily>{api::IPFamily::IPv4});
  CHECK(ClusterIpAllocator().Check(spec.cluster_ip, {}).ok());  // one of 10.96.0.0/12
  CHECK(spec.ports[0]->protocol == api::Protocol::TCP);
  CHECK(spec.ports[0]->target_port->type == api::IntOrStringType::Int);
  CHECK(spec.ports[0]->target_port->int_val == 80);
  CHECK(spec.ports[1]->target_port->type == api::IntOrStringType::String);
  CHECK(spec.ports[1]->target_port->str_val == "http");
  CHECK(svc->metadata->namespace_ == "default");
}

TEST_CASE("service defaults: NodePort and ClientIP affinity", "[admission][defaults]") {
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken, testing::ReadManifest("services.yaml"));
  REQUIRE(reply.results.size() == 2);
  auto web = testing::AdmittedObject<api::Service>(reply.results[0]);
  CHECK(web->spec->session_affinity_config->client_ip->timeout_seconds.value() == 600);
  auto nodeport = testing::AdmittedObject<api::Service>(reply.results[1]);
  CHECK(nodeport->spec->external_traffic_policy == api::ServiceExternalTrafficPolicy::Local);
  CHECK(nodeport->spec->ports[1]->protocol == api::Protocol::UDP);
  auto sticky = testing::AdmittedObject<api::Service>(testing::AdmitOne(
      "{apiVersion: v1, kind: Service, metadata: {name: s}, spec: {sessionAffinity: ClientIP, "
      "ports: [{port: 80}]}}"));
  CHECK(sticky->spec->session_affinity_config->client_ip->timeout_seconds.value() == 10800);
}

TEST_CASE("other kinds get namespace, uid and creationTimestamp", "[admission][defaults]") {
  SECTION("a node is cluster-scoped: no namespace") {
    Admission admission = testing::TestAdmission();
    AdmitReply reply =
        admission.Admit(testing::kAdminToken, testing::ReadManifest("node-kwok.yaml"));
    REQUIRE_FALSE(reply.results.empty());
    AdmissionOutcome& out = reply.results[0];
    CHECK(out.key == "/registry/nodes/kwok-node-0");
    auto node = testing::AdmittedObject<api::Node>(out);
    CHECK(node->metadata->namespace_.empty());
    CHECK(node->metadata->creation_timestamp == "2026-11-21T14:00:00Z");
    CHECK_FALSE(node->metadata->uid.empty());
  }
  SECTION("a namespaced kind without a namespace") {
    AdmissionOutcome out =
        testing::AdmitOne("{apiVersion: v1, kind: Endpoints, metadata: {name: web}}");
    CHECK(out.namespace_ == "default");
    CHECK(out.key == "/registry/endpoints/default/web");
    auto ep = testing::AdmittedObject<api::Endpoints>(out);
    CHECK(ep->metadata->namespace_ == "default");
    CHECK_FALSE(ep->metadata->uid.empty());
  }
  SECTION("a namespaced kind keeps its namespace") {
    AdmissionOutcome out = testing::AdmitOne(testing::ReadManifest("limit-range.yaml"));
    CHECK(out.key == "/registry/limitranges/team-a/defaults");
  }
}

TEST_CASE("uids, generated names and timestamps", "[admission][defaults]") {
  std::mt19937_64 a(7);
  std::mt19937_64 b(7);
  SECTION("a seeded RNG gives the same uids") {
    CHECK(NewUuid(a) == NewUuid(b));
    CHECK(NewUuid(a) != NewUuid(a));
  }
  SECTION("generateName") {
    std::string name = GenerateName("web-", a);
    CHECK(std::regex_match(name, std::regex("web-[bcdfghjklmnpqrstvwxz2456789]{5}")));
    auto pod = testing::AdmittedObject<api::Pod>(testing::AdmitOne(
        "{apiVersion: v1, kind: Pod, metadata: {generateName: web-}, spec: {containers: [{name: a, "
        "image: nginx}]}}"));
    CHECK(pod->metadata->name.starts_with("web-"));
    CHECK(pod->metadata->name.size() == 9);
  }
  SECTION("RFC 3339 in seconds") {
    CHECK(FormatRfc3339(testing::FixedNow() + std::chrono::milliseconds(999)) ==
          "2026-11-21T14:00:00Z");
  }
}

}  // namespace
}  // namespace podflow::admission

namespace podflow::admission {
namespace {

TEST_CASE("DefaultTolerationSeconds takes kube-apiserver's two settings from the config", "[admission][defaults]") {
  Result<AdmissionConfig> config = ParseAdmissionConfig(YAML::Load(
      "{tokens: [{token: t, user: u, groups: [system:masters]}], defaultNotReadyTolerationSeconds: 0, "
      "defaultUnreachableTolerationSeconds: 2}"));
  REQUIRE(config.ok());
  Admission admission = testing::TestAdmission(std::move(*config));
  AdmitReply reply = admission.Admit("t", testing::ReadManifest("nginx-pod.yaml"));
  REQUIRE_FALSE(reply.failure.has_value());
  REQUIRE(reply.results.size() == 1);
  auto pod = testing::AdmittedObject<api::Pod>(reply.results[0]);
  REQUIRE(pod->spec->tolerations.size() == 2);
  CHECK(pod->spec->tolerations[0]->key == "node.kubernetes.io/not-ready");
  CHECK(pod->spec->tolerations[0]->toleration_seconds.value() == 0);
  CHECK(pod->spec->tolerations[1]->key == "node.kubernetes.io/unreachable");
  CHECK(pod->spec->tolerations[1]->toleration_seconds.value() == 2);

  CHECK(ParseAdmissionConfig(YAML::Load("{defaultUnreachableTolerationSeconds: -1}")).status().message() ==
        "admission.defaultUnreachableTolerationSeconds: must be 0 or more");
  CHECK(ParseAdmissionConfig(YAML::Load("{defaultNotReadyTolerationSeconds: soon}")).status().message() ==
        "admission.defaultNotReadyTolerationSeconds: must be a whole number of seconds");
}

}  // namespace
}  // namespace podflow::admission
