#include "stages/status/status_stage.h"

#include <set>
#include <string_view>
#include <unordered_map>

#include "base/logging.h"
#include "model/events.h"
#include "model/objects.h"
#include "model/report.h"
#include "stages/persistence/persistence.h"
#include "stages/status/status.h"

namespace podflow::status {
namespace {

// Kubernetes' default --event-ttl.
// Guarded writes lost to concurrent writers before a report is given up.
constexpr int kMaxAttempts = 8;
// Distinguishes this stage's event names from other stages' (EventNamer).
constexpr uint32_t kEventNamerInstance = 100;  // + worker index
// Reports folded in parallel (distinct pods); their writes share group commits.
constexpr size_t kWorkers = 8;

}  // namespace

// What one worker owns: the log client is one-thread-at-a-time, and a pod's
// reports (hence its ledger entries) always land on the same worker.
struct StatusStage::Worker {
  persistence::Client client;
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

StatusStage::StatusStage(pipeline::StageContext& context) : context_(context) {}
StatusStage::~StatusStage() = default;

Status StatusStage::Start() {
  reports_ = std::make_unique<bus::Puller>(context_.zmq, context_.Endpoint("reports"));
  PODFLOW_RETURN_IF_ERROR(reports_->Bind());
  for (size_t i = 0; i < kWorkers; ++i) {
    workers_.push_back(std::unique_ptr<Worker>(new Worker{
        persistence::Client(context_.zmq, context_.Endpoint("api"), std::string(kName)),
        model::EventNamer(kEventNamerInstance + static_cast<uint32_t>(i)), ReportLedger()}));
  }
  lanes_ = std::make_unique<pipeline::ShardedWorkers<model::Report>>(
      kWorkers, [this](size_t worker, std::vector<model::Report>& batch) { Apply(worker, batch); });
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void StatusStage::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
  lanes_->Stop();
  lanes_.reset();
  workers_.clear();
  reports_.reset();
}

void StatusStage::Loop() {
  auto log = Logger("stage.status");
  while (!stopping_) {
    Result<bus::Frame> frame = reports_->Pull(std::chrono::milliseconds(100));
    if (!frame.ok()) continue;  // timeout; malformed frames were logged by the puller
    Result<model::Report> report = model::DecodeReport(frame->bytes());
    if (!report.ok()) {
      log->warn("dropped a report frame: {}", report.status().ToString());
      continue;
    }
    std::string key = report->pod_key;
    lanes_->Submit(key, std::move(*report));
  }
}

void StatusStage::Apply(size_t index, std::vector<model::Report>& reports) {
  static auto log = Logger("stage.status");
  Worker& w = *workers_[index];
  model::CoalesceReports(reports);
  std::vector<const model::Report*> todo;
  for (const model::Report& r : reports) todo.push_back(&r);

  // One pod's part of the transaction being built.
  struct Folded {
    const model::Report* report;
    KeyValue kv;  // the new stored pod (value) and the guard (mod_revision)
  };
  for (int attempt = 1; attempt <= kMaxAttempts && !todo.empty() && !stopping_; ++attempt) {
    std::vector<const model::Report*> later;  // to fold again in the next round
    std::vector<Folded> folded;
    std::vector<TxnOp> ops;
    std::set<std::string_view> keys;  // a key once per transaction
    for (const model::Report* report : todo) {
      if (keys.contains(report->pod_key)) {  // the same name, another pod: next round
        later.push_back(report);
        continue;
      }
      KeyValue kv;
      auto remembered = w.written.find(report->pod_key);
      const bool from_memory = remembered != w.written.end();
      if (from_memory) {
        kv = remembered->second;
      } else {
        Result<RangeResult> read = w.client.Read(RangeRequest{report->pod_key});
        if (!read.ok()) {
          log->warn("reading {}: {}", report->pod_key, read.status().ToString());
          later.push_back(report);
          continue;
        }
        if (read->kvs.empty()) {
          w.ledger.Forget(report->pod_uid);  // deleted: nothing to report on
          continue;
        }
        kv = std::move(read->kvs[0]);
        Status valid = model::VerifyObject(model::Kind("Pod"), kv.value);
        if (!valid.ok()) {
          log->error("{}: stored pod does not verify: {}", kv.key, valid.ToString());
          continue;
        }
      }
      std::unique_ptr<api::PodT> pod = model::Unpack<api::Pod>(kv.value);
      if (!pod->metadata || !pod->spec) continue;
      FoldResult result = FoldReport(*pod, *report, WallClockNow(), w.namer, w.ledger);
      if (result.verdict != FoldVerdict::kApplied) {
        if (from_memory) {  // perhaps only our memory is out of date: read it
          w.written.erase(report->pod_key);
          later.push_back(report);
        } else {
          log->debug("report for {} ignored ({}): {}", kv.key, FoldVerdictName(result.verdict), result.why);
        }
        continue;
      }
      pod->status = std::make_unique<api::PodStatusT>(std::move(result.status));
      kv.value = model::Pack(*pod);
      ops.push_back(PutOp{kv.key, kv.value, kv.mod_revision});
      for (const api::EventT& event : result.events) {
        model::PackedEvent packed = model::PackEvent(event);
        ops.push_back(PutOp{std::move(packed.key), std::move(packed.bytes), std::nullopt, model::kEventTtlSeconds});
      }
      keys.insert(report->pod_key);
      folded.push_back(Folded{report, std::move(kv)});
    }
    if (folded.empty()) {
      todo = std::move(later);
      continue;
    }

    Result<persistence::WriteResult> written = w.client.Write(ops);
    if (written.ok() && written->succeeded) {
      if (w.written.size() + folded.size() > kMaxRemembered) {
        // Bounded memory: forget both what was written and which report
        // revisions were folded (as after a restart).
        w.written.clear();
        w.ledger = ReportLedger();
      }
      for (Folded& f : folded) {
        f.kv.mod_revision = written->revision;
        w.written[f.report->pod_key] = std::move(f.kv);
      }
      todo = std::move(later);
      continue;
    }
    // Nothing was written. A failed guard names the pod someone else wrote
    // meanwhile: it is read again; the others fold again as they were.
    if (!written.ok()) {
      log->warn("writing the status of {} pod(s): {}", folded.size(), written.status().ToString());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } else if (written->failed_op < ops.size()) {
      const std::string& failed_key = std::get<PutOp>(ops[written->failed_op]).key;
      w.written.erase(failed_key);
    }
    todo.clear();
    for (const Folded& f : folded) todo.push_back(f.report);
    for (const model::Report* r : later) todo.push_back(r);
  }
  if (!todo.empty() && !stopping_) {
    log->error("gave up on the reports of {} pod(s) after {} attempts; their status waits for the next report",
               todo.size(), kMaxAttempts);
  }
}

}  // namespace podflow::status
