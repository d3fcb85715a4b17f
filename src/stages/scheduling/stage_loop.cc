#include "stages/scheduling/stage_loop.h"

#include <random>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "base/logging.h"
#include "stages/scheduling/scheduling_stage.h"

namespace podflow::scheduling {
namespace {

constexpr uint32_t kEventNamerInstance = 300;
// Cycles run back to back before the informers are read again.
constexpr int kCyclesPerPoll = 64;
// How often the stage logs what its cycles measured (a line per interval
// with attempts, their outcome and where the time went).
constexpr std::chrono::seconds kMetricsLogInterval{30};
// The pause after a failed step (the log did not answer).
constexpr std::chrono::milliseconds kRetryPause{200};

// A run id: distinct across starts of the stage (time and randomness).
uint64_t NewRunId() {
  std::random_device device;
  const uint64_t r = (static_cast<uint64_t>(device()) << 32) ^ device();
  return r ^ static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The `scheduler:` section as YAML text ("" when absent).
std::string ConfigText(const YAML::Node& section) {
  if (!section || section.IsNull()) return "";
  YAML::Emitter out;
  out << section;
  return out.c_str();
}

}  // namespace

StageLoop::StageLoop(pipeline::StageContext& context, const std::vector<scheduler::Profile>& profiles)
    : context_(context),
      log_(Logger("stage.scheduling")),
      client_(context.bus, context.Endpoint("api"), std::string(SchedulingStage::kName)),
      decisions_(context.bus, context.Endpoint("decisions"), std::string(SchedulingStage::kName)),
      namer_(kEventNamerInstance),
      core_(profiles),
      run_(NewRunId()),
      metrics_logged_(Clock::now()) {
  for (SchedulerCore::Feed& feed : core_.Feeds()) {
    followed_.push_back(
        {std::make_unique<client::Informer>(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                                            feed.prefix),
         client::Informer::Handlers{
             [upsert = feed.upsert](const KeyValue& kv) {
               upsert(scheduler::StoredObject{kv.key, kv.value, kv.mod_revision}, Clock::now());
             },
             [remove = feed.remove](const std::string& key) { remove(key, Clock::now()); }}});
  }
}

void StageLoop::Run(const std::atomic<bool>& stopping) {
  while (!stopping) {
    LogMetrics();
    if (!RecordRun() || !Sync() || !Poll()) {
      std::this_thread::sleep_for(kRetryPause);
      continue;
    }
    core_.ExpireAssumed(Clock::now());
    RunCycles(stopping);
  }
}

void StageLoop::LogMetrics() {
  if (Clock::now() - metrics_logged_ >= kMetricsLogInterval && core_.metrics().total_attempts() > 0) {
    log_->info("scheduling: {}", core_.metrics().Summary());
    core_.metrics().Reset();
    metrics_logged_ = Clock::now();
  }
}

bool StageLoop::RecordRun() {
  if (run_recorded_) return true;
  const std::string record =
      scheduler::EncodeSchedulerRun(run_, NowMs(), ConfigText(context_.config.Section("scheduler")));
  Result<client::WriteResult> w = client_.Write({PutOp{scheduler::SchedulerRunKey(run_), record}});
  if (!w.ok()) {
    log_->warn("recording the scheduler run: {}", w.status().ToString());
    return false;
  }
  run_recorded_ = true;
  return true;
}

bool StageLoop::Sync() {
  if (synced_) return true;
  Status s;
  for (Followed& f : followed_) {
    if (s.ok()) s = f.informer->Sync(f.handlers);
  }
  if (!s.ok()) {
    log_->warn("listing nodes and pods: {}", s.ToString());
    return false;
  }
  synced_ = true;
  return true;
}

bool StageLoop::Poll() {
  const bool busy = core_.queue().active_size() > 0;
  // The last informer (pods) waits a little when there is nothing to do.
  Status polled;
  for (size_t i = 0; i < followed_.size() && polled.ok(); ++i) {
    const bool last = i + 1 == followed_.size();
    polled = followed_[i].informer->Poll(std::chrono::milliseconds(last && !busy ? 20 : 0), followed_[i].handlers);
  }
  if (!polled.ok()) {
    log_->warn("following nodes and pods: {}", polled.ToString());
    return false;
  }
  return true;
}

void StageLoop::RunCycles(const std::atomic<bool>& stopping) {
  for (int i = 0; i < kCyclesPerPoll && !stopping; ++i) {
    std::optional<Result<Outcome>> next = core_.Next(Clock::now());
    if (!next) break;
    if (!next->ok()) {
      log_->error("scheduling cycle failed: {}", next->status().ToString());
      continue;
    }
    const Outcome& outcome = **next;
    if (!outcome.decision.scheduled()) {
      log_->info("{}: {}", outcome.key, outcome.decision.message);
      RecordUnschedulable(outcome);
      continue;
    }
    HandToBinding(outcome);
  }
}

void StageLoop::HandToBinding(const Outcome& outcome) {
  // Binding stores the explanation in the transaction that binds the pod.
  const std::string explanation = Explain(outcome);
  flatbuffers::FlatBufferBuilder fbb(1024 + explanation.size());
  auto body = msg::CreateDecision(
      fbb, fbb.CreateString(outcome.key), fbb.CreateString(outcome.uid), outcome.mod_revision.value(),
      fbb.CreateString(outcome.decision.node), fbb.CreateString(outcome.profile->scheduler_name()),
      fbb.CreateVector(reinterpret_cast<const uint8_t*>(explanation.data()), explanation.size()),
      fbb.CreateVector(reinterpret_cast<const uint8_t*>(outcome.pod_bytes.data()), outcome.pod_bytes.size()));
  Status pushed = decisions_.Push(bus::FinishFrame(fbb, msg::Body::Decision, body.Union()));
  if (!pushed.ok()) {
    log_->warn("handing {} to binding: {}", outcome.key, pushed.ToString());
    core_.Unassume(outcome.key, Clock::now());
    return;
  }
  log_->debug("{} -> {} ({} feasible of {})", outcome.key, outcome.decision.node, outcome.decision.feasible_nodes,
              outcome.decision.num_all_nodes);
}

std::string StageLoop::Explain(const Outcome& outcome) {
  scheduler::DecisionContext c;
  c.pod_key = outcome.key;
  c.pod_uid = outcome.uid;
  c.pod_mod_revision = outcome.mod_revision.value();
  c.profile = outcome.profile->scheduler_name();
  c.start_node_index = outcome.start_node_index;
  for (const Followed& f : followed_) {
    c.sources.push_back({f.informer->prefix(), f.informer->list_revision().value(), f.informer->revision().value()});
  }
  c.run = run_;
  c.seq = ++seq_;
  c.assumed_pods = core_.assumed_pods();
  c.decided_at_ms = NowMs();
  return scheduler::EncodeDecisionRecord(outcome.decision, c);
}

}  // namespace podflow::scheduling
