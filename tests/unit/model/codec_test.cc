#include "model/codec.h"

#include <catch2/catch.hpp>

#include "api_generated.h"

namespace podflow::model {
namespace {

namespace api = podflow::api;

// Decodes exactly one document and requires it to be accepted.
Object DecodeOne(const std::string& text) {
  auto docs = DecodeManifests(text);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  INFO((*docs)[0].status.ToString());
  REQUIRE((*docs)[0].status.ok());
  return (*docs)[0].object;
}

// Decodes exactly one document and requires it to be rejected.
Decoded Reject(const std::string& text) {
  auto docs = DecodeManifests(text);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  REQUIRE_FALSE((*docs)[0].status.ok());
  return (*docs)[0];
}

const char* kNginx = R"(apiVersion: v1
kind: Pod
metadata:
  name: nginx
  labels:
    app: web
    tier: frontend
spec:
  containers:
  - name: nginx
    image: nginx:1.14.2
    ports:
    - containerPort: 80
    resources:
      requests:
        cpu: 0.5
        memory: 64Mi
      limits:
        nvidia.com/gpu: 1
)";

TEST_CASE("A pod manifest decodes into the Pod table") {
  Object obj = DecodeOne(kNginx);
  REQUIRE(obj.kind != nullptr);
  CHECK(obj.kind->kind == "Pod");
  CHECK(obj.name == "nginx");
  REQUIRE(VerifyObject(*obj.kind, obj.bytes).ok());
  auto* pod = flatbuffers::GetRoot<api::Pod>(obj.bytes.data());
  CHECK(pod->api_version()->str() == "v1");
  CHECK(pod->metadata()->name()->str() == "nginx");
  REQUIRE(pod->metadata()->labels()->size() == 2);
  CHECK(pod->metadata()->labels()->LookupByKey("tier")->value()->str() == "frontend");
  const api::Container* c = pod->spec()->containers()->Get(0);
  CHECK(c->image()->str() == "nginx:1.14.2");
  CHECK(c->ports()->Get(0)->container_port() == 80);
  CHECK(c->resources()->requests()->LookupByKey("cpu")->value()->str() == "500m");
  CHECK(c->resources()->requests()->LookupByKey("memory")->value()->str() == "64Mi");
  CHECK(c->resources()->limits()->LookupByKey("nvidia.com/gpu")->value()->str() == "1");
}

TEST_CASE("Unknown and misplaced fields are reported by path") {
  Decoded d = Reject(R"(apiVersion: v1
kind: Pod
metadata: {name: typo}
spec:
  containers:
  - name: app
    image: busybox
    imagePullPolcy: Always
  nodeSelector: {disktype: ssd}
  replicas: 3
)");
  CHECK(d.status.code() == Code::kInvalid);
  REQUIRE(d.causes.size() == 2);
  CHECK(d.causes[0].ToString() == "spec.containers[0].imagePullPolcy: unknown field");
  CHECK(d.causes[1].ToString() == "spec.replicas: unknown field");
  CHECK(d.status.message() ==
        "Pod \"typo\" is invalid: [spec.containers[0].imagePullPolcy: unknown field, "
        "spec.replicas: unknown field]");
  CHECK(d.object.bytes.empty());
}

TEST_CASE("Wrong types are reported with what was expected") {
  SECTION("a quoted port is a string, not an integer") {
    Decoded d = Reject(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"name":"a","image":"b","ports":[{"containerPort":"80"}]}]}})");
    REQUIRE(d.causes.size() == 1);
    CHECK(d.causes[0].ToString() ==
          "spec.containers[0].ports[0].containerPort: Invalid value: \"80\": expected integer, got string");
  }
  SECTION("an unquoted env value is a number, not a string") {
    Decoded d = Reject(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - {name: a, image: b, env: [{name: PORT, value: 8080}]}
)");
    REQUIRE(d.causes.size() == 1);
    CHECK(d.causes[0].field == "spec.containers[0].env[0].value");
    CHECK(d.causes[0].detail == "expected string, got integer");
  }
  SECTION("a label value that YAML reads as a boolean") {
    Decoded d = Reject("apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {canary: yes}}\n");
    REQUIRE(d.causes.size() == 1);
    CHECK(d.causes[0].field == "metadata.labels[canary]");
  }
  SECTION("an integer out of the field's range") {
    Decoded d = Reject(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: a, image: b, ports: [{containerPort: 4294967296}]}]}
)");
    REQUIRE(d.causes.size() == 1);
    CHECK(d.causes[0].detail == "out of range");
  }
  SECTION("a bad quantity") {
    Decoded d = Reject(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: a, image: b, resources: {requests: {memory: 1GB}}}]}
)");
    REQUIRE(d.causes.size() == 1);
    CHECK(d.causes[0].field == "spec.containers[0].resources.requests[memory]");
    CHECK(d.causes[0].value == "1GB");
  }
  SECTION("a value outside a closed set") {
    Decoded d = Reject(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {restartPolicy: Sometimes, containers: [{name: a, image: b}]}
)");
    REQUIRE(d.causes.size() == 1);
    CHECK(d.causes[0].ToString() ==
          "spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: "
          "\"Always\", \"OnFailure\", \"Never\"");
  }
  SECTION("a bad time") {
    Decoded d = Reject("apiVersion: v1\nkind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\n");
    REQUIRE(d.causes.size() == 1);
    CHECK(d.causes[0].field == "metadata.creationTimestamp");
  }
}

TEST_CASE("Documents without a known kind are rejected on their own") {
  auto docs = DecodeManifests(R"(apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: d}
---
metadata: {name: nothing}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
)");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 3);
  CHECK((*docs)[0].status.message() ==
        "no matches for kind \"HorizontalPodAutoscaler\" in version \"autoscaling/v2\"");
  CHECK((*docs)[1].status.message() == "error validating data: [apiVersion not set, kind not set]");
  REQUIRE((*docs)[2].status.ok());
  CHECK((*docs)[2].object.kind->kind == "Namespace");
  CHECK((*docs)[2].object.name == "team-a");
}

TEST_CASE("Text that is not YAML fails as a whole with its position") {
  auto docs = DecodeManifests("apiVersion: v1\nkind: [Pod\n");
  REQUIRE_FALSE(docs.ok());
  CHECK(docs.status().message().find("error parsing manifest: line") == 0);
}

TEST_CASE("kind: List yields its items") {
  auto docs = DecodeManifests(R"({"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
     "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": "http"}]}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api"},
     "spec": {"ports": [{"port": 443, "targetPort": 8443, "protocol": "TCP"}]}}]})");
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 2);
  for (const auto& d : *docs) REQUIRE(d.status.ok());
  auto* web = flatbuffers::GetRoot<api::Service>((*docs)[0].object.bytes.data());
  const api::IntOrString* named = web->spec()->ports()->Get(0)->target_port();
  CHECK(named->type() == api::IntOrStringType::String);
  CHECK(named->str_val()->str() == "http");
  auto* svc = flatbuffers::GetRoot<api::Service>((*docs)[1].object.bytes.data());
  const api::IntOrString* numbered = svc->spec()->ports()->Get(0)->target_port();
  CHECK(numbered->type() == api::IntOrStringType::Int);
  CHECK(numbered->int_val() == 8443);
  CHECK(svc->spec()->ports()->Get(0)->protocol() == api::Protocol::TCP);
}

TEST_CASE("Pointer fields keep an explicit zero; plain zero values are omitted") {
  Object obj = DecodeOne(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  terminationGracePeriodSeconds: 0
  hostNetwork: false
  containers: [{name: a, image: b}]
)");
  auto* pod = flatbuffers::GetRoot<api::Pod>(obj.bytes.data());
  REQUIRE(pod->spec()->termination_grace_period_seconds().has_value());
  CHECK(*pod->spec()->termination_grace_period_seconds() == 0);
  Value out = ToValue(*obj.kind, obj.bytes);
  const Value* spec = out.Find("spec");
  REQUIRE(spec != nullptr);
  REQUIRE(spec->Find("terminationGracePeriodSeconds") != nullptr);
  CHECK(spec->Find("terminationGracePeriodSeconds")->int_value() == 0);
  CHECK(spec->Find("hostNetwork") == nullptr);
}

TEST_CASE("Output follows Kubernetes' field order and quotes ambiguous strings") {
  Object obj = DecodeOne(R"(spec:
  containers:
  - image: busybox
    name: app
    env: [{name: ENABLED, value: "yes"}, {value: "8080", name: PORT}]
metadata: {name: order}
kind: Pod
apiVersion: v1
)");
  std::string yaml = ToYaml(*obj.kind, obj.bytes);
  CHECK(yaml.find("apiVersion: v1\nkind: Pod\nmetadata:\n  name: order\nspec:") == 0);
  CHECK(yaml.find("value: \"yes\"") != std::string::npos);
  CHECK(yaml.find("value: \"8080\"") != std::string::npos);
  std::string json = ToJson(*obj.kind, obj.bytes, 0);
  CHECK(json.find(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"order"},"spec":{"containers":[{"name":"app","image":"busybox","env":[{"name":"ENABLED","value":"yes"},{"name":"PORT","value":"8080"}]}]}})") == 0);
}

TEST_CASE("Errors are listed in document order, whatever the schema order") {
  // restartPolicy comes after containers in PodSpec, and image after name in
  // Container; the causes still follow the document.
  Decoded d = Reject(R"(apiVersion: v1
kind: Pod
metadata: {name: order}
spec:
  restartPolicy: Sometimes
  containers:
  - {imagePullPolcy: Always, name: a, image: b}
  - {image: 7, name: c, bogus: 1}
  priority: high
)");
  REQUIRE(d.causes.size() == 5);
  CHECK(d.causes[0].field == "spec.restartPolicy");
  CHECK(d.causes[1].field == "spec.containers[0].imagePullPolcy");
  CHECK(d.causes[2].field == "spec.containers[1].image");
  CHECK(d.causes[3].field == "spec.containers[1].bogus");
  CHECK(d.causes[4].field == "spec.priority");
}

TEST_CASE("A repeated key is reported once the document is read") {
  Decoded d = Reject(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dup"},
    "spec": {"containers": [{"name": "a", "image": "b", "name": "c"}]}})");
  REQUIRE(d.causes.size() == 1);
  CHECK(d.causes[0].type == FieldError::Type::kDuplicate);
  CHECK(d.causes[0].field == "spec.containers[0].name");
}

TEST_CASE("Acronym fields use Kubernetes' spelling") {
  Object obj = DecodeOne(R"(apiVersion: v1
kind: Pod
metadata: {name: acronyms}
spec:
  hostIPC: true
  hostPID: true
  setHostnameAsFQDN: true
  containers: [{name: a, image: b, ports: [{containerPort: 53, hostIP: 10.0.0.1, protocol: UDP}]}]
  volumes:
  - name: ebs
    awsElasticBlockStore: {volumeID: vol-1, fsType: ext4}
  - name: disk
    azureDisk: {diskName: d, diskURI: "https://example/d.vhd"}
  - name: api
    downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
status:
  podIP: 10.244.0.5
  podIPs: [{ip: 10.244.0.5}]
  hostIP: 192.168.1.10
)");
  auto* pod = flatbuffers::GetRoot<api::Pod>(obj.bytes.data());
  CHECK(pod->spec()->host_ipc());
  CHECK(pod->spec()->volumes()->Get(0)->aws_elastic_block_store()->volume_id()->str() == "vol-1");
  CHECK(pod->status()->pod_ip()->str() == "10.244.0.5");
  Value out = ToValue(*obj.kind, obj.bytes);
  CHECK(out.Find("status")->Find("podIPs")->items()[0].Find("ip")->string_value() == "10.244.0.5");
}

}  // namespace
}  // namespace podflow::model

#include "model/objects.h"

namespace podflow::model {
namespace {

TEST_CASE("Objects have kube-apiserver's registry keys") {
  CHECK(ObjectKey(Kind("Pod"), "", "nginx") == "/registry/pods/default/nginx");
  CHECK(ObjectKey(Kind("Pod"), "team-a", "web") == "/registry/pods/team-a/web");
  CHECK(ObjectKey(Kind("Node"), "ignored", "node-1") == "/registry/nodes/node-1");
  CHECK(KindPrefix(Kind("Service")) == "/registry/services/");
  CHECK(KindPrefix(Kind("Service"), "default") == "/registry/services/default/");
  // And a namespaced key splits back into its namespace and name.
  std::string_view ns, name;
  REQUIRE(SplitNamespacedKey("/registry/configmaps/team-a/game-config", &ns, &name));
  CHECK(ns == "team-a");
  CHECK(name == "game-config");
  CHECK_FALSE(SplitNamespacedKey("/registry/nodes/node-1", &ns, &name));
  CHECK_FALSE(SplitNamespacedKey("/registry/pods/default/", &ns, &name));
  CHECK_FALSE(SplitNamespacedKey("/registry/pods//x", &ns, &name));
  CHECK_FALSE(SplitNamespacedKey("/other/pods/default/x", &ns, &name));
  CHECK_FALSE(SplitNamespacedKey("/registry/pods/a/b/c", &ns, &name));
}

TEST_CASE("Objects unpack to their native form and pack back") {
  auto docs = DecodeManifests("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                              "spec: {containers: [{name: a, image: nginx}]}\n");
  REQUIRE(docs.ok());
  auto pod = Unpack<api::Pod>((*docs)[0].object.bytes);
  pod->spec->node_name = "node-2";
  std::string bytes = Pack(*pod);
  REQUIRE(VerifyObject(Kind("Pod"), bytes).ok());
  CHECK(flatbuffers::GetRoot<api::Pod>(bytes.data())->spec()->node_name()->str() == "node-2");
}

}  // namespace
}  // namespace podflow::model
