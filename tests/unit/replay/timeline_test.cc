// A pod's timeline: which revisions, by which stage, which fields changed,
// time since creation; DiffValues on its own.
#include <tuple>

#include <yaml-cpp/yaml.h>

#include "replay/replay.h"
#include "replay_test_util.h"

namespace podflow::replay {
namespace {

using testing::HistoryLog;
using testing::kEventKey;
using testing::kNginxKey;

model::Value Yaml(const std::string& text) { return model::FromYaml(YAML::Load(text)); }

TEST_CASE("a pod's timeline lists its revisions, writers, changed fields and times") {
  HistoryLog h;
  auto t = BuildPodTimeline(*h.log, "default", "nginx");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  CHECK(t->key == kNginxKey);
  using Row = std::tuple<int64_t, std::string, EventType, bool, std::optional<int64_t>>;
  const std::vector<Row> want = {
      {3, "admission", EventType::kAdded, false, 0},
      {4, "binding", EventType::kModified, false, 12},
      {5, "scheduling", EventType::kAdded, true, 13},
      {6, "status", EventType::kModified, false, 40},
  };
  REQUIRE(t->entries.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& [rev, writer, type, is_event, since] = want[i];
    INFO("entry " << i);
    CHECK(t->entries[i].revision == Revision(rev));
    CHECK(t->entries[i].writer == writer);
    CHECK(t->entries[i].type == type);
    CHECK(t->entries[i].is_event == is_event);
    CHECK(t->entries[i].since_creation_ms == since);
  }
  CHECK(t->entries[0].summary == "phase=Pending node=<none>");
  CHECK(t->entries[0].changes.empty());
  CHECK(t->entries[1].changes ==
        std::vector<FieldChange>{{"spec.nodeName", "<none>", "\"node-2\""}});
  CHECK(t->entries[2].key == kEventKey);
  CHECK(t->entries[2].summary == "Normal Scheduled: Successfully assigned default/nginx to node-2");
  CHECK(t->entries[3].changes ==
        std::vector<FieldChange>{{"status.phase", "\"Pending\"", "\"Running\""},
                                 {"status.podIP", "<none>", "\"10.244.1.5\""}});
}

TEST_CASE("a deleted pod's timeline ends with the delete; a pod nothing mentions is NotFound") {
  HistoryLog h;
  auto web = BuildPodTimeline(*h.log, "default", "web");
  REQUIRE(web.ok());
  REQUIRE(web->entries.size() == 2);
  CHECK(web->entries[1].type == EventType::kDeleted);
  CHECK(web->entries[1].writer == "gc");
  CHECK(web->entries[1].since_creation_ms == 10);
  auto missing = BuildPodTimeline(*h.log, "default", "nope");
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(BuildPodTimeline(*h.log, "other", "nginx").status().code() == Code::kNotFound);
}

TEST_CASE("after compaction the timeline diffs against the oldest version kept") {
  HistoryLog h;
  REQUIRE(h.log->Compact(Revision(4)).ok());
  auto t = BuildPodTimeline(*h.log, "default", "nginx");
  REQUIRE(t.ok());
  REQUIRE(t->entries.size() == 2);  // 5 (event), 6 (status)
  CHECK(t->entries[1].revision == Revision(6));
  CHECK(t->entries[1].changes.size() == 2);
  CHECK(t->entries[1].changes[0].path == "status.phase");
}

TEST_CASE("DiffValues names the changed field paths") {
  struct Case {
    std::string before, after;
    std::vector<FieldChange> want;
  };
  const std::vector<Case> cases = {
      {"{a: 1}", "{a: 1}", {}},
      {"{a: 1}", "{a: 2}", {{"a", "1", "2"}}},
      {"{spec: {}}", "{spec: {nodeName: n1}}", {{"spec.nodeName", "<none>", "\"n1\""}}},
      {"{spec: {nodeName: n1}}", "{}", {{"spec.nodeName", "\"n1\"", "<none>"}}},
      // A new object is listed leaf by leaf.
      {"{}",
       "{status: {phase: Running, podIP: 1.2.3.4}}",
       {{"status.phase", "<none>", "\"Running\""}, {"status.podIP", "<none>", "\"1.2.3.4\""}}},
      // Arrays of objects with a type or a name are matched by it.
      {"{c: [{type: Ready, status: 'False'}, {type: Init, status: 'True'}]}",
       "{c: [{type: Init, status: 'True'}, {type: Ready, status: 'True'}]}",
       {{"c[type=Ready].status", "\"False\"", "\"True\""}}},
      {"{cs: [{name: a, image: x}]}",
       "{cs: [{name: a, image: v2}, {name: b, image: z}]}",
       {{"cs[name=a].image", "\"x\"", "\"v2\""},
        {"cs[name=b].name", "<none>", "\"b\""},
        {"cs[name=b].image", "<none>", "\"z\""}}},
      // Other arrays by index.
      {"{args: [a, b]}",
       "{args: [a, c, d]}",
       {{"args[1]", "\"b\"", "\"c\""}, {"args[2]", "<none>", "\"d\""}}},
      {"{x: {y: 1}}", "{x: 3}", {{"x", "{\"y\":1}", "3"}}},
  };
  for (const Case& c : cases) {
    INFO(c.before << " -> " << c.after);
    CHECK(DiffValues(Yaml(c.before), Yaml(c.after)) == c.want);
  }
}

}  // namespace
}  // namespace podflow::replay
