// Update / UpdateBatch against a real log served over the bus.
#include "client/update.h"

#include <catch2/catch.hpp>

#include "log_fixture.h"
#include "stages/persistence/persistence.h"

namespace podflow::client {
namespace {

struct Fixture {
  testing::TempDir dir;
  std::unique_ptr<EventLog> log;
  bus::Context context;
  std::unique_ptr<persistence::Server> server;
  std::unique_ptr<ApiClient> client;

  Fixture() {
    auto opened = OpenLog(testing::TestOptions(dir.path()));
    REQUIRE(opened.ok());
    log = std::move(*opened);
    server = std::make_unique<persistence::Server>(
        context, log.get(), persistence::ServerOptions{"inproc://update-test-api", "inproc://update-test-watch", 2});
    REQUIRE(server->Start().ok());
    client = std::make_unique<ApiClient>(context, "inproc://update-test-api", "admission");
  }
  ~Fixture() { server->Stop(); }

  KeyValue Stored(const std::string& key) {
    RangeRequest request;
    request.key = key;
    auto r = log->Range(request);
    REQUIRE(r.ok());
    REQUIRE(r->kvs.size() == 1);
    return r->kvs[0];
  }
};

// A mutation that appends `suffix` to what is there ("" when absent), and
// records what it was called with.
struct Appender {
  std::string suffix;
  std::vector<std::pair<std::string, bool>> calls = {};  // (value seen or "<absent>", fresh)
  Mutate Fn() {
    return [this](const KeyValue* current, bool fresh) {
      calls.emplace_back(current ? current->value : "<absent>", fresh);
      return Mutation::Put((current ? current->value : "") + suffix);
    };
  }
};

TEST_CASE("Update reads the key, decides on it and writes it guarded") {
  Fixture f;
  REQUIRE(f.log->Put("/registry/k", "a").ok());
  Appender add{"b"};
  UpdateOutcome out = Update(*f.client, UpdateItem{"/registry/k", std::nullopt, add.Fn()});
  REQUIRE(out.status.ok());
  CHECK(out.written);
  CHECK(out.value == "ab");
  CHECK(f.Stored("/registry/k").value == "ab");
  CHECK(f.Stored("/registry/k").mod_revision == out.revision);
  REQUIRE(add.calls.size() == 1);
  CHECK(add.calls[0] == std::make_pair(std::string("a"), true));
}

TEST_CASE("A stale copy loses its guard and the change is decided again on the key as it is") {
  Fixture f;
  auto first = f.log->Put("/registry/k", "a");
  REQUIRE(first.ok());
  const KeyValue stale = f.Stored("/registry/k");
  REQUIRE(f.log->Put("/registry/k", "a2").ok());  // someone else wrote meanwhile
  Appender add{"b"};
  UpdateOutcome out = Update(*f.client, UpdateItem{"/registry/k", stale, add.Fn()});
  REQUIRE(out.written);
  CHECK(f.Stored("/registry/k").value == "a2b");
  REQUIRE(add.calls.size() == 2);
  CHECK(add.calls[0] == std::make_pair(std::string("a"), false));  // the caller's copy
  CHECK(add.calls[1] == std::make_pair(std::string("a2"), true));  // what the failed guard returned
}

TEST_CASE("An item that keeps losing its guard gives up with Conflict after max_attempts") {
  Fixture f;
  REQUIRE(f.log->Put("/registry/k", "0").ok());
  int calls = 0;
  UpdatePolicy policy;
  policy.max_attempts = 3;
  UpdateOutcome out = Update(*f.client,
                             UpdateItem{"/registry/k", std::nullopt,
                                        [&](const KeyValue* current, bool) {
                                          ++calls;
                                          // Another writer moves the key on after every decision.
                                          REQUIRE(f.log->Put("/registry/k", "other" + std::to_string(calls)).ok());
                                          return Mutation::Put(current->value + "!");
                                        }},
                             policy);
  CHECK_FALSE(out.written);
  CHECK(out.status.code() == Code::kConflict);
  CHECK(calls == 3);
  CHECK(f.Stored("/registry/k").value == "other3");
}

TEST_CASE("Refresh reads the key when the decision was on the caller's copy, and skips on a fresh one") {
  Fixture f;
  REQUIRE(f.log->Put("/registry/k", "new").ok());
  std::vector<bool> fresh_seen;
  auto mutate = [&](const KeyValue* current, bool fresh) {
    fresh_seen.push_back(fresh);
    if (current->value != "new") return Mutation::Refresh();
    return Mutation::Put("newer");
  };
  KeyValue copy = f.Stored("/registry/k");
  copy.value = "old";  // the caller's copy says something else
  UpdateOutcome out = Update(*f.client, UpdateItem{"/registry/k", copy, mutate});
  CHECK(out.written);
  CHECK(fresh_seen == std::vector<bool>{false, true});
  CHECK(f.Stored("/registry/k").value == "newer");

  // Refresh on what the log says is a skip, not a loop.
  int calls = 0;
  out = Update(*f.client, UpdateItem{"/registry/k", std::nullopt, [&](const KeyValue*, bool) {
                                       ++calls;
                                       return Mutation::Refresh();
                                     }});
  CHECK_FALSE(out.written);
  CHECK(out.status.ok());
  CHECK(calls == 1);
}

TEST_CASE("A create (a copy with revision 0) fails its guard when the key exists, and is decided again") {
  Fixture f;
  REQUIRE(f.log->Put("/registry/k", "there").ok());
  std::vector<std::string> seen;
  UpdateOutcome out = Update(*f.client, UpdateItem{"/registry/k", KeyValue{"/registry/k", "", {}, Revision(0)},
                                                   [&](const KeyValue* current, bool) {
                                                     seen.push_back(current ? current->value : "<absent>");
                                                     if (current) return Mutation::Skip(Status::AlreadyExists("/registry/k"));
                                                     return Mutation::Put("mine");
                                                   }});
  CHECK(out.status.code() == Code::kAlreadyExists);
  CHECK(seen == std::vector<std::string>{"<absent>", "there"});
  CHECK(f.Stored("/registry/k").value == "there");
}

TEST_CASE("A batch shares transactions, takes a key once per transaction and keeps the others on a conflict") {
  Fixture f;
  REQUIRE(f.log->Put("/registry/b", "b").ok());
  const KeyValue stale_b = f.Stored("/registry/b");
  REQUIRE(f.log->Put("/registry/b", "b2").ok());
  Appender a1{"1"}, b{"x"}, a2{"2"}, c{"c"};
  std::vector<UpdateItem> items;
  items.push_back({"/registry/a", KeyValue{"/registry/a", "", {}, Revision(0)}, a1.Fn()});
  items.push_back({"/registry/b", stale_b, b.Fn()});
  items.push_back({"/registry/a", std::nullopt, a2.Fn()});  // the same key again: after the first
  items.push_back({"/registry/c", std::nullopt, c.Fn()});
  std::vector<UpdateOutcome> out = UpdateBatch(*f.client, std::move(items));
  REQUIRE(out.size() == 4);
  for (const UpdateOutcome& o : out) CHECK(o.written);
  CHECK(f.Stored("/registry/a").value == "12");
  CHECK(f.Stored("/registry/b").value == "b2x");
  CHECK(f.Stored("/registry/c").value == "c");
  // /a's first write and /c went together once /b had lost its guard.
  CHECK(out[0].revision == out[3].revision);
  CHECK(out[2].revision > out[0].revision);
  CHECK(a2.calls[0] == std::make_pair(std::string("1"), true));
}

TEST_CASE("A batch splits into transactions within the op budget, extra ops included") {
  Fixture f;
  std::vector<UpdateItem> items;
  for (std::string key : {"/registry/x", "/registry/y", "/registry/z"}) {
    items.push_back({key, KeyValue{key, "", {}, Revision(0)}, [key](const KeyValue*, bool) {
                       return Mutation::Put("v", {PutOp{key + "/event", "e"}});
                     }});
  }
  UpdatePolicy policy;
  policy.max_ops_per_txn = 4;  // two items of two ops each
  std::vector<UpdateOutcome> out = UpdateBatch(*f.client, std::move(items), policy);
  REQUIRE(out.size() == 3);
  CHECK(out[0].revision == out[1].revision);
  CHECK(out[2].revision == Revision(out[1].revision.value() + 1));
  CHECK(f.Stored("/registry/z/event").value == "e");
}

TEST_CASE("A guarded extra op that fails has its item decided again; two items sharing an extra key take turns") {
  Fixture f;
  REQUIRE(f.log->Put("/registry/counter", "0").ok());
  // Each item charges the shared counter, read afresh at each decision and
  // written guarded beside the item's own create.
  int decisions = 0;
  bool moved = false;
  auto charge = [&](std::string key) -> Mutate {
    return [&, key](const KeyValue*, bool) {
      ++decisions;
      KeyValue counter = f.Stored("/registry/counter");
      if (!moved) {  // another writer moves the counter on after the first decision
        moved = true;
        REQUIRE(f.log->Put("/registry/counter", "5").ok());
      }
      const std::string next = std::to_string(std::stoi(counter.value) + 1);
      return Mutation::Put("v", {PutOp{"/registry/counter", next, counter.mod_revision}});
    };
  };
  std::vector<UpdateItem> items;
  for (std::string key : {"/registry/p1", "/registry/p2"}) items.push_back({key, KeyValue{key, "", {}, Revision(0)}, charge(key)});
  std::vector<UpdateOutcome> out = UpdateBatch(*f.client, std::move(items));
  REQUIRE(out.size() == 2);
  CHECK(out[0].written);
  CHECK(out[1].written);
  // Neither charge was lost: the first was decided again on 5, the second
  // waited for the first's write.
  CHECK(f.Stored("/registry/counter").value == "7");
  CHECK(out[1].revision > out[0].revision);
  CHECK(decisions >= 3);
}

TEST_CASE("Delete is guarded too, and carries its extra ops") {
  Fixture f;
  REQUIRE(f.log->Put("/registry/gone", "v").ok());
  UpdateOutcome out = Update(*f.client, UpdateItem{"/registry/gone", std::nullopt, [](const KeyValue* current, bool) {
                                                     REQUIRE(current != nullptr);
                                                     return Mutation::Delete({PutOp{"/registry/note", "deleted"}});
                                                   }});
  CHECK(out.written);
  RangeRequest request;
  request.key = "/registry/gone";
  auto r = f.log->Range(request);
  REQUIRE(r.ok());
  CHECK(r->kvs.empty());
  CHECK(f.Stored("/registry/note").value == "deleted");
}

TEST_CASE("Stopping ends the items not yet written") {
  Fixture f;
  UpdatePolicy policy;
  policy.stopping = [] { return true; };
  UpdateOutcome out = Update(*f.client, UpdateItem{"/registry/k", std::nullopt, [](const KeyValue*, bool) {
                                                     return Mutation::Put("v");
                                                   }},
                             policy);
  CHECK_FALSE(out.written);
  CHECK(out.status.code() == Code::kUnavailable);
}

}  // namespace
}  // namespace podflow::client
