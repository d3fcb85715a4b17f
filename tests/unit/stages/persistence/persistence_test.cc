// The persistence stage end to end over the bus: writes, reads and watch
// streams against a real log in a temp dir.
#include "stages/persistence/persistence.h"
#include "client/client.h"

#include <thread>

#include <catch2/catch.hpp>

#include "log_fixture.h"
#include "model/codec.h"

namespace podflow::persistence {
namespace {

using namespace std::chrono_literals;
using client::RemoteWatcher;
using client::RemoteWatchOptions;
using Client = client::ApiClient;

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<EventLog> log;
  bus::Context context;
  std::unique_ptr<Server> server;
  std::string api = "inproc://persistence-test-api";
  std::string watch = "inproc://persistence-test-watch";

  Fixture() {
    auto opened = OpenLog(testing::TestOptions(dir.path()));
    REQUIRE(opened.ok());
    log = std::move(*opened);
    server = std::make_unique<Server>(context, log.get(), ServerOptions{api, watch, 4});
    REQUIRE(server->Start().ok());
  }
  ~Fixture() { server->Stop(); }
};

std::string PodBytes(const std::string& name, const std::string& node) {
  std::string yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
                     "}\nspec: {containers: [{name: a, image: nginx}]" +
                     (node.empty() ? "" : ", nodeName: " + node) + "}\n";
  auto docs = model::DecodeManifests(yaml);
  REQUIRE(docs.ok());
  REQUIRE((*docs)[0].status.ok());
  return (*docs)[0].object.bytes;
}

// Waits for the next batch with events.
WatchBatch NextEvents(RemoteWatcher& w) {
  for (int i = 0; i < 50; ++i) {
    WatchBatch b = w.Next(100ms);
    if (b.kind != WatchBatch::Kind::kTimedOut && b.kind != WatchBatch::Kind::kProgress) return b;
  }
  FAIL("no events within 5s");
  return {};
}

TEST_CASE("Writes and reads go through the api channel with etcd semantics") {
  Fixture f;
  Client client(f.context, f.api, "admission");
  auto created = client.Write({PutOp{"/registry/pods/default/a", "v1", Revision(0)}});
  REQUIRE(created.ok());
  CHECK(created->succeeded);
  CHECK(created->revision == Revision(2));

  auto again = client.Write({PutOp{"/registry/pods/default/a", "v2", Revision(0)}});
  REQUIRE(again.ok());
  CHECK_FALSE(again->succeeded);
  REQUIRE(again->current.has_value());
  CHECK(again->current->value == "v1");
  CHECK(again->current->mod_revision == Revision(2));

  auto cas = client.Write({PutOp{"/registry/pods/default/a", "v2", Revision(2)}});
  REQUIRE(cas.ok());
  CHECK(cas->succeeded);

  auto read = client.Read(RangeRequest::Prefix("/registry/pods/"));
  REQUIRE(read.ok());
  REQUIRE(read->kvs.size() == 1);
  CHECK(read->kvs[0].value == "v2");
  CHECK(read->kvs[0].version == 2);

  auto old = client.Read(RangeRequest::Prefix("/registry/pods/", Revision(2)));
  REQUIRE(old.ok());
  CHECK(old->kvs[0].value == "v1");

  auto future = client.Read(RangeRequest::Prefix("/registry/pods/", Revision(99)));
  REQUIRE_FALSE(future.ok());
  CHECK(future.status().code() == Code::kFutureRevision);

  auto invalid = client.Write({PutOp{"/registry/pods/default/a", "x", std::nullopt, -1}});
  REQUIRE_FALSE(invalid.ok());
  CHECK(invalid.status().code() == Code::kInvalid);
  CHECK(invalid.status().message().find("ttl_seconds is negative") != std::string::npos);
}

TEST_CASE("List follows continue tokens across pages") {
  Fixture f;
  Client client(f.context, f.api, "admission");
  for (int i = 0; i < 25; ++i) {
    REQUIRE(client.Write({PutOp{"/registry/nodes/n" + std::to_string(100 + i), "x"}}).ok());
  }
  auto all = client.List("/registry/nodes/", 7);
  REQUIRE(all.ok());
  REQUIRE(all->kvs.size() == 25);
  CHECK(all->kvs.front().key == "/registry/nodes/n100");
  CHECK(all->kvs.back().key == "/registry/nodes/n124");
}

TEST_CASE("A remote watch streams revisions in order from where it starts") {
  Fixture f;
  Client client(f.context, f.api, "admission");
  REQUIRE(client.Write({PutOp{"/registry/pods/default/before", "0"}}).ok());  // rev 2

  RemoteWatchOptions options;
  options.key = "/registry/pods/";
  options.prefix = true;
  options.start_revision = Revision(2);
  options.credits = 4;  // small window: the server must wait for credits
  auto watcher = RemoteWatcher::Open(f.context, f.watch, options);
  REQUIRE(watcher.ok());
  for (int i = 0; i < 20; ++i) {
    REQUIRE(client.Write({PutOp{"/registry/pods/default/p" + std::to_string(i), "x"}}).ok());
  }
  REQUIRE(client.Write({PutOp{"/registry/nodes/ignored", "x"}}).ok());
  int64_t expected = 2;
  while (expected <= 22) {
    WatchBatch b = NextEvents(**watcher);
    REQUIRE(b.kind == WatchBatch::Kind::kEvents);
    CHECK(b.revision == Revision(expected));
    REQUIRE(b.events.size() == 1);
    CHECK(b.events[0].created);
    ++expected;
  }
}

TEST_CASE("A field selector gives a node agent only its pods, with transitions") {
  Fixture f;
  Client client(f.context, f.api, "admission");
  RemoteWatchOptions options;
  options.key = "/registry/pods/";
  options.prefix = true;
  options.field_selector = "spec.nodeName=node-1";
  auto watcher = RemoteWatcher::Open(f.context, f.watch, options);
  REQUIRE(watcher.ok());
  std::this_thread::sleep_for(50ms);  // let the watch start before the writes

  REQUIRE(client.Write({PutOp{"/registry/pods/default/web", PodBytes("web", "")}}).ok());
  REQUIRE(client.Write({PutOp{"/registry/pods/default/other", PodBytes("other", "node-2")}}).ok());
  auto bound = client.Write({PutOp{"/registry/pods/default/web", PodBytes("web", "node-1")}});
  REQUIRE(bound.ok());

  WatchBatch b = NextEvents(**watcher);
  REQUIRE(b.kind == WatchBatch::Kind::kEvents);
  CHECK(b.revision == bound->revision);
  REQUIRE(b.events.size() == 1);
  CHECK(b.events[0].kv.key == "/registry/pods/default/web");
  CHECK(b.events[0].created);  // entered the node's view: ADDED
}

TEST_CASE("Bad watch requests get an error, not silence") {
  Fixture f;
  RemoteWatchOptions options;
  options.key = "/registry/pods/";
  options.prefix = true;
  options.field_selector = "spec.replicas=3";
  auto watcher = RemoteWatcher::Open(f.context, f.watch, options);
  REQUIRE(watcher.ok());
  WatchBatch b = NextEvents(**watcher);
  CHECK(b.kind == WatchBatch::Kind::kError);
  CHECK(b.status.message().find("field label not supported: spec.replicas") != std::string::npos);
}

TEST_CASE("A watch below the compaction point says compacted") {
  Fixture f;
  Client client(f.context, f.api, "admission");
  for (int i = 0; i < 5; ++i) REQUIRE(client.Write({PutOp{"/registry/pods/default/p", "x"}}).ok());
  REQUIRE(f.log->Compact(Revision(5)).ok());
  RemoteWatchOptions options;
  options.key = "/registry/pods/";
  options.prefix = true;
  options.start_revision = Revision(3);
  auto watcher = RemoteWatcher::Open(f.context, f.watch, options);
  REQUIRE(watcher.ok());
  WatchBatch b = NextEvents(**watcher);
  CHECK(b.kind == WatchBatch::Kind::kCompacted);
  CHECK(b.revision == Revision(5));
}

}  // namespace
}  // namespace podflow::persistence

namespace podflow::persistence {
namespace {

using client::RemoteWatcher;
using client::RemoteWatchOptions;

// The bus half of "a slow watcher never blocks writers and never loses an
// event": a remote watcher that reads nothing while 100,000 events are
// committed (its credits run out, the server stops sending, the writers
// go on), then resumes and gets each event exactly once, in order.
TEST_CASE("A paused remote watcher gets 100,000 events exactly once, in order") {
  constexpr int kWriters = 4;
  constexpr int kPerWriter = 25'000;
  Fixture f;
  RemoteWatchOptions options;
  options.key = "/w/";
  options.prefix = true;
  options.credits = 64;
  // From an explicit revision: the server sets the watch up asynchronously,
  // and "from the next revision" would race with the writers below.
  const int64_t first = f.log->CurrentRevision().value() + 1;
  options.start_revision = Revision(first);
  auto watcher = RemoteWatcher::Open(f.context, f.watch, options);
  REQUIRE(watcher.ok());

  std::vector<std::thread> writers;
  for (int t = 0; t < kWriters; ++t) {
    writers.emplace_back([&, t] {
      const std::string key = "/w/" + std::to_string(t);
      for (int i = 0; i < kPerWriter; ++i) {
        auto r = f.log->Put(key, std::to_string(i));
        if (!r.ok() || !r->succeeded) FAIL("write failed");
      }
    });
  }
  for (auto& t : writers) t.join();
  REQUIRE(f.log->CurrentRevision().value() - first + 1 == kWriters * kPerWriter);

  std::vector<int> next_value(kWriters, 0);
  int64_t expect_rev = first;
  int received = 0;
  while (received < kWriters * kPerWriter) {
    WatchBatch b = (*watcher)->Next(2000ms);
    if (b.kind == WatchBatch::Kind::kProgress) continue;
    REQUIRE(b.kind == WatchBatch::Kind::kEvents);
    REQUIRE(b.revision.value() == expect_rev);
    REQUIRE(b.events.size() == 1);
    const int writer = b.events[0].kv.key.back() - '0';
    REQUIRE(b.events[0].kv.value == std::to_string(next_value[writer]));
    ++next_value[writer];
    ++expect_rev;
    ++received;
  }
  WatchBatch after = (*watcher)->Next(200ms);
  CHECK((after.kind == WatchBatch::Kind::kTimedOut || after.kind == WatchBatch::Kind::kProgress));
}

}  // namespace
}  // namespace podflow::persistence
