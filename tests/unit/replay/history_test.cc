// ListEvents and StateAt over a recorded history: types, order, writers,
// summaries, from/to/prefix filtering, the state at several revisions.
#include <cstdlib>
#include <tuple>

#include "replay/replay.h"
#include "replay_test_util.h"

namespace podflow::replay {
namespace {

using testing::HistoryLog;
using testing::kEventKey;
using testing::kNginxKey;
using testing::kNodeKey;
using testing::kOtherKey;
using testing::kT0;
using testing::kWebKey;

std::vector<Event> MustList(EventLog& log, int64_t from, int64_t to, std::string prefix = "") {
  auto r = ListEvents(log, EventQuery{Revision(from), Revision(to), std::move(prefix)});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(*r);
}

std::vector<int64_t> Revisions(const std::vector<Event>& events) {
  std::vector<int64_t> out;
  for (const Event& e : events) out.push_back(e.revision.value());
  return out;
}

TEST_CASE("ListEvents gives every change in revision order with its type, writer and summary") {
  HistoryLog h;
  const std::vector<Event> events = MustList(*h.log, 0, 0);
  using Row = std::tuple<int64_t, EventType, std::string, std::string, std::string>;
  const std::vector<Row> want = {
      {2, EventType::kAdded, kNodeKey, "setup", "Ready cpu=4 memory=8Gi"},
      {3, EventType::kAdded, kNginxKey, "admission", "phase=Pending node=<none>"},
      {4, EventType::kModified, kNginxKey, "binding", "phase=Pending node=node-2"},
      {5, EventType::kAdded, kEventKey, "scheduling",
       "Normal Scheduled: Successfully assigned default/nginx to node-2"},
      {6, EventType::kModified, kNginxKey, "status", "phase=Running node=node-2 ip=10.244.1.5"},
      {7, EventType::kAdded, kWebKey, "admission", "phase=Pending node=<none>"},
      // A delete is summarized by what it deleted.
      {8, EventType::kDeleted, kWebKey, "gc", "phase=Pending node=<none>"},
      {9, EventType::kAdded, kOtherKey, "test", "<3 bytes>"},
  };
  REQUIRE(events.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& [rev, type, key, writer, summary] = want[i];
    INFO("event " << i);
    CHECK(events[i].revision == Revision(rev));
    CHECK(events[i].type == type);
    CHECK(events[i].key == key);
    CHECK(events[i].writer == writer);
    CHECK(events[i].summary == summary);
  }
  CHECK(events[1].committed_at_ms == kT0);
  CHECK(events[2].committed_at_ms == kT0 + 12);
  CHECK(events[6].value == events[5].value);  // the deleted value
}

TEST_CASE("ListEvents filters by --from, --to and --prefix") {
  HistoryLog h;
  struct Case {
    int64_t from, to;
    std::string prefix;
    std::vector<int64_t> revisions;
  };
  const std::vector<Case> cases = {
      {0, 0, "", {2, 3, 4, 5, 6, 7, 8, 9}},
      {1, 0, "", {2, 3, 4, 5, 6, 7, 8, 9}},  // revision 1 is the empty log
      {4, 0, "", {4, 5, 6, 7, 8, 9}},
      {0, 4, "", {2, 3, 4}},
      {4, 6, "", {4, 5, 6}},
      {5, 5, "", {5}},
      {0, 0, "/registry/pods/", {3, 4, 6, 7, 8}},
      {0, 0, kNginxKey, {3, 4, 6}},
      {5, 7, "/registry/pods/", {6, 7}},
      {0, 0, "/registry/events/", {5}},
      {0, 0, "/nothing/", {}},
  };
  for (const Case& c : cases) {
    INFO("from " << c.from << " to " << c.to << " prefix " << c.prefix);
    CHECK(Revisions(MustList(*h.log, c.from, c.to, c.prefix)) == c.revisions);
  }
  // A delete whose put is before --from still says what it deleted.
  const auto deleted = MustList(*h.log, 8, 8);
  REQUIRE(deleted.size() == 1);
  CHECK(deleted[0].summary == "phase=Pending node=<none>");
}

TEST_CASE("ListEvents refuses revisions outside the log") {
  HistoryLog h;
  auto future = ListEvents(*h.log, EventQuery{Revision(0), Revision(10), ""});
  CHECK(future.status().code() == Code::kFutureRevision);
  CHECK(future.status().message().find("the log is at revision 9") != std::string::npos);
  auto backwards = ListEvents(*h.log, EventQuery{Revision(6), Revision(4), ""});
  CHECK(backwards.status().code() == Code::kInvalid);
  REQUIRE(h.log->Compact(Revision(5)).ok());
  auto compacted = ListEvents(*h.log, EventQuery{Revision(3), Revision(0), ""});
  CHECK(compacted.status().code() == Code::kCompacted);
  CHECK(compacted.status().message().find("history starts at revision 6") != std::string::npos);
  // Without --from, the listing starts at the oldest revision kept.
  CHECK(Revisions(MustList(*h.log, 0, 0)) == std::vector<int64_t>{6, 7, 8, 9});
}

TEST_CASE("StateAt gives the live keys and their summaries at each revision") {
  HistoryLog h;
  using Row = std::pair<std::string, std::string>;
  struct Case {
    int64_t at;
    std::string prefix;
    std::vector<Row> rows;
  };
  const std::vector<Case> cases = {
      {1, "", {}},
      {3, "", {{kNodeKey, "Ready cpu=4 memory=8Gi"}, {kNginxKey, "phase=Pending node=<none>"}}},
      {4, "/registry/pods/", {{kNginxKey, "phase=Pending node=node-2"}}},
      {5,
       "",
       {{kEventKey, "Normal Scheduled: Successfully assigned default/nginx to node-2"},
        {kNodeKey, "Ready cpu=4 memory=8Gi"},
        {kNginxKey, "phase=Pending node=node-2"}}},
      {7,
       "/registry/pods/",
       {{kNginxKey, "phase=Running node=node-2 ip=10.244.1.5"},
        {kWebKey, "phase=Pending node=<none>"}}},
      {8, "/registry/pods/", {{kNginxKey, "phase=Running node=node-2 ip=10.244.1.5"}}},
      {0, "/podflow/", {{kOtherKey, "<3 bytes>"}}},
  };
  for (const Case& c : cases) {
    INFO("at " << c.at << " prefix " << c.prefix);
    auto state = StateAt(*h.log, Revision(c.at), c.prefix);
    INFO(state.status().ToString());
    REQUIRE(state.ok());
    CHECK(state->revision == Revision(c.at == 0 ? 9 : c.at));
    std::vector<Row> rows;
    for (const StateEntry& e : state->entries) rows.emplace_back(e.kv.key, e.summary);
    CHECK(rows == c.rows);
  }
  CHECK(StateAt(*h.log, Revision(10)).status().code() == Code::kFutureRevision);
}

TEST_CASE("replay reads a log through the read-only open while the writer has it") {
  HistoryLog h;
  auto reader = OpenLogReadOnly(h.dir.path());
  REQUIRE(reader.ok());
  CHECK(Revisions(MustList(**reader, 0, 0, "/registry/pods/default/nginx")) ==
        std::vector<int64_t>{3, 4, 6});
  // The writer goes on; the reader's next listing includes it.
  REQUIRE(h.log->Delete(kNginxKey, std::nullopt, {"gc"})->succeeded);
  const auto events = MustList(**reader, 10, 0);
  REQUIRE(events.size() == 1);
  CHECK(events[0].type == EventType::kDeleted);
  CHECK(events[0].writer == "gc");
  CHECK(events[0].summary == "phase=Running node=node-2 ip=10.244.1.5");
}

}  // namespace
}  // namespace podflow::replay

namespace podflow::replay {
namespace {

// Not run by default: writes the test history into $PODFLOW_REPLAY_SAMPLE_DIR
// (which must not hold a log yet) for trying podflow-replay by hand:
//   PODFLOW_REPLAY_SAMPLE_DIR=/tmp/sample replay_test '[.sample]'
TEST_CASE("write the sample history", "[.sample]") {
  const char* dir = std::getenv("PODFLOW_REPLAY_SAMPLE_DIR");
  REQUIRE(dir != nullptr);
  testing::FakeWallClock clock;
  LogOptions options = testing::TestOptions(dir);
  options.now_ms = clock.Fn();
  auto log = testing::MustOpen(options);
  testing::WriteHistory(*log, clock);
}

}  // namespace
}  // namespace podflow::replay
