// Validating admission: Kubernetes' exact messages, every cause collected.
#include "stages/admission/names.h"
#include "admission_fixture.h"

namespace podflow::admission {
namespace {

constexpr std::string_view kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
constexpr std::string_view kLabelMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
constexpr std::string_view kDns1035Msg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

// A pod named `name` with `spec` (YAML flow style).
std::string Pod(std::string_view name, std::string_view spec) {
  return "{apiVersion: v1, kind: Pod, metadata: {name: " + std::string(name) +
         "}, spec: " + std::string(spec) + "}";
}
std::string Service(std::string_view name, std::string_view spec) {
  return "{apiVersion: v1, kind: Service, metadata: {name: " + std::string(name) +
         "}, spec: " + std::string(spec) + "}";
}

TEST_CASE("validation messages", "[admission][validation]") {
  struct Case {
    std::string name;
    std::string manifest;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"name required",
       "{apiVersion: v1, kind: Pod, metadata: {labels: {a: b}}, spec: {containers: [{name: a, "
       "image: "
       "nginx}]}}",
       "Pod \"\" is invalid: metadata.name: Required value: name or generateName is required"},
      {"pod name is a DNS-1123 subdomain",
       Pod("Nginx_Pod", "{containers: [{name: a, image: nginx}]}"),
       "Pod \"Nginx_Pod\" is invalid: metadata.name: Invalid value: \"Nginx_Pod\": " +
           std::string(kSubdomainMsg)},
      {"namespace is a DNS-1123 label",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: Prod}, spec: {containers: "
       "[{name: "
       "a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.namespace: Invalid value: \"Prod\": " +
           std::string(kLabelMsg)},
      {"at least one container", Pod("p", "{restartPolicy: Always}"),
       "Pod \"p\" is invalid: spec.containers: Required value"},
      {"image required", Pod("x", "{containers: [{name: a}]}"),
       "Pod \"x\" is invalid: spec.containers[0].image: Required value"},
      {"container name required", Pod("x", "{containers: [{image: nginx}]}"),
       "Pod \"x\" is invalid: spec.containers[0].name: Required value"},
      {"container name is a DNS-1123 label",
       Pod("x", "{containers: [{name: App_1, image: nginx}]}"),
       "Pod \"x\" is invalid: spec.containers[0].name: Invalid value: \"App_1\": " +
           std::string(kLabelMsg)},
      {"container name with dots", Pod("x", "{containers: [{name: a.b, image: nginx}]}"),
       "Pod \"x\" is invalid: spec.containers[0].name: Invalid value: \"a.b\": must not contain "
       "dots"},
      {"duplicate container names",
       Pod("x", "{containers: [{name: app, image: nginx}, {name: app, image: redis}]}"),
       "Pod \"x\" is invalid: spec.containers[1].name: Duplicate value: \"app\""},
      {"duplicate across init containers",
       Pod("x",
           "{initContainers: [{name: app, image: busybox}], containers: [{name: app, image: "
           "nginx}]}"),
       "Pod \"x\" is invalid: spec.initContainers[0].name: Duplicate value: \"app\""},
      {"containerPort 0",
       Pod("x", "{containers: [{name: a, image: nginx, ports: [{hostPort: 80}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 0: must be "
       "between 1 and 65535, inclusive"},
      {"containerPort too big",
       Pod("x", "{containers: [{name: a, image: nginx, ports: [{containerPort: 70000}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 70000: "
       "must "
       "be between 1 and 65535, inclusive"},
      {"hostPort out of range",
       Pod("x",
           "{containers: [{name: a, image: nginx, ports: [{containerPort: 80, hostPort: "
           "-1}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[0].hostPort: Invalid value: -1: must be "
       "between 1 and 65535, inclusive"},
      {"port name syntax",
       Pod("x",
           "{containers: [{name: a, image: nginx, ports: [{name: HTTP, containerPort: 80}]}]}"),
       "Pod \"x\" is invalid: [spec.containers[0].ports[0].name: Invalid value: \"HTTP\": must "
       "contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), "
       "spec.containers[0].ports[0].name: Invalid value: \"HTTP\": must contain at least one "
       "letter "
       "(a-z)]"},
      {"port name too long",
       Pod("x",
           "{containers: [{name: a, image: nginx, ports: [{name: a-very-long-port-name, "
           "containerPort: 80}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[0].name: Invalid value: "
       "\"a-very-long-port-name\": must be no more than 15 characters"},
      {"duplicate port names",
       Pod("x",
           "{containers: [{name: a, image: nginx, ports: [{name: web, containerPort: 80}, "
           "{name: web, containerPort: 81}]}]}"),
       "Pod \"x\" is invalid: spec.containers[0].ports[1].name: Duplicate value: \"web\""},
      {"requests above limits",
       Pod("x",
           "{containers: [{name: a, image: nginx, resources: {requests: {cpu: '2'}, limits: "
           "{cpu: '1'}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": must be "
       "less than or equal to cpu limit of 1"},
      {"memory requests above limits, canonical quantities",
       Pod("x",
           "{containers: [{name: a, image: nginx, resources: {requests: {memory: 2Gi}, "
           "limits: {memory: 1024Mi}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2Gi\": must "
       "be "
       "less than or equal to memory limit of 1Gi"},
      {"negative request",
       Pod("x", "{containers: [{name: a, image: nginx, resources: {requests: {cpu: -1}}}]}"),
       "Pod \"x\" is invalid: spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": "
       "must be greater than or equal to 0"},
      {"label key",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {'bad key': v}}, spec: "
       "{containers: "
       "[{name: a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.labels: Invalid value: \"bad key\": name part must consist "
       "of "
       "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
       "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
       "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"},
      {"label key prefix",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {'Example.com/app': v}}, spec: "
       "{containers: [{name: a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.labels: Invalid value: \"Example.com/app\": prefix part " +
           std::string(kSubdomainMsg)},
      {"label value",
       "{apiVersion: v1, kind: Pod, metadata: {name: p, labels: {app: -web}}, spec: {containers: "
       "[{name: a, image: nginx}]}}",
       "Pod \"p\" is invalid: metadata.labels: Invalid value: \"-web\": a valid label must be an "
       "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
       "end "
       "with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
       "for "
       "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
      {"service name is a DNS-1035 label", Service("1web", "{ports: [{port: 80}]}"),
       "Service \"1web\" is invalid: metadata.name: Invalid value: \"1web\": " +
           std::string(kDns1035Msg)},
      {"service ports required", Service("web", "{selector: {app: web}}"),
       "Service \"web\" is invalid: spec.ports: Required value"},
      {"service port range", Service("web", "{ports: [{port: 0, targetPort: 8080}]}"),
       "Service \"web\" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and "
       "65535, inclusive"},
      {"service port names required when several",
       Service("web", "{ports: [{name: a, port: 80}, {port: 81}]}"),
       "Service \"web\" is invalid: spec.ports[1].name: Required value"},
      {"service port names unique",
       Service("web", "{ports: [{name: a, port: 80}, {name: a, port: 81}]}"),
       "Service \"web\" is invalid: spec.ports[1].name: Duplicate value: \"a\""},
      {"service port name syntax", Service("web", "{ports: [{name: Web, port: 80}]}"),
       "Service \"web\" is invalid: spec.ports[0].name: Invalid value: \"Web\": " +
           std::string(kLabelMsg)},
      {"service targetPort", Service("web", "{ports: [{port: 80, targetPort: 65536}]}"),
       "Service \"web\" is invalid: spec.ports[0].targetPort: Invalid value: 65536: must be "
       "between "
       "1 and 65535, inclusive"},
      {"nodePort on a ClusterIP service", Service("web", "{ports: [{port: 80, nodePort: 30080}]}"),
       "Service \"web\" is invalid: spec.ports[0].nodePort: Forbidden: may not be used when `type` "
       "is 'ClusterIP'"},
      {"clusterIP syntax", Service("web", "{clusterIP: 10.96.0.300, ports: [{port: 80}]}"),
       "Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: \"10.96.0.300\": must be a "
       "valid IP address, (e.g. 10.9.8.7)"},
      {"node name", "{apiVersion: v1, kind: Node, metadata: {name: Node_1}}",
       "Node \"Node_1\" is invalid: metadata.name: Invalid value: \"Node_1\": " +
           std::string(kSubdomainMsg)},
  };
  for (const Case& c : cases) {
    SECTION(c.name) { CHECK(testing::RejectOne(c.manifest) == c.message); }
  }
}

TEST_CASE("every cause is collected", "[admission][validation]") {
  AdmissionOutcome out = testing::AdmitOne(
      Pod("Bad_Name",
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
          testing::kAdminToken, testing::ReadManifest(name), {},
          testing::StoredPriorityClasses({testing::ReadManifest("priority-class.yaml")}));
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
