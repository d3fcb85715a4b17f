// Round trip over the manifest corpus (config/manifests and
// tests/data/manifests): every document decodes, verifies, prints back as
// the document it was (objects compared member by member, in any order), and
// its YAML and JSON printouts decode to the very same FlatBuffer bytes.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "model/codec.h"
#include "model/kind_types.h"

namespace podflow::model {
namespace {

namespace fs = std::filesystem;

std::string Describe(const Value& v) {
  std::string s = ToJson(v);
  return s.size() > 80 ? s.substr(0, 80) + "..." : s;
}

// The first difference between `want` and `got`, as "path: what", or "" when
// they are equal. Objects are compared by member name (order does not
// matter, a member missing on either side is a difference); arrays item by
// item, in order; scalars by kind and value (80 and "80" differ).
std::string FirstDifference(const Value& want, const Value& got, const std::string& path = "") {
  if (want.kind() != got.kind()) {
    return path + ": want " + Describe(want) + ", got " + Describe(got);
  }
  if (want.kind() == Value::Kind::kObject) {
    for (const auto& [key, member] : want.members()) {
      const Value* other = got.Find(key);
      if (other == nullptr) return path + "." + key + ": missing (want " + Describe(member) + ")";
      std::string diff = FirstDifference(member, *other, path + "." + key);
      if (!diff.empty()) return diff;
    }
    for (const auto& [key, member] : got.members()) {
      if (want.Find(key) == nullptr) return path + "." + key + ": unexpected " + Describe(member);
    }
    if (want.members().size() != got.members().size()) return path + ": repeated member";
    return "";
  }
  if (want.kind() == Value::Kind::kArray) {
    if (want.items().size() != got.items().size()) {
      return path + ": want " + std::to_string(want.items().size()) + " items, got " +
             std::to_string(got.items().size());
    }
    for (size_t i = 0; i < want.items().size(); ++i) {
      std::string diff = FirstDifference(want.items()[i], got.items()[i], path + "[" + std::to_string(i) + "]");
      if (!diff.empty()) return diff;
    }
    return "";
  }
  if (!(want == got)) return path + ": want " + Describe(want) + ", got " + Describe(got);
  return "";
}

std::vector<fs::path> CorpusFiles(const std::string& dir) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(PODFLOW_SOURCE_DIR) / dir)) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> AllCorpusFiles() {
  std::vector<fs::path> files = CorpusFiles("config/manifests");
  for (const fs::path& p : CorpusFiles("tests/data/manifests")) files.push_back(p);
  return files;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The documents of a manifest stream as written, List items expanded, in the
// order DecodeManifests returns them.
std::vector<Value> SourceDocuments(const std::string& text) {
  std::vector<Value> out;
  for (const YAML::Node& node : YAML::LoadAll(text)) {
    if (node.IsNull()) continue;
    Value doc = FromYaml(node);
    const Value* kind = doc.Find("kind");
    const Value* items = doc.Find("items");
    if (kind != nullptr && kind->kind() == Value::Kind::kString && kind->string_value() == "List" &&
        items != nullptr) {
      for (const Value& item : items->items()) out.push_back(item);
    } else {
      out.push_back(std::move(doc));
    }
  }
  return out;
}

// Decodes `text`, which must hold exactly one accepted document.
Result<Object> DecodeSingle(const std::string& text) {
  Result<std::vector<Decoded>> docs = DecodeManifests(text);
  if (!docs.ok()) return docs.status();
  if (docs->size() != 1) return Status::Invalid(std::to_string(docs->size()) + " documents");
  if (!(*docs)[0].status.ok()) return (*docs)[0].status;
  return (*docs)[0].object;
}

TEST_CASE("The corpus exists and covers every kind") {
  std::vector<fs::path> examples = CorpusFiles("config/manifests");
  std::vector<fs::path> edge_cases = CorpusFiles("tests/data/manifests");
  CHECK(examples.size() >= 12);
  CHECK(edge_cases.size() >= 4);
  CHECK(fs::exists(fs::path(PODFLOW_SOURCE_DIR) / "config/manifests/nginx-pod.yaml"));

  std::set<std::string> seen;
  for (const fs::path& path : AllCorpusFiles()) {
    Result<std::vector<Decoded>> docs = DecodeManifests(ReadFile(path));
    REQUIRE(docs.ok());
    for (const Decoded& d : *docs) {
      if (d.object.kind != nullptr) seen.insert(std::string(d.object.kind->kind));
    }
  }
  for (const KindInfo& kind : Kinds()) {
    INFO("kind " << kind.kind << " has no example in the corpus");
    CHECK(seen.count(std::string(kind.kind)) == 1);
  }
}

TEST_CASE("Every kind has its C++ root table, and kubectl's names find it") {
  for (const KindInfo& kind : Kinds()) {
    INFO("kind " << kind.kind);
    std::string_view visited;
    CHECK(VisitKind(kind, [&]<typename T>() { visited = KindNameOf<T>::value; }));
    CHECK(visited == kind.kind);
    CHECK(FindResource(kind.resource) == &kind);
    CHECK(FindResource(kind.kind) == &kind);
    CHECK(FindKind(kind.api_version, kind.kind) == &kind);
  }
  CHECK(FindResource("deploy")->kind == "Deployment");
  CHECK(FindResource("deployments.apps")->kind == "Deployment");
  CHECK(FindResource("deployments.batch") == nullptr);
  CHECK(FindResource("cm")->kind == "ConfigMap");
  CHECK(FindResource("clusterrolebinding")->kind == "ClusterRoleBinding");
  CHECK(FindResource("horizontalpodautoscalers") == nullptr);
  CHECK(ApiGroup(*FindResource("pods")).empty());
  CHECK(ApiGroup(*FindResource("roles")) == "rbac.authorization.k8s.io");
}

TEST_CASE("Every corpus document round-trips exactly") {
  size_t documents = 0;
  for (const fs::path& path : AllCorpusFiles()) {
    std::string name = path.lexically_relative(PODFLOW_SOURCE_DIR).string();
    std::string text = ReadFile(path);
    Result<std::vector<Decoded>> docs = DecodeManifests(text);
    INFO(name);
    REQUIRE(docs.ok());
    std::vector<Value> sources = SourceDocuments(text);
    REQUIRE(docs->size() == sources.size());
    for (size_t i = 0; i < docs->size(); ++i) {
      ++documents;
      const Decoded& d = (*docs)[i];
      INFO(name << ", document " << i << " (" << d.object.name << ")");
      INFO(d.status.ToString());
      REQUIRE(d.status.ok());
      REQUIRE(d.object.kind != nullptr);
      REQUIRE(VerifyObject(*d.object.kind, d.object.bytes).ok());

      Value printed = ToValue(*d.object.kind, d.object.bytes);
      CHECK(FirstDifference(sources[i], printed) == "");

      std::string yaml = ToYaml(*d.object.kind, d.object.bytes);
      INFO("as YAML:\n" << yaml);
      Result<Object> from_yaml = DecodeSingle(yaml);
      REQUIRE(from_yaml.ok());
      CHECK(from_yaml->kind == d.object.kind);
      CHECK(from_yaml->bytes == d.object.bytes);

      std::string json = ToJson(*d.object.kind, d.object.bytes);
      INFO("as JSON:\n" << json);
      Result<Object> from_json = DecodeSingle(json);
      REQUIRE(from_json.ok());
      CHECK(from_json->kind == d.object.kind);
      CHECK(from_json->bytes == d.object.bytes);
    }
  }
  CHECK(documents >= 25);
}

TEST_CASE("The round-trip comparison is strict") {
  auto doc = [](const char* text) { return FromYaml(YAML::Load(text)); };
  Value pod = doc("{kind: Pod, spec: {containers: [{name: a, ports: [{containerPort: 80}]}]}}");

  SECTION("member order does not matter") {
    CHECK(FirstDifference(pod, doc("{spec: {containers: [{ports: [{containerPort: 80}], name: a}]}, kind: Pod}")) == "");
  }
  SECTION("a dropped field is a difference") {
    CHECK(FirstDifference(pod, doc("{kind: Pod, spec: {containers: [{name: a}]}}")) ==
          ".spec.containers[0].ports: missing (want [{\"containerPort\":80}])");
  }
  SECTION("an added field is a difference") {
    CHECK(FirstDifference(doc("{kind: Pod}"), doc("{kind: Pod, spec: {}}")) == ".spec: unexpected {}");
  }
  SECTION("a changed value or scalar type is a difference") {
    CHECK(FirstDifference(pod, doc("{kind: Pod, spec: {containers: [{name: b, ports: [{containerPort: 80}]}]}}")) != "");
    CHECK(FirstDifference(pod, doc("{kind: Pod, spec: {containers: [{name: a, ports: [{containerPort: \"80\"}]}]}}")) != "");
  }
  SECTION("array order matters") {
    CHECK(FirstDifference(doc("[a, b]"), doc("[b, a]")) != "");
  }
  SECTION("two different corpus documents differ") {
    std::vector<Value> services = SourceDocuments(
        ReadFile(fs::path(PODFLOW_SOURCE_DIR) / "config/manifests/services.yaml"));
    REQUIRE(services.size() == 2);
    CHECK(FirstDifference(services[0], services[1]) != "");
  }
}

TEST_CASE("Output drops plain zero values and empty lists and canonicalizes quantities") {
  Result<Object> obj = DecodeSingle(R"(apiVersion: v1
kind: Pod
metadata: {name: p, labels: {}, finalizers: []}
spec:
  hostNetwork: false
  terminationGracePeriodSeconds: 0
  containers:
  - name: a
    image: b
    stdin: false
    ports: []
    resources: {requests: {cpu: "0.5", memory: 1024Mi}, limits: {cpu: 2000m, memory: 1048576}}
)");
  REQUIRE(obj.ok());
  Value want = FromYaml(YAML::Load(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: a
    image: b
    resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: "2", memory: "1048576"}}
)"));
  CHECK(FirstDifference(want, ToValue(*obj->kind, obj->bytes)) == "");
}

TEST_CASE("The bytes do not depend on the order of the document's keys") {
  Result<Object> ordered = DecodeSingle(R"(apiVersion: v1
kind: Service
metadata: {name: s, labels: {a: "1", b: "2"}}
spec: {selector: {app: web}, ports: [{name: http, port: 80, targetPort: http}], type: NodePort}
)");
  Result<Object> shuffled = DecodeSingle(R"(spec: {type: NodePort, ports: [{targetPort: http, port: 80, name: http}], selector: {app: web}}
metadata: {labels: {b: "2", a: "1"}, name: s}
kind: Service
apiVersion: v1
)");
  REQUIRE(ordered.ok());
  REQUIRE(shuffled.ok());
  CHECK(ordered->bytes == shuffled->bytes);
}

}  // namespace
}  // namespace podflow::model
