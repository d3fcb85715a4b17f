// Patches: RFC 7386 merge patch, RFC 6902 JSON patch, strategic merge patch
// with the schema's merge keys, and kubectl apply's three-way patch.
#include <catch2/catch.hpp>

#include "model/objects.h"
#include "model/patch.h"

namespace podflow::model {
namespace {

Value Json(std::string_view text) {
  Result<std::vector<Value>> docs = ParseYaml(text);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  return (*docs)[0];
}

std::string Apply(PatchType type, std::string_view kind, std::string_view target, std::string_view patch) {
  Result<Value> out = ApplyPatch(type, Kind(kind), Json(target), Json(patch));
  if (!out.ok()) return "error: " + out.status().message();
  return ToJson(*out);
}

TEST_CASE("JSON merge patch follows RFC 7386's examples") {
  // RFC 7386 appendix A, a selection.
  const std::vector<std::array<std::string_view, 3>> cases = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const auto& [target, patch, want] : cases) {
    INFO(target << " + " << patch);
    CHECK(Apply(PatchType::kMerge, "Pod", target, patch) == want);
  }
  // Lists are replaced whole, containers included: no merge keys here.
  CHECK(Apply(PatchType::kMerge, "Pod", R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
              R"({"spec":{"containers":[{"name":"b","image":"x"}]}})") ==
        R"({"spec":{"containers":[{"name":"b","image":"x"}]}})");
}

TEST_CASE("JSON patch applies RFC 6902's operations in order") {
  const std::string target = R"({"foo":"bar","baz":["a","c"],"obj":{"x":1}})";
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"add","path":"/baz/1","value":"b"}])") ==
        R"({"foo":"bar","baz":["a","b","c"],"obj":{"x":1}})");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"add","path":"/baz/-","value":"d"}])") ==
        R"({"foo":"bar","baz":["a","c","d"],"obj":{"x":1}})");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"remove","path":"/foo"}])") ==
        R"({"baz":["a","c"],"obj":{"x":1}})");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"replace","path":"/obj/x","value":2}])") ==
        R"({"foo":"bar","baz":["a","c"],"obj":{"x":2}})");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"move","from":"/foo","path":"/obj/y"}])") ==
        R"({"baz":["a","c"],"obj":{"x":1,"y":"bar"}})");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"copy","from":"/baz/0","path":"/first"}])") ==
        R"({"foo":"bar","baz":["a","c"],"obj":{"x":1},"first":"a"})");
  // "~1" is "/" and "~0" is "~" in a pointer.
  CHECK(Apply(PatchType::kJson, "Pod", R"({"a/b":{"c~d":1}})", R"([{"op":"replace","path":"/a~1b/c~0d","value":2}])") ==
        R"({"a/b":{"c~d":2}})");
  // A failed test stops the whole patch; nothing before it survives.
  CHECK(Apply(PatchType::kJson, "Pod", target,
              R"([{"op":"remove","path":"/foo"},{"op":"test","path":"/obj/x","value":2}])") ==
        "error: testing value /obj/x failed: test failed");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"test","path":"/obj/x","value":1}])") == ToJson(Json(target)));
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"remove","path":"/nope"}])") ==
        "error: remove operation does not apply: doc is missing key: /nope: missing value");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"add","path":"/no/such","value":1}])") ==
        "error: add operation does not apply: doc is missing path: \"/no/such\": missing value");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"add","path":"/baz/5","value":1}])") ==
        "error: add operation does not apply: index out of range: /baz/5");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"frob","path":"/foo"}])") == "error: Unexpected kind: frob");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"([{"op":"remove"}])") == "error: operation missing path field");
  // "test" compares as JSON does: members in any order, numbers by value.
  CHECK(Apply(PatchType::kJson, "Pod", R"({"o":{"a":1,"b":2.0}})", R"([{"op":"test","path":"/o","value":{"b":2,"a":1.0}}])") ==
        R"({"o":{"a":1,"b":2}})");
  CHECK(Apply(PatchType::kJson, "Pod", target, R"({"op":"add"})").starts_with("error: json: cannot unmarshal object"));
}

TEST_CASE("Strategic merge patch merges keyed lists element by element") {
  const std::string pod = R"({"spec":{"containers":[
      {"name":"web","image":"nginx:1.25","ports":[{"containerPort":80}],
       "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},
      {"name":"log","image":"busybox"}],
    "tolerations":[{"key":"a","operator":"Exists"}]},
    "metadata":{"finalizers":["x"],"labels":{"app":"web","tier":"front"}}})";
  SECTION("a container is changed by name, the others kept") {
    CHECK(Apply(PatchType::kStrategic, "Pod", pod, R"({"spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}})") ==
          ToJson(Json(R"({"spec":{"containers":[
      {"name":"web","image":"nginx:1.26","ports":[{"containerPort":80}],
       "env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},
      {"name":"log","image":"busybox"}],
    "tolerations":[{"key":"a","operator":"Exists"}]},
    "metadata":{"finalizers":["x"],"labels":{"app":"web","tier":"front"}}})")));
  }
  SECTION("a new element is appended; $patch: delete removes one; nested keyed lists merge too") {
    Result<Value> out = ApplyPatch(
        PatchType::kStrategic, Kind("Pod"), Json(pod),
        Json(R"({"spec":{"containers":[{"name":"log","$patch":"delete"},{"name":"side","image":"envoy"},
                 {"name":"web","env":[{"name":"B","value":"3"},{"name":"C","value":"4"}],"ports":[{"containerPort":443}]}]}})"));
    REQUIRE(out.ok());
    const Value& containers = *out->Find("spec")->Find("containers");
    REQUIRE(containers.items().size() == 2);
    CHECK(containers.items()[0].Find("name")->string_value() == "web");
    CHECK(ToJson(*containers.items()[0].Find("env")) ==
          R"([{"name":"A","value":"1"},{"name":"B","value":"3"},{"name":"C","value":"4"}])");
    CHECK(ToJson(*containers.items()[0].Find("ports")) == R"([{"containerPort":80},{"containerPort":443}])");
    CHECK(containers.items()[1].Find("name")->string_value() == "side");
  }
  SECTION("a list without a merge key is replaced, as tolerations are") {
    Result<Value> out = ApplyPatch(PatchType::kStrategic, Kind("Pod"), Json(pod),
                                   Json(R"({"spec":{"tolerations":[{"key":"b","operator":"Exists"}]}})"));
    REQUIRE(out.ok());
    CHECK(ToJson(*out->Find("spec")->Find("tolerations")) == R"([{"key":"b","operator":"Exists"}])");
  }
  SECTION("maps merge; null deletes; finalizers merge as a set") {
    Result<Value> out = ApplyPatch(
        PatchType::kStrategic, Kind("Pod"), Json(pod),
        Json(R"({"metadata":{"labels":{"tier":null,"env":"prod"},"finalizers":["y","x"]}})"));
    REQUIRE(out.ok());
    CHECK(ToJson(*out->Find("metadata")) == R"({"finalizers":["x","y"],"labels":{"app":"web","env":"prod"}})");
    out = ApplyPatch(PatchType::kStrategic, Kind("Pod"), *out,
                     Json(R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["x"]}})"));
    REQUIRE(out.ok());
    CHECK(ToJson(*out->Find("metadata")->Find("finalizers")) == R"(["y"])");
  }
  SECTION("$patch: replace replaces a map or a keyed list") {
    Result<Value> out = ApplyPatch(PatchType::kStrategic, Kind("Pod"), Json(pod),
                                   Json(R"({"metadata":{"labels":{"only":"this","$patch":"replace"}},
                                           "spec":{"containers":[{"$patch":"replace"},{"name":"solo","image":"x"}]}})"));
    REQUIRE(out.ok());
    CHECK(ToJson(*out->Find("metadata")->Find("labels")) == R"({"only":"this"})");
    CHECK(ToJson(*out->Find("spec")->Find("containers")) == R"([{"name":"solo","image":"x"}])");
  }
  SECTION("$setElementOrder orders a keyed list") {
    Result<Value> out = ApplyPatch(PatchType::kStrategic, Kind("Pod"), Json(pod),
                                   Json(R"({"spec":{"$setElementOrder/containers":[{"name":"log"},{"name":"web"}]}})"));
    REQUIRE(out.ok());
    CHECK(out->Find("spec")->Find("containers")->items()[0].Find("name")->string_value() == "log");
  }
  SECTION("a keyed element without its key, and unknown directives, are refused") {
    CHECK(Apply(PatchType::kStrategic, "Pod", pod, R"({"spec":{"containers":[{"image":"x"}]}})") ==
          R"(error: map: {"image":"x"} does not contain declared merge key: name)");
    CHECK(Apply(PatchType::kStrategic, "Pod", pod, R"({"spec":{"$patch":"frob"}})") ==
          "error: Unknown patch directive frob");
  }
  SECTION("a Service's ports merge on port; a Deployment's template containers on name") {
    CHECK(Apply(PatchType::kStrategic, "Service", R"({"spec":{"ports":[{"port":80,"name":"http"}]}})",
                R"({"spec":{"ports":[{"port":443,"name":"https"}]}})") ==
          R"({"spec":{"ports":[{"port":80,"name":"http"},{"port":443,"name":"https"}]}})");
    CHECK(Apply(PatchType::kStrategic, "Deployment",
                R"({"spec":{"template":{"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"1"}]}}}})",
                R"({"spec":{"template":{"spec":{"containers":[{"name":"b","image":"2"}]}}}})") ==
          R"({"spec":{"template":{"spec":{"containers":[{"name":"a","image":"1"},{"name":"b","image":"2"}]}}}})");
  }
}

TEST_CASE("A patch of many members merges every one of them, and keyed lists of many elements too") {
  Value labels = Value::Object();
  Value containers = Value::Array();
  for (int i = 0; i < 20000; ++i) {
    labels.Set("k" + std::to_string(i), Value::String(std::to_string(i)));
    Value c = Value::Object();
    c.Set("name", Value::String("c" + std::to_string(i)));
    containers.Append(std::move(c));
  }
  Value meta = Value::Object();
  meta.Set("labels", std::move(labels));
  Value spec = Value::Object();
  spec.Set("containers", std::move(containers));
  Value patch = Value::Object();
  patch.Set("metadata", std::move(meta));
  patch.Set("spec", std::move(spec));
  const Value target = Json(R"({"metadata":{"labels":{"k5":"old","keep":"me"}},"spec":{"containers":[{"name":"c7","image":"x"}]}})");
  for (PatchType type : {PatchType::kMerge, PatchType::kStrategic}) {
    Result<Value> out = ApplyPatch(type, Kind("Pod"), target, patch);
    REQUIRE(out.ok());
    const Value& merged = *out->Find("metadata")->Find("labels");
    CHECK(merged.members().size() == 20001);
    CHECK(merged.Find("k5")->string_value() == "5");
    CHECK(merged.Find("keep")->string_value() == "me");
  }
  Result<Value> strategic = ApplyPatch(PatchType::kStrategic, Kind("Pod"), target, patch);
  const Value& list = *strategic->Find("spec")->Find("containers");
  CHECK(list.items().size() == 20000);
  CHECK(list.items()[0].Find("image")->string_value() == "x");  // c7 merged in place, first as it was
}

TEST_CASE("kubectl apply's three-way patch keeps others' fields and drops what the manifest dropped") {
  const Value original = Json(R"({"metadata":{"name":"web","labels":{"app":"web","old":"yes"}},
      "spec":{"containers":[{"name":"web","image":"nginx:1.25","env":[{"name":"A","value":"1"}]},{"name":"gone","image":"x"}]}})");
  const Value modified = Json(R"({"metadata":{"name":"web","labels":{"app":"web"}},
      "spec":{"containers":[{"name":"web","image":"nginx:1.26"}]}})");
  // Live: defaulted fields and a label set by someone else.
  const Value current = Json(R"({"metadata":{"name":"web","uid":"u","labels":{"app":"web","old":"yes","team":"a"}},
      "spec":{"containers":[{"name":"web","image":"nginx:1.25","imagePullPolicy":"IfNotPresent",
                             "env":[{"name":"A","value":"1"}]},{"name":"gone","image":"x"}],
              "restartPolicy":"Always"}})");
  const Value patch = ThreeWayMergePatch(Kind("Pod"), original, modified, current);
  Result<Value> applied = ApplyPatch(PatchType::kStrategic, Kind("Pod"), current, patch);
  REQUIRE(applied.ok());
  CHECK(ToJson(*applied) == ToJson(Json(R"({"metadata":{"name":"web","uid":"u","labels":{"app":"web","team":"a"}},
      "spec":{"containers":[{"name":"web","image":"nginx:1.26","imagePullPolicy":"IfNotPresent"}],
              "restartPolicy":"Always"}})")));
  // The same manifest again: nothing to change.
  CHECK(ToJson(ThreeWayMergePatch(Kind("Pod"), modified, modified, *applied)) == "{}");
}

TEST_CASE("Patch types are named as kubectl patch --type and by media type") {
  CHECK(*ParsePatchType("json") == PatchType::kJson);
  CHECK(*ParsePatchType("application/merge-patch+json") == PatchType::kMerge);
  CHECK(*ParsePatchType("strategic") == PatchType::kStrategic);
  CHECK(PatchMediaType(PatchType::kStrategic) == "application/strategic-merge-patch+json");
  CHECK(ParsePatchType("apply").status().message() ==
        "--type must be one of [json merge strategic], not \"apply\"");
}

}  // namespace
}  // namespace podflow::model
