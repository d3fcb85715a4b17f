// Model-based test of the log and its watches: thousands of random txns
// (puts and deletes with random guards over a small key space), reads at
// random revisions, paging, compactions and watches, checked against a
// plain in-memory model of etcd's semantics. Fixed seeds.
#include <map>
#include <random>

#include "log_fixture.h"
#include "watch/watch.h"

namespace podflow {
namespace {

using testing::MustOpen;
using testing::TempDir;
using testing::TestOptions;

struct ModelChange {
  ChangeType type;
  KeyValue kv;  // kDelete: key + mod_revision
  std::optional<KeyValue> prev;
};

// etcd's semantics, the slow obvious way: a full state per revision.
class Model {
 public:
  Model() : states_(2), changes_(2) {}  // revision 1: empty

  int64_t head() const { return static_cast<int64_t>(states_.size()) - 1; }
  int64_t compact = 0;
  const std::map<std::string, KeyValue>& At(int64_t rev) const { return states_[rev]; }
  const std::vector<ModelChange>& ChangesAt(int64_t rev) const { return changes_[rev]; }

  TxnResult Apply(const std::vector<TxnOp>& ops) {
    const auto& cur = states_.back();
    TxnResult r;
    for (size_t i = 0; i < ops.size(); ++i) {
      const std::string& key = std::visit([](auto& op) -> const std::string& { return op.key; },
                                          ops[i]);
      auto guard = std::visit([](auto& op) { return op.guard; }, ops[i]);
      auto it = cur.find(key);
      const int64_t have = it == cur.end() ? 0 : it->second.mod_revision.value();
      if (guard && guard->value() != have) {
        r.failed_op = i;
        if (it != cur.end()) r.current = it->second;
        r.revision = Revision(head());
        return r;
      }
    }
    r.succeeded = true;
    auto next = cur;
    std::vector<ModelChange> changes;
    const int64_t rev = head() + 1;
    for (const TxnOp& op : ops) {
      if (const auto* put = std::get_if<PutOp>(&op)) {
        auto it = next.find(put->key);
        KeyValue kv{put->key, put->value, Revision(rev), Revision(rev), 1, 0};
        std::optional<KeyValue> prev;
        if (it != next.end()) {
          prev = it->second;
          kv.create_revision = it->second.create_revision;
          kv.version = it->second.version + 1;
        }
        next[put->key] = kv;
        changes.push_back({ChangeType::kPut, kv, prev});
      } else {
        const auto& del = std::get<DeleteOp>(op);
        auto it = next.find(del.key);
        if (it == next.end()) continue;
        KeyValue kv;
        kv.key = del.key;
        kv.mod_revision = Revision(rev);
        changes.push_back({ChangeType::kDelete, kv, it->second});
        next.erase(it);
        ++r.deleted;
      }
    }
    if (changes.empty()) {
      r.revision = Revision(head());
      return r;
    }
    states_.push_back(std::move(next));
    changes_.push_back(std::move(changes));
    r.revision = Revision(rev);
    return r;
  }

 private:
  std::vector<std::map<std::string, KeyValue>> states_;
  std::vector<std::vector<ModelChange>> changes_;
};

const std::vector<std::string> kKeys = {"/m/a", "/m/b", "/m/c", "/m/d", "/m/e", "/n/x", "/n/y"};

std::vector<TxnOp> RandomTxn(std::mt19937& rng, const Model& model, int step) {
  std::vector<std::string> keys = kKeys;
  std::shuffle(keys.begin(), keys.end(), rng);
  const int n = 1 + static_cast<int>(rng() % 3);
  std::vector<TxnOp> ops;
  for (int i = 0; i < n; ++i) {
    std::optional<Revision> guard;
    if (rng() % 10 < 3) {
      auto it = model.At(model.head()).find(keys[i]);
      switch (rng() % 3) {
        case 0: guard = it == model.At(model.head()).end() ? Revision(0) : it->second.mod_revision; break;
        case 1: guard = Revision(0); break;
        default: guard = Revision(1 + static_cast<int64_t>(rng() % (model.head() + 2)));
      }
    }
    if (rng() % 10 < 7) {
      ops.emplace_back(PutOp{keys[i], "v" + std::to_string(step) + "." + std::to_string(i), guard});
    } else {
      ops.emplace_back(DeleteOp{keys[i], guard});
    }
  }
  return ops;
}

void CheckRead(EventLog& log, const Model& model, int64_t rev, int64_t limit) {
  INFO("read at " << rev << " head " << model.head() << " compact " << model.compact);
  RangeRequest req = RangeRequest::Prefix("/", Revision(rev));
  req.limit = limit;
  auto page = log.Range(req);
  if (rev > model.head()) {
    REQUIRE(page.status().code() == Code::kFutureRevision);
    return;
  }
  if (rev != 0 && rev < model.compact) {
    REQUIRE(page.status().code() == Code::kCompacted);
    return;
  }
  REQUIRE(page.ok());
  const int64_t at = rev == 0 ? model.head() : rev;
  REQUIRE(page->revision == Revision(at));
  std::vector<KeyValue> got = page->kvs;
  while (page->more) {
    RangeRequest next = RangeRequest::Prefix("/");
    next.limit = limit;
    next.continue_token = page->continue_token;
    page = log.Range(next);
    REQUIRE(page.ok());
    got.insert(got.end(), page->kvs.begin(), page->kvs.end());
  }
  std::vector<KeyValue> want;
  for (const auto& [k, kv] : model.At(at)) want.push_back(kv);
  REQUIRE(got == want);
}

// Drains `w` up to the model's head; checks every batch against the model.
void CheckWatch(Watcher& w, const Model& model, bool prev_kv, const WatchFilter& filter) {
  int64_t expect = w.next_revision().value();
  for (;;) {
    WatchBatch b = w.Next(std::chrono::milliseconds(0));
    const bool done = b.kind == WatchBatch::Kind::kTimedOut;
    REQUIRE((done || b.kind == WatchBatch::Kind::kEvents));
    // Skipped revisions had nothing for this watcher.
    for (; expect < b.revision.value() + (done ? 1 : 0); ++expect) {
      for (const auto& c : model.ChangesAt(expect)) {
        if (c.kv.key.rfind("/m/", 0) != 0) continue;
        if (!filter) FAIL("revision " << expect << " skipped");
        const bool now = c.type == ChangeType::kPut && filter(c.kv);
        const bool before = c.prev && filter(*c.prev);
        REQUIRE_FALSE((now || before));
      }
    }
    if (done) break;
    std::vector<ModelChange> want;
    for (const auto& c : model.ChangesAt(expect)) {
      if (c.kv.key.rfind("/m/", 0) == 0) want.push_back(c);
    }
    size_t j = 0;
    for (const ModelChange& c : want) {
      const bool now = c.type == ChangeType::kPut && (!filter || filter(c.kv));
      const bool before = c.prev && (!filter || filter(*c.prev));
      if (filter && !now && !before) continue;
      REQUIRE(j < b.events.size());
      const WatchEvent& e = b.events[j++];
      REQUIRE(e.kv.key == c.kv.key);
      REQUIRE(e.kv.mod_revision == c.kv.mod_revision);
      if (now) {
        REQUIRE(e.type == ChangeType::kPut);
        REQUIRE(e.kv == c.kv);
        REQUIRE(e.created == !before);
      } else {
        REQUIRE(e.type == ChangeType::kDelete);
      }
      if (prev_kv) REQUIRE(e.prev_kv == c.prev);
    }
    REQUIRE(j == b.events.size());
    ++expect;
  }
  REQUIRE(expect == model.head() + 1);
}

void RunModel(uint32_t seed, int steps) {
  INFO("seed " << seed);
  TempDir dir;
  LogOptions options = TestOptions(dir.path());
  options.ring_max_revisions = 64;  // watchers exercise both ring and storage
  auto log = MustOpen(options);
  std::mt19937 rng(seed);
  Model model;
  auto even = [](const KeyValue& kv) { return (kv.value.back() - '0') % 2 == 0; };
  WatchOptions wo;
  wo.key = "/m/";
  wo.prefix = true;
  wo.start_revision = Revision(2);
  wo.prev_kv = true;
  auto live = Watcher::Open(log.get(), wo).value();

  for (int step = 0; step < steps; ++step) {
    const uint32_t dice = rng() % 100;
    if (dice < 80) {
      std::vector<TxnOp> ops = RandomTxn(rng, model, step);
      TxnResult want = model.Apply(ops);
      auto got = log->Txn(ops);
      REQUIRE(got.ok());
      INFO("step " << step);
      REQUIRE(got->succeeded == want.succeeded);
      REQUIRE(got->revision == want.revision);
      REQUIRE(got->deleted == want.deleted);
      if (!want.succeeded) {
        REQUIRE(got->failed_op == want.failed_op);
        REQUIRE(got->current == want.current);
      }
    } else if (dice < 92) {
      int64_t rev = 0;
      if (rng() % 4 != 0) {
        const int64_t lo = std::max<int64_t>(1, model.compact - 2);
        rev = lo + static_cast<int64_t>(rng() % (model.head() + 3 - lo));
      }
      CheckRead(*log, model, rev, rng() % 4);
    } else if (dice < 94) {
      const int64_t target = model.compact + 1 + static_cast<int64_t>(rng() % 50);
      Status s = log->Compact(Revision(target));
      if (target > model.head()) {
        REQUIRE(s.code() == Code::kFutureRevision);
      } else {
        REQUIRE(s.ok());
        model.compact = target;
      }
    } else {
      if (live->next_revision().value() <= model.compact) {
        // At the compact revision the watch is still valid, but its prev_kv
        // there is gone: start it again above.
        if (live->next_revision().value() < model.compact) {
          REQUIRE(live->Next(std::chrono::milliseconds(0)).kind == WatchBatch::Kind::kCompacted);
        }
        wo.start_revision = Revision(model.compact + 1);
        live = Watcher::Open(log.get(), wo).value();
      }
      CheckWatch(*live, model, true, nullptr);
    }
  }
  // A watch from the compact revision itself (no old values needed): the
  // revision is whole, deletes included.
  if (model.compact > 1) {
    WatchOptions at;
    at.key = "/m/";
    at.prefix = true;
    at.start_revision = Revision(model.compact);
    auto w = Watcher::Open(log.get(), at);
    REQUIRE(w.ok());
    CheckWatch(**w, model, false, nullptr);
  }
  // Fresh watches from random starts above the compact revision, with and
  // without a filter.
  for (int i = 0; i < 5; ++i) {
    WatchOptions fresh;
    fresh.key = "/m/";
    fresh.prefix = true;
    fresh.start_revision = Revision(model.compact + 1 +
                                    static_cast<int64_t>(rng() % (model.head() - model.compact)));
    fresh.prev_kv = i % 2 == 0;
    if (i >= 2) fresh.filter = even;
    auto w = Watcher::Open(log.get(), fresh);
    REQUIRE(w.ok());
    CheckWatch(**w, model, fresh.prev_kv, fresh.filter);
  }
  CheckRead(*log, model, 0, 0);
}

TEST_CASE("the log matches a model of etcd's semantics (several seeds)") {
  for (uint32_t seed : {1u, 2u, 3u, 42u}) RunModel(seed, 2500);
}

}  // namespace
}  // namespace podflow
