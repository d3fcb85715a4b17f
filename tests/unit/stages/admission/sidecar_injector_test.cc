// The sidecar injector: rules from the config add containers and volumes
// to the pods they select, as a mutating webhook would; the result is
// defaulted and validated like any pod.
#include <yaml-cpp/yaml.h>

#include "admission_fixture.h"

namespace podflow::admission {
namespace {

Result<AdmissionConfig> Config(const std::string& yaml) {
  Result<AdmissionConfig> config = ParseAdmissionConfig(YAML::Load(yaml), "", {{"admin-token", {"admin", "1", {"system:masters"}}}});
  return config;
}

constexpr std::string_view kRules = R"(
sidecarInjector:
- name: log-shipper
  namespaceSelector: "sidecars=enabled"
  selector: "app=web"
  spec:
    initContainers:
    - name: shipper
      image: fluent/fluent-bit:3.0
      restartPolicy: Always
      volumeMounts: [{name: logs, mountPath: /var/log/app}]
    volumes:
    - name: logs
      emptyDir: {}
)";

AdmissionOutcome AdmitWith(const std::string& rules, const std::map<std::string, std::string>& ns_labels,
                           const std::string& pod) {
  Result<AdmissionConfig> config = Config(rules);
  REQUIRE(config.ok());
  Admission admission = testing::TestAdmission(std::move(*config));
  AdmitReply reply = admission.Admit(testing::kAdminToken, pod, {.namespaces = testing::Labelled(ns_labels)});
  REQUIRE_FALSE(reply.failure.has_value());
  REQUIRE(reply.results.size() == 1);
  return std::move(reply.results[0]);
}

const std::string kWeb = R"(apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers:
  - name: nginx
    image: "nginx:1.14.2"
    volumeMounts: [{name: logs, mountPath: /var/log/nginx}]
  volumes: [{name: logs, emptyDir: {}}]
)";

TEST_CASE("Sidecar injector: a selected pod gets the rule's sidecar and volumes, defaulted", "[admission][sidecar]") {
  AdmissionOutcome out = AdmitWith(std::string(kRules), {{"sidecars", "enabled"}}, kWeb);
  INFO(out.status.message);
  REQUIRE(out.admitted());
  auto pod = testing::AdmittedObject<api::Pod>(out);
  REQUIRE(pod->spec->init_containers.size() == 1);
  const api::ContainerT& shipper = *pod->spec->init_containers[0];
  CHECK(shipper.name == "shipper");
  CHECK(shipper.restart_policy == "Always");
  CHECK(shipper.image_pull_policy == api::PullPolicy::IfNotPresent);
  CHECK(shipper.termination_message_path == "/dev/termination-log");
  // The pod's own `logs` volume is kept, not replaced (beside it, the
  // ServiceAccount plugin's token volume).
  REQUIRE(pod->spec->volumes.size() == 2);
  CHECK(pod->spec->volumes[0]->name == "logs");
  CHECK(pod->spec->volumes[0]->empty_dir != nullptr);
  CHECK(pod->spec->volumes[1]->name.starts_with("kube-api-access-"));

  // Not selected: another app, or a namespace without the label.
  std::string other = kWeb;
  other.replace(other.find("app: web"), 8, "app: api");
  CHECK(testing::AdmittedObject<api::Pod>(AdmitWith(std::string(kRules), {{"sidecars", "enabled"}}, other))
            ->spec->init_containers.empty());
  CHECK(testing::AdmittedObject<api::Pod>(AdmitWith(std::string(kRules), {}, kWeb))->spec->init_containers.empty());
}

TEST_CASE("Sidecar injector: what it adds is validated like the pod's own", "[admission][sidecar]") {
  // The sidecar mounts a volume the pod does not have and the rule does not add.
  AdmissionOutcome out = AdmitWith(R"(
sidecarInjector:
- name: broken
  spec:
    containers:
    - {name: proxy, image: envoyproxy/envoy:v1.30.1, volumeMounts: [{name: certs, mountPath: /certs}]}
)",
                                   {}, kWeb);
  CHECK(out.status.code == 422);
  CHECK(out.status.message ==
        "Pod \"web\" is invalid: spec.containers[1].volumeMounts[0].name: Not found: \"certs\"");
}

TEST_CASE("Sidecar injector: a bad rule is a config error naming it", "[admission][sidecar]") {
  Result<AdmissionConfig> unknown = Config(R"(
sidecarInjector:
- name: typo
  spec:
    containers: [{name: proxy, image: envoy, imagePullPolcy: Always}]
)");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().starts_with("admission.sidecarInjector[0].spec: "));
  CHECK(unknown.status().message().find("imagePullPolcy") != std::string::npos);
  Result<AdmissionConfig> selector = Config(R"(
sidecarInjector:
- name: bad-selector
  selector: "app in (web"
  spec: {containers: [{name: proxy, image: envoy}]}
)");
  REQUIRE_FALSE(selector.ok());
  CHECK(selector.status().message().starts_with("admission: sidecar injector rule \"bad-selector\": selector: "));
  CHECK_FALSE(Config("sidecarInjector: [{spec: {containers: []}}]").ok());
  // What a rule adds must be addable: named once, with an image; rules named once.
  Result<AdmissionConfig> imageless = Config("sidecarInjector: [{name: a, spec: {containers: [{name: proxy}]}}]");
  REQUIRE_FALSE(imageless.ok());
  CHECK(imageless.status().message() == "admission.sidecarInjector[0].spec.containers[0].image: required");
  Result<AdmissionConfig> twice = Config(
      "sidecarInjector: [{name: a, spec: {initContainers: [{name: p, image: busybox}], containers: [{name: p, image: nginx}]}}]");
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.status().message() == "admission.sidecarInjector[0].spec.containers[0].name: \"p\" is used twice");
  CHECK_FALSE(Config("sidecarInjector: [{name: a, spec: {containers: [{name: p, image: x}]}}, "
                     "{name: a, spec: {containers: [{name: q, image: x}]}}]")
                  .ok());
}

}  // namespace
}  // namespace podflow::admission
