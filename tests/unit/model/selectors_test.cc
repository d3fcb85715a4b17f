// kubectl's -l and --field-selector: parsing, and matching stored objects.
#include <catch2/catch.hpp>

#include "model/codec.h"
#include "model/fields.h"
#include "model/labels.h"
#include "model/objects.h"

namespace podflow::model {
namespace {

Value AsValue(std::string_view manifest) {
  Result<std::vector<Decoded>> docs = DecodeManifests(manifest);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  REQUIRE((*docs)[0].status.ok());
  return ToValue(*(*docs)[0].object.kind, (*docs)[0].object.bytes);
}

TEST_CASE("Label selectors parse as kubectl's -l reads them") {
  const Labels web = {{"app", "web"}, {"tier", "frontend"}};
  const Labels db = {{"app", "db"}};
  struct Case {
    std::string text;
    bool web;
    bool db;
  };
  const std::vector<Case> cases = {
      {"", true, true},
      {"app=web", true, false},
      {"app==web", true, false},
      {"app!=web", false, true},
      {"app in (web, db)", true, true},
      {"app notin (web)", false, true},
      {"tier", true, false},
      {"!tier", false, true},
      {"app=web,tier=frontend", true, false},
      {" app = db ", false, true},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    Result<LabelSelector> s = ParseLabelSelector(c.text);
    REQUIRE(s.ok());
    CHECK(s->Matches(web) == c.web);
    CHECK(s->Matches(db) == c.db);
  }
  CHECK(ParseLabelSelector("app=web,tier in (a,b),!gpu")->String() == "app=web,!gpu,tier in (a,b)");
  for (std::string_view bad : {"app=", "=web", "app in web", "app in (a", "a b", "app=web,", "app=we b"}) {
    INFO(bad);
    Result<LabelSelector> s = ParseLabelSelector(bad);
    if (bad == "app=") {
      CHECK(s.ok());  // an empty value is a value
      continue;
    }
    CHECK_FALSE(s.ok());
  }
}

TEST_CASE("Field selectors select by the fields each kind supports") {
  Value event = AsValue(R"(apiVersion: v1
kind: Event
metadata: {name: nginx-pod.181a9c3b2f7e1000, namespace: default}
involvedObject: {kind: Pod, name: nginx-pod, namespace: default}
reason: Scheduled
source: {component: default-scheduler}
type: Normal
)");
  auto matches = [&](const Value& object, std::string_view kind, std::string_view text) {
    Result<FieldSelector> s = FieldSelector::Parse(Kind(kind), text);
    REQUIRE(s.ok());
    return s->Matches(object);
  };
  CHECK(matches(event, "Event", "involvedObject.name=nginx-pod"));
  CHECK_FALSE(matches(event, "Event", "involvedObject.name=other"));
  CHECK(matches(event, "Event", "involvedObject.kind=Pod,reason=Scheduled,type=Normal"));
  CHECK(matches(event, "Event", "type!=Warning"));
  CHECK(matches(event, "Event", "source=default-scheduler"));
  CHECK(matches(event, "Event", "metadata.namespace=default"));

  Value pod = AsValue(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {nodeName: node-1, containers: [{name: c, image: nginx}]}
status: {phase: Running}
)");
  CHECK(matches(pod, "Pod", "spec.nodeName=node-1,status.phase=Running"));
  CHECK(matches(pod, "Pod", "status.phase!=Pending"));
  CHECK(matches(pod, "Pod", "spec.hostNetwork=false"));  // absent reads as false
  CHECK_FALSE(matches(pod, "Pod", "metadata.name=q"));

  Result<FieldSelector> unsupported = FieldSelector::Parse(Kind("Pod"), "reason=Scheduled");
  REQUIRE_FALSE(unsupported.ok());
  CHECK(unsupported.status().message() == "field label not supported: reason");
  CHECK_FALSE(FieldSelector::Parse(Kind("Pod"), "metadata.name").ok());
}

}  // namespace
}  // namespace podflow::model
