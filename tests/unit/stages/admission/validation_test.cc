// Validating admission: Kubernetes' exact messages, every cause collected.
#include "stages/admission/names.h"
#include "admission_fixture.h"
#include "bad_manifests.h"

namespace podflow::admission {
namespace {

TEST_CASE("validation messages", "[admission][validation]") {
  for (const testing::BadManifest& c : testing::CoreBadManifests()) {
    SECTION(c.name) { CHECK(testing::RejectOne(c.manifest) == c.message); }
  }
}

// A namespace that is not a DNS-1123 label is also one that does not
// exist: in a pipeline NamespaceLifecycle answers 404 first, so this case is
// checked here, without a namespace lookup, and not in the shared table.
TEST_CASE("namespace names are DNS-1123 labels", "[admission][validation]") {
  CHECK(testing::RejectOne("{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: Prod}, spec: {containers: "
                           "[{name: a, image: nginx}]}}") ==
        "Pod \"p\" is invalid: metadata.namespace: Invalid value: \"Prod\": " + std::string(testing::kLabelMsg));
}

TEST_CASE("every cause is collected", "[admission][validation]") {
  AdmissionOutcome out = testing::AdmitOne(
      testing::Pod("Bad_Name",
          "{containers: [{name: app}, {name: app, image: nginx, ports: [{containerPort: "
          "0}], resources: {requests: {cpu: '2'}, limits: {cpu: '1'}}}]}"));
  const ApiStatusInfo& s = out.status;
  CHECK(s.code == 422);
  CHECK(s.reason == "Invalid");
  CHECK(s.details.kind == "Pod");
  CHECK(s.details.name == "Bad_Name");
  REQUIRE(s.details.causes.size() == 5);
  CHECK(s.details.causes[0].field == "metadata.name");
  CHECK(s.details.causes[0].Reason() == "FieldValueInvalid");
  CHECK(s.details.causes[1].ToString() == "spec.containers[0].image: Required value");
  CHECK(s.details.causes[1].Reason() == "FieldValueRequired");
  CHECK(s.details.causes[2].ToString() == "spec.containers[1].name: Duplicate value: \"app\"");
  CHECK(s.details.causes[2].Reason() == "FieldValueDuplicate");
  CHECK(s.details.causes[3].ToString() ==
        "spec.containers[1].ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, "
        "inclusive");
  CHECK(
      s.details.causes[4].ToString() ==
      "spec.containers[1].resources.requests: Invalid value: \"2\": must be less than or equal to "
      "cpu limit of 1");
  CHECK(s.message.starts_with("Pod \"Bad_Name\" is invalid: [metadata.name: Invalid value: "));
  CHECK(
      s.message.ends_with(", spec.containers[1].resources.requests: Invalid value: \"2\": must be "
                          "less than or equal to cpu limit of 1]"));
}

TEST_CASE("valid manifests from config/manifests are admitted", "[admission][validation]") {
  for (std::string name : {"nginx-pod.yaml", "busybox-pod.json", "pod-init-containers.yaml",
                           "pod-node-selector.yaml", "pod-probes.yaml", "pod-resources-gpu.yaml",
                           "pod-scheduling.yaml", "pod-security-context.yaml", "pod-volumes.yaml",
                           "services.yaml", "node-kwok.yaml", "namespace.yaml", "limit-range.yaml",
                           "priority-class.yaml", "resource-quota.yaml", "storage-list.yaml"}) {
    SECTION(name) {
      Admission admission = testing::TestAdmission();
      // pod-resources-gpu.yaml names the class priority-class.yaml defines.
      AdmitReply reply = admission.Admit(
          testing::kAdminToken, testing::ReadManifest(name),
          {.priority_classes = testing::StoredPriorityClasses({testing::ReadManifest("priority-class.yaml")})});
      REQUIRE_FALSE(reply.failure.has_value());
      REQUIRE_FALSE(reply.results.empty());
      for (const AdmissionOutcome& out : reply.results) {
        INFO(out.status.message);
        CHECK(out.admitted());
        CHECK_FALSE(out.bytes.empty());
      }
    }
  }
}

TEST_CASE("name syntax helpers", "[admission][validation]") {
  CHECK(IsDns1123Subdomain("example.com").empty());
  CHECK(IsDns1123Subdomain(std::string(254, 'a')).front() == "must be no more than 253 characters");
  CHECK(IsDns1123Label("my-name").empty());
  CHECK(IsDns1123Label(std::string(64, 'a')) ==
        std::vector<std::string>{"must be no more than 63 characters"});
  CHECK(IsDns1035Label("abc-123").empty());
  CHECK_FALSE(IsDns1035Label("123-abc").empty());
  CHECK(IsValidPortName("http").empty());
  CHECK(IsValidPortName("a--b") ==
        std::vector<std::string>{"must not contain consecutive hyphens"});
  CHECK(IsValidPortName("-ab") == std::vector<std::string>{"must not begin or end with a hyphen"});
  CHECK(IsQualifiedName("app.kubernetes.io/name").empty());
  CHECK(IsQualifiedName("a/b/c").size() == 1);
  CHECK(IsQualifiedName("/a") == std::vector<std::string>{"prefix part must be non-empty"});
  CHECK(IsValidLabelValue("").empty());
}

}  // namespace
}  // namespace podflow::admission
