#include <catch2/catch.hpp>

#include "model/pod_template.h"

namespace podflow::model {
namespace {

Value Parse(std::string_view yaml) {
  Result<std::vector<Value>> docs = ParseYaml(yaml);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  return (*docs)[0];
}

TEST_CASE("a workload's pod template compared without its pod-template-hash") {
  const Value deployment = Parse(R"(kind: Deployment
spec:
  replicas: 3
  template:
    metadata: {labels: {app: nginx}, annotations: {a: b}}
    spec: {containers: [{name: nginx, image: "nginx:1.14.2"}]}
)");
  const Value replica_set = Parse(R"(kind: ReplicaSet
spec:
  replicas: 1
  template:
    metadata: {labels: {app: nginx, pod-template-hash: 5d59d67564}, annotations: {a: b}}
    spec: {containers: [{name: nginx, image: "nginx:1.14.2"}]}
)");
  CHECK(PodTemplateWithoutHash(deployment) == PodTemplateWithoutHash(replica_set));
  const Value* labels = PodTemplateWithoutHash(replica_set).Find("metadata")->Find("labels");
  REQUIRE(labels != nullptr);
  CHECK(labels->members().size() == 1);
  // Another image, or another label, is another template.
  const Value other = Parse(R"(spec:
  template:
    metadata: {labels: {app: nginx, pod-template-hash: x}, annotations: {a: b}}
    spec: {containers: [{name: nginx, image: "nginx:1.16.1"}]}
)");
  CHECK_FALSE(PodTemplateWithoutHash(deployment) == PodTemplateWithoutHash(other));
  const Value relabeled = Parse(R"(spec:
  template:
    metadata: {labels: {app: web}, annotations: {a: b}}
    spec: {containers: [{name: nginx, image: "nginx:1.14.2"}]}
)");
  CHECK_FALSE(PodTemplateWithoutHash(deployment) == PodTemplateWithoutHash(relabeled));
  // No template: null.
  CHECK(PodTemplateWithoutHash(Parse("spec: {replicas: 1}\n")).kind() == Value::Kind::kNull);
  CHECK(PodTemplateWithoutHash(Parse("kind: Pod\n")).kind() == Value::Kind::kNull);
}

}  // namespace
}  // namespace podflow::model
