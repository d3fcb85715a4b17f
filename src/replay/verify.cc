// podflow-replay --why and --verify-scheduling: the scheduler's stored
// explanations read back, and re-run against the state they were made on.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include <yaml-cpp/yaml.h>

#include "replay/replay.h"
#include "scheduler/scheduler.h"

namespace podflow::replay {
namespace {

using scheduler::SchedulerCore;

constexpr size_t kBatchRevisions = 512;

// A key-value of the log as the core takes it.
scheduler::StoredObject StoredOf(const KeyValue& kv) { return {kv.key, kv.value, kv.mod_revision}; }

// One followed prefix, fed into the core the way client::Informer feeds
// the stage's: a list (upserts in key order, removals of keys gone since the
// last list), then each change after it in revision order.
class LogFollower {
 public:
  explicit LogFollower(SchedulerCore::Feed feed) : feed_(std::move(feed)) {}

  const std::string& prefix() const { return feed_.prefix; }

  // Brings the core to what the stage's informer had delivered: listed at
  // `list_revision`, then watched up to `revision`.
  Status AdvanceTo(EventLog& log, int64_t list_revision, int64_t revision, SchedulerCore::Clock::time_point now) {
    if (list_revision != list_revision_) {
      PODFLOW_RETURN_IF_ERROR(List(log, list_revision, now));
    }
    if (revision < revision_) {
      return Status::Invalid(prefix() + ": the record's revision " + std::to_string(revision) +
                             " is older than one already replayed (" + std::to_string(revision_) + ")");
    }
    int64_t from = revision_ + 1;
    while (from <= revision) {
      auto batch = log.ReadChanges(Revision(from), kBatchRevisions);
      if (!batch.ok()) return batch.status();
      if (batch->empty()) break;
      for (const RevisionChangesPtr& rc : *batch) {
        if (rc->revision.value() > revision) break;
        for (const Change& c : rc->changes) {
          if (!c.kv.key.starts_with(feed_.prefix)) continue;
          if (c.type == ChangeType::kPut) {
            known_.insert(c.kv.key);
            feed_.upsert(StoredOf(c.kv), now);
          } else if (known_.erase(c.kv.key)) {
            feed_.remove(c.kv.key, now);
          }
        }
        from = rc->revision.value() + 1;
      }
    }
    revision_ = revision;
    return Status::Ok();
  }

 private:
  Status List(EventLog& log, int64_t at, SchedulerCore::Clock::time_point now) {
    std::set<std::string> present;
    RangeRequest request = RangeRequest::Prefix(feed_.prefix, Revision(at));
    for (;;) {
      auto page = log.Range(request);
      if (!page.ok()) return page.status();
      for (const KeyValue& kv : page->kvs) {
        present.insert(kv.key);
        feed_.upsert(StoredOf(kv), now);
      }
      if (!page->more) break;
      request.continue_token = page->continue_token;
    }
    for (const std::string& key : known_) {
      if (!present.count(key)) feed_.remove(key, now);
    }
    known_ = std::move(present);
    list_revision_ = at;
    revision_ = at;
    return Status::Ok();
  }

  SchedulerCore::Feed feed_;
  std::set<std::string> known_;
  int64_t list_revision_ = -1;
  int64_t revision_ = 0;
};

struct Recorded {
  Revision stored_at;  // the revision that stored it (the binding's)
  std::string bytes;
  const explain::SchedulingDecision* record = nullptr;
};

std::string PodOf(const explain::SchedulingDecision& r) {
  std::string key = r.pod_key() ? r.pod_key()->str() : "";
  const std::string prefix = "/registry/pods/";
  return key.starts_with(prefix) ? key.substr(prefix.size()) : key;
}

std::string Label(const Recorded& d) {
  return PodOf(*d.record) + " (decision stored at revision " + std::to_string(d.stored_at.value()) + ", seq " +
         std::to_string(d.record->seq()) + ")";
}

// Re-runs one scheduler run's decisions in order.
void VerifyRun(EventLog& log, uint64_t run, std::vector<Recorded>& decisions, VerifyReport& report) {
  auto skip = [&](const std::string& why) {
    report.skipped += decisions.size();
    report.notes.push_back("run " + scheduler::SchedulerRunKey(run).substr(scheduler::kSchedulerRunPrefix.size()) +
                           ": " + std::to_string(decisions.size()) + " decision(s) skipped: " + why);
  };
  auto run_kv = log.Get(scheduler::SchedulerRunKey(run));
  if (!run_kv.ok() || !run_kv->has_value()) {
    skip("no scheduler run record");
    return;
  }
  auto run_record = scheduler::ReadSchedulerRun((*run_kv)->value);
  if (!run_record.ok()) {
    skip(run_record.status().message());
    return;
  }
  YAML::Node section;
  try {
    const std::string text = (*run_record)->config_yaml() ? (*run_record)->config_yaml()->str() : "";
    if (!text.empty()) section = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    skip(std::string("its scheduler config does not parse: ") + e.what());
    return;
  }
  Result<scheduler::Registry> registry = scheduler::plugins::NewInTreeRegistry();
  if (!registry.ok()) {
    skip(registry.status().message());
    return;
  }
  Result<scheduler::SchedulerConfig> config = scheduler::ParseSchedulerConfig(section, *registry);
  if (!config.ok()) {
    skip("its scheduler config: " + config.status().message());
    return;
  }
  Result<std::vector<scheduler::Profile>> profiles = scheduler::BuildProfiles(*registry, *config);
  if (!profiles.ok()) {
    skip("its scheduler config: " + profiles.status().message());
    return;
  }

  std::sort(decisions.begin(), decisions.end(),
            [](const Recorded& a, const Recorded& b) { return a.record->seq() < b.record->seq(); });
  SchedulerCore core(*profiles);
  // Every plugin on every visited node: the stage's decisions, made with the
  // equivalence cache, are checked against a full evaluation.
  core.set_equivalence_cache(false);
  std::vector<LogFollower> followers;
  for (SchedulerCore::Feed& feed : core.Feeds()) followers.emplace_back(std::move(feed));
  const SchedulerCore::Clock::time_point now = SchedulerCore::Clock::now();

  for (size_t i = 0; i < decisions.size(); ++i) {
    const Recorded& d = decisions[i];
    const explain::SchedulingDecision& rec = *d.record;
    // The state the stage had: every followed prefix as the record says.
    Status fed;
    for (LogFollower& f : followers) {
      const explain::CacheSource* source = nullptr;
      if (rec.sources()) {
        for (const explain::CacheSource* s : *rec.sources()) {
          if (s->prefix() && s->prefix()->str() == f.prefix()) source = s;
        }
      }
      if (source == nullptr) continue;  // not followed when this was recorded
      fed = f.AdvanceTo(log, source->list_revision(), source->revision(), now);
      if (!fed.ok()) break;
    }
    if (!fed.ok()) {
      // The state can no longer be rebuilt (compacted): this run's remaining
      // decisions cannot be re-run either.
      std::vector<Recorded> rest(decisions.begin() + static_cast<std::ptrdiff_t>(i), decisions.end());
      report.skipped += rest.size();
      report.notes.push_back(Label(d) + " and " + std::to_string(rest.size() - 1) +
                             " later decision(s) skipped: rebuilding the state: " + fed.message());
      return;
    }
    core.set_next_start_node_index(static_cast<size_t>(rec.start_node_index()));
    const std::string pod_key = rec.pod_key() ? rec.pod_key()->str() : "";
    std::optional<Result<SchedulerCore::Outcome>> outcome = core.Cycle(pod_key, now);
    ++report.verified;
    std::vector<std::string> why;
    if (!outcome) {
      why.push_back("the pod is not pending for any profile in the state at revision " +
                    std::to_string(rec.revision()));
    } else if (!outcome->ok()) {
      why.push_back("the re-run failed: " + outcome->status().ToString());
    } else {
      const SchedulerCore::Outcome& o = **outcome;
      if (o.mod_revision.value() != rec.pod_mod_revision()) {
        why.push_back("pod revision: " + std::to_string(rec.pod_mod_revision()) + " -> " +
                      std::to_string(o.mod_revision.value()));
      }
      // The same context, so that only the decision itself can differ.
      scheduler::DecisionContext c;
      c.pod_key = pod_key;
      c.pod_uid = o.uid;
      c.pod_mod_revision = rec.pod_mod_revision();
      c.profile = o.profile->scheduler_name();
      c.start_node_index = o.start_node_index;
      if (rec.sources()) {
        for (const explain::CacheSource* s : *rec.sources()) {
          c.sources.push_back({s->prefix() ? s->prefix()->str() : "", s->list_revision(), s->revision()});
        }
      }
      const std::string again = scheduler::EncodeDecisionRecord(o.decision, c);
      auto rerun = scheduler::ReadDecisionRecord(again);
      if (!rerun.ok()) {
        why.push_back(rerun.status().message());
      } else {
        for (const FieldChange& f : DiffValues(DecisionValue(rec), DecisionValue(**rerun))) {
          why.push_back(f.path + ": " + f.before + " -> " + f.after);
        }
        if ((*rerun)->next_start_node_index() != rec.next_start_node_index()) {
          why.push_back("nextStartNodeIndex: " + std::to_string(rec.next_start_node_index()) + " -> " +
                        std::to_string((*rerun)->next_start_node_index()));
        }
      }
      if (!why.empty() && core.assumed_pods() != rec.assumed_pods()) {
        why.push_back("(assumed pods: " + std::to_string(rec.assumed_pods()) + " recorded, " +
                      std::to_string(core.assumed_pods()) + " in the re-run: a decision that was never bound)");
      }
    }
    if (!why.empty()) {
      ++report.differ;
      std::string line = Label(d) + ":";
      for (const std::string& w : why) line += "\n    " + w;
      report.notes.push_back(std::move(line));
    }
  }
}

}  // namespace

Result<std::string> LatestDecision(EventLog& log, std::string_view namespace_, std::string_view name) {
  const std::string key = scheduler::DecisionKey(namespace_, name);
  auto kv = log.Get(key);
  if (!kv.ok()) return kv.status();
  if (!kv->has_value()) {
    return Status::NotFound("no scheduling decision is stored for pod " + std::string(namespace_) + "/" +
                            std::string(name) + " (" + key + ")");
  }
  return std::move((*kv)->value);
}

Result<VerifyReport> VerifyScheduling(EventLog& log) {
  // Every decision still in the log: each put under the decisions prefix.
  std::map<uint64_t, std::vector<Recorded>> runs;
  VerifyReport report;
  const int64_t head = log.CurrentRevision().value();
  int64_t from = std::max<int64_t>(2, log.CompactRevision().value() + 1);
  while (from <= head) {
    auto batch = log.ReadChanges(Revision(from), kBatchRevisions);
    if (!batch.ok()) return batch.status();
    if (batch->empty()) break;
    for (const RevisionChangesPtr& rc : *batch) {
      for (const Change& c : rc->changes) {
        if (c.type != ChangeType::kPut || !c.kv.key.starts_with(scheduler::kDecisionPrefix)) continue;
        Recorded d{rc->revision, c.kv.value};
        auto record = scheduler::ReadDecisionRecord(d.bytes);
        if (!record.ok()) {
          ++report.skipped;
          report.notes.push_back(c.kv.key + " at revision " + std::to_string(rc->revision.value()) + ": " +
                                 record.status().message());
          continue;
        }
        runs[(*record)->run()].push_back(std::move(d));
      }
      from = rc->revision.value() + 1;
    }
  }
  for (auto& [run, decisions] : runs) {
    // The bytes moved into the vector: point the records at their new home.
    for (Recorded& d : decisions) d.record = flatbuffers::GetRoot<explain::SchedulingDecision>(d.bytes.data());
    VerifyRun(log, run, decisions, report);
  }
  return report;
}

}  // namespace podflow::replay
