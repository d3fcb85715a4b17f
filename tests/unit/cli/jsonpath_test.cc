// kubectl's JSONPath templates, as the docs' cheat sheet uses them.
#include "cli/jsonpath.h"

#include <catch2/catch.hpp>

namespace podflow::cli {
namespace {

model::Value Yaml(const std::string& text) {
  Result<std::vector<model::Value>> docs = model::ParseYaml(text);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  return (*docs)[0];
}

std::string Run(const std::string& tmpl, const model::Value& root) {
  Result<JsonPath> path = JsonPath::Parse(tmpl);
  INFO(tmpl);
  REQUIRE(path.ok());
  Result<std::string> out = path->Execute(root);
  REQUIRE(out.ok());
  return *out;
}

const char* const kList = R"(apiVersion: v1
kind: List
items:
- metadata:
    name: web-1
    labels: {app.kubernetes.io/name: web, tier: front}
  spec:
    containers: [{name: nginx, image: "nginx:1.14.2"}, {name: log, image: busybox}]
  status:
    phase: Running
    podIP: 10.244.0.5
    conditions: [{type: Initialized, status: "True"}, {type: Ready, status: "False"}]
- metadata:
    name: web-2
  spec:
    containers: [{name: nginx, image: "nginx:1.16.1"}]
  status:
    phase: Pending
    restartCount: 3
)";

TEST_CASE("JSONPath: fields, wildcards, indexes and slices", "[cli][jsonpath]") {
  const model::Value list = Yaml(kList);
  CHECK(Run("{.items[0].status.podIP}", list) == "10.244.0.5");
  CHECK(Run("{.items[*].metadata.name}", list) == "web-1 web-2");
  CHECK(Run("{$.items[-1].metadata.name}", list) == "web-2");
  CHECK(Run("{.items[0].spec.containers[0:2].name}", list) == "nginx log");
  CHECK(Run("{.items[0].spec.containers[1,0].image}", list) == "busybox nginx:1.14.2");
  CHECK(Run("{..image}", list) == "nginx:1.14.2 busybox nginx:1.16.1");
  CHECK(Run("{.items[0].metadata.labels.app\\.kubernetes\\.io/name}", list) == "web");
  CHECK(Run("{.items[0].metadata.labels['app.kubernetes.io/name']}", list) == "web");
  // Numbers print as numbers, objects as JSON with sorted keys, a missing
  // field as nothing.
  CHECK(Run("{.items[1].status.restartCount}", list) == "3");
  CHECK(Run("{.items[0].metadata.labels}", list) == R"({"app.kubernetes.io/name":"web","tier":"front"})");
  CHECK(Run("{.items[1].status.podIP}", list) == "");
  CHECK(Run("name: {.items[0].metadata.name}!", list) == "name: web-1!");
}

TEST_CASE("JSONPath: filters and range blocks", "[cli][jsonpath]") {
  const model::Value list = Yaml(kList);
  CHECK(Run("{.items[0].status.conditions[?(@.type==\"Ready\")].status}", list) == "False");
  CHECK(Run("{.items[?(@.status.phase!='Running')].metadata.name}", list) == "web-2");
  CHECK(Run("{.items[?(@.status.restartCount>2)].metadata.name}", list) == "web-2");
  CHECK(Run("{.items[?(@.status.podIP)].metadata.name}", list) == "web-1");
  CHECK(Run("{range .items[*]}{.metadata.name}{\"\\t\"}{.status.phase}{\"\\n\"}{end}", list) ==
        "web-1\tRunning\nweb-2\tPending\n");
  CHECK(Run("{range .items[*]}[{range .spec.containers[*]}{.name},{end}]{end}", list) == "[nginx,log,][nginx,]");
  // A range runs once per value found: over `.items` itself, once; `$` is
  // the current object inside it.
  CHECK(Run("{range .items}{.[1].metadata.name}{end}", list) == "web-2");
  CHECK(Run("{range .items[*]}{$.metadata.name};{end}", list) == "web-1;web-2;");
  // A huge slice step ends the slice.
  CHECK(Run("{.items[0:2:9223372036854775807].metadata.name}", list) == "web-1");
}

TEST_CASE("JSONPath: what kubectl refuses to parse", "[cli][jsonpath]") {
  Result<JsonPath> unclosed = JsonPath::Parse("{.items[0}");
  REQUIRE_FALSE(unclosed.ok());
  CHECK(unclosed.status().message() == "error parsing jsonpath {.items[0}, unterminated array");
  CHECK_FALSE(JsonPath::Parse("{range .items[*]}{.metadata.name}").ok());
  CHECK_FALSE(JsonPath::Parse("{.metadata.name").ok());
  CHECK_FALSE(JsonPath::Parse("{end}").ok());
}

}  // namespace
}  // namespace podflow::cli
