#include "stages/status/status_stage.h"

#include "model/pod_phase.h"

#include <set>
#include <string_view>
#include <unordered_map>

#include "base/logging.h"
#include "model/objects.h"
#include "client/update.h"
#include "base/clock.h"
#include "model/conditions.h"
#include "model/events.h"
#include "stages/status/status.h"

namespace podflow::status {
namespace {

// Guarded writes lost to concurrent writers before a report is given up.
constexpr int kMaxAttempts = 8;
// Room left in a write for what the log adds to each op (revision, lease).
constexpr size_t kWriteSlack = 4096;
// Distinguishes this stage's event names from other stages' (model::EventNamer).
constexpr uint32_t kEventNamerInstance = 100;  // + worker index
// Reports folded in parallel (distinct pods); their writes share group commits.
constexpr size_t kWorkers = 8;

}  // namespace

// What one worker owns: the log client is one-thread-at-a-time, and a pod's
// reports (hence its ledger entries) always land on the same worker.
struct StatusStage::Worker {
  client::ApiClient client;
  model::EventNamer namer;
  ReportLedger ledger;
  // The pods this worker wrote last, as written: the next report of the
  // same pod folds into it without a read. A stale entry costs one failed
  // guarded write (then it is read). Bounded by clearing.
  std::unordered_map<std::string, KeyValue> written;
};

namespace {
constexpr size_t kMaxRemembered = 50'000;
}  // namespace

Result<std::unique_ptr<StatusStage>> StatusStage::Create(pipeline::StageContext& context) {
  return std::unique_ptr<StatusStage>(new StatusStage(context));
}

StatusStage::StatusStage(pipeline::StageContext& context)
    : pull_(context, Pull::Spec{"reports", "stage.status", kWorkers,
                                [&context](size_t i) {
                                  return std::unique_ptr<Worker>(new Worker{
                                      client::ApiClient(context.bus, context.Endpoint("api"), std::string(kName)),
                                      model::EventNamer(kEventNamerInstance + static_cast<uint32_t>(i)), ReportLedger(), {}});
                                },
                                DecodeReports,
                                [this](Worker& worker, std::vector<model::Report>& batch) { Apply(worker, batch); },
                                {"runtime"}}) {}
StatusStage::~StatusStage() = default;
Status StatusStage::Start() { return pull_.Start(); }
void StatusStage::Stop() { pull_.Stop(); }

Result<std::vector<StatusStage::Pull::Decoded>> StatusStage::DecodeReports(const bus::Frame& frame) {
  Result<std::vector<model::Report>> reports = model::DecodeReports(frame.bytes());
  if (!reports.ok()) return reports.status();
  std::vector<Pull::Decoded> out;
  out.reserve(reports->size());
  for (model::Report& r : *reports) {
    std::string key = r.pod_key;
    out.push_back(Pull::Decoded{std::move(key), std::move(r)});
  }
  return out;
}

void StatusStage::Apply(Worker& w, std::vector<model::Report>& reports) {
  static auto log = Logger("stage.status");
  model::CoalesceReports(reports);
  std::vector<client::UpdateItem> items;
  items.reserve(reports.size());
  for (const model::Report& r : reports) {
    const model::Report* report = &r;
    client::UpdateItem item;
    item.key = report->pod_key;
    // The pod as this worker last wrote it folds without a read; a stale
    // copy costs one failed guarded write (then it is read).
    if (auto remembered = w.written.find(report->pod_key); remembered != w.written.end()) {
      item.known = remembered->second;
    }
    item.mutate = [&w, report](const KeyValue* current, bool fresh) -> client::Mutation {
      if (current == nullptr) {
        w.ledger.Forget(report->pod_uid);  // deleted: nothing to report on
        return client::Mutation::Skip();
      }
      if (fresh) {
        Status valid = model::VerifyObject(model::Kind("Pod"), current->value);
        if (!valid.ok()) {
          log->error("{}: stored pod does not verify: {}", current->key, valid.ToString());
          return client::Mutation::Skip(valid);
        }
      }
      std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(current->value);
      if (!pod->metadata || !pod->spec) return client::Mutation::Skip();
      FoldResult result = FoldReport(*pod, *report, WallClockNow(), w.namer, w.ledger);
      if (result.verdict != FoldVerdict::kApplied) {
        // From memory, perhaps only the memory is out of date: read it.
        if (!fresh) return client::Mutation::Refresh();
        log->debug("report for {} ignored ({}): {}", current->key, FoldVerdictName(result.verdict), result.why);
        return client::Mutation::Skip();
      }
      pod->status = std::make_unique<api::PodStatusT>(std::move(result.status));
      // A deleted pod whose containers have all stopped goes, as kubelet's
      // final delete; one still held by finalizers waits for them with
      // nothing left to wait for on the node.
      const bool finished = !pod->metadata->deletion_timestamp.empty() && model::ContainersStopped(*pod->status);
      if (finished) pod->metadata->deletion_grace_period_seconds = 0;
      const bool remove = finished && pod->metadata->finalizers.empty();
      std::string packed_pod = model::Pack(*pod);
      // The status always goes in; events (best effort, as in Kubernetes)
      // only as far as the write stays under the log's limit.
      const size_t budget = model::kMaxWriteBytes - kWriteSlack;
      size_t used = current->key.size() + packed_pod.size();
      if (used > budget) {
        log->error("{}: its status does not fit in one write ({} bytes, limit {})", current->key, used, budget);
        return client::Mutation::Skip(Status::Invalid(current->key + ": status too large to store"));
      }
      std::vector<TxnOp> events;
      size_t dropped = 0;
      for (const api::EventT& event : result.events) {
        model::PackedEvent packed = model::PackEvent(event);
        const size_t cost = packed.key.size() + packed.bytes.size();
        if (used + cost > budget) {
          ++dropped;
          continue;
        }
        used += cost;
        events.push_back(PutOp{std::move(packed.key), std::move(packed.bytes), std::nullopt, model::kEventTtlSeconds});
      }
      if (dropped > 0) {
        log->warn("{}: dropped {} of {} events: with them the write would pass {} bytes", current->key, dropped,
                  result.events.size(), budget);
      }
      if (remove) return client::Mutation::Delete(std::move(events));
      return client::Mutation::Put(std::move(packed_pod), std::move(events));
    };
    items.push_back(std::move(item));
  }
  client::UpdatePolicy policy;
  policy.max_attempts = kMaxAttempts;
  policy.retry_errors = true;
  policy.stopping = [this] { return pull_.stopping(); };
  std::vector<client::UpdateOutcome> outcomes = client::UpdateBatch(w.client, std::move(items), policy);

  size_t given_up = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    client::UpdateOutcome& o = outcomes[i];
    const std::string& key = reports[i].pod_key;
    if (!o.written) {
      w.written.erase(key);
      if (o.status.code() == Code::kConflict || o.status.code() == Code::kIOError ||
          o.status.code() == Code::kUnavailable) {
        ++given_up;
      }
      continue;
    }
    if (o.value.empty()) {  // the pod was removed
      w.written.erase(key);
      w.ledger.Forget(reports[i].pod_uid);
      continue;
    }
    if (w.written.size() >= kMaxRemembered) {
      // Bounded memory: forget both what was written and which report
      // revisions were folded (as after a restart).
      w.written.clear();
      w.ledger = ReportLedger();
    }
    w.written[key] = KeyValue{key, std::move(o.value), {}, o.revision};
  }
  if (given_up > 0 && !pull_.stopping()) {
    log->error("gave up on the reports of {} pod(s) after {} attempts; their status waits for the next report",
               given_up, kMaxAttempts);
  }
}

}  // namespace podflow::status
