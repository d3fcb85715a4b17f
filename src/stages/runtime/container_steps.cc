// PodRunner: one container's transitions — image, create, start, exit — and
// the image pull back-off (kubelet: 10s initial, doubling, 300s cap).
#include <algorithm>

#include "base/hex_id.h"
#include "model/quantity.h"
#include "stages/runtime/kubelet_text.h"
#include "stages/runtime/pod_runner.h"
#include "stages/runtime/security_context.h"

namespace podflow::runtime {
namespace {

namespace text = kubelet_text;

// The policy admission would have defaulted: Always for :latest (or no tag).
api::PullPolicy EffectivePolicy(const api::ContainerT& c) {
  if (c.image_pull_policy != api::PullPolicy::Unset) return c.image_pull_policy;
  const ImageReference ref = NormalizeImageReference(c.image);
  return ref.digest.empty() && ref.tag == "latest" ? api::PullPolicy::Always
                                                   : api::PullPolicy::IfNotPresent;
}

}  // namespace

void PodRunner::SetWaiting(Box& box, std::string reason, std::string message) {
  auto& state = box.status->state = std::make_unique<api::ContainerStateT>();
  state->waiting = std::make_unique<api::ContainerStateWaitingT>();
  state->waiting->reason = std::move(reason);
  state->waiting->message = std::move(message);
}

void PodRunner::EnsureImage(Box& box, SimTime t) {
  const std::string& image_ref = box.spec->image;
  if (std::optional<std::string> why = model::InvalidImageReference(image_ref)) {
    // kubelet checks the reference before anything else and tries again on
    // each sync; it stays wrong until the pod's image is changed.
    const std::string message = text::InvalidImage(image_ref, *why);
    Event(t, "Warning", text::kInspectFailed, message, box.field_path);
    Event(t, "Warning", text::kFailed, text::Error(text::kInvalidImageName), box.field_path);
    SetWaiting(box, text::kInvalidImageName, message);
    box.stage = Stage::kIdle;
    if (!box.init) AdvanceCursor(box, t);
    return;
  }
  const std::optional<ResolvedImage>& image = box.image;
  const bool present = image && node_->HasImage(image->canonical, t);
  const api::PullPolicy policy = EffectivePolicy(*box.spec);
  if (present && policy != api::PullPolicy::Always) {
    Event(t, "Normal", text::kPulled, text::AlreadyPresent(image_ref), box.field_path);
    Create(box, t);
    return;
  }
  if (policy == api::PullPolicy::Never) {
    Event(t, "Warning", text::kErrImageNeverPull, text::NeverPull(image_ref), box.field_path);
    Event(t, "Warning", text::kFailed, text::Error(text::kErrImageNeverPull), box.field_path);
    SetWaiting(box, text::kErrImageNeverPull, text::NeverPull(image_ref));
    box.stage = Stage::kIdle;
    if (!box.init) AdvanceCursor(box, t);
    return;
  }
  Event(t, "Normal", text::kPulling, text::PullingImage(image_ref), box.field_path);
  if (!image) {
    box.stage = Stage::kPullFailed;
    box.due = t + node_->timing().failed_pull;
    return;
  }
  const PullTicket ticket = node_->RequestPull(*image, t);
  box.pull_asked = t;
  box.pull_done = ticket.done;
  box.pulling = ticket.pulling;
  box.stage = Stage::kPullDone;
  box.due = ticket.done;
}

void PodRunner::PullFailed(Box& box, SimTime t) {
  const RuntimeTiming& timing = node_->timing();
  const std::string& image_ref = box.spec->image;
  box.pull_error = text::PullNotFound(NormalizeImageReference(image_ref).Canonical());
  Event(t, "Warning", text::kFailed, text::FailedToPull(image_ref, box.pull_error), box.field_path);
  Event(t, "Warning", text::kFailed, text::Error(text::kErrImagePull), box.field_path);
  SetWaiting(box, text::kErrImagePull, box.pull_error);
  box.backoff = box.backoff.count() == 0 ? timing.backoff_initial
                                         : std::min(box.backoff * 2, timing.backoff_max);
  box.retry_at = t + box.backoff;
  if (timing.backoff_notice < box.backoff) {
    box.stage = Stage::kShowBackOff;
    box.due = t + timing.backoff_notice;
  } else {
    box.stage = Stage::kEnsureImage;
    box.due = box.retry_at;
  }
  // An app container in back-off does not hold up the next one; an init
  // container does (the pod cannot initialize past it).
  if (!box.init) AdvanceCursor(box, t);
}

void PodRunner::ShowBackOff(Box& box, SimTime t) {
  const std::string& image_ref = box.spec->image;
  Event(t, "Normal", text::kBackOff, text::BackOffPulling(image_ref), box.field_path);
  Event(t, "Warning", text::kFailed, text::Error(text::kImagePullBackOff), box.field_path);
  SetWaiting(box, text::kImagePullBackOff,
             text::BackOffPulling(image_ref) + ": " + text::kErrImagePull + ": " + box.pull_error);
  box.stage = Stage::kEnsureImage;
  box.due = box.retry_at;
}

void PodRunner::Create(Box& box, SimTime t) {
  const PodFacts facts{status_.pod_ip, node_->host_ip(), &node_->node().capacity};
  Result<EnvList> env = KubeletEnv(*assignment_.pod, *box.spec, facts, node_->sources());
  ContainerPlan plan;
  if (env.ok()) plan = PlanContainer(*assignment_.pod, *box.spec, box.image ? &*box.image : nullptr, *env);
  if (env.ok() && plan.config_error.empty()) plan.config_error = SubPathError(*box.spec, *env);
  if (env.ok() && plan.config_error.empty()) {
    // A process node's "image" runs as root (its command runs as the
    // machine's files are, no image user); a simulated one's user is not known.
    plan.config_error = RunAsNonRootError(*assignment_.pod, *box.spec,
                                          node_->host() != nullptr ? std::optional<int64_t>(0) : std::nullopt);
  }
  const std::string& config_error = env.ok() ? plan.config_error : env.status().message();
  if (!env.ok() || !config_error.empty()) {
    // kubelet cannot make the container's config: it is not created. A
    // missing source may appear: the pod's next sync tries again (the
    // image check first, as kubelet's start of a container does); a bad
    // behaviour annotation cannot change.
    Event(t, "Warning", text::kFailed, text::Error(config_error), box.field_path);
    // A container that ended and is to be made again stays lastState.
    if (box.restarting && box.status->state && box.status->state->terminated) EndedIsLast(box);
    SetWaiting(box, text::kCreateContainerConfigError, config_error);
    box.stage = env.ok() ? Stage::kIdle : Stage::kEnsureImage;
    if (!env.ok()) box.due = t + node_->timing().sync_retry;
    if (!box.init) AdvanceCursor(box, t);
    return;
  }
  const api::LifecycleT* lifecycle = box.spec->lifecycle.get();
  if (lifecycle && ((lifecycle->pre_stop && lifecycle->pre_stop->exec) ||
                    (lifecycle->post_start && lifecycle->post_start->exec))) {
    box.hook_env = ContainerEnv(*assignment_.pod, *env);
  }
  box.env = node_->host() != nullptr ? ContainerEnv(*assignment_.pod, *env) : EnvList{};
  if (box.restarting) {
    // A new container: the one that ended becomes lastState, and its log
    // the previous one.
    box.restarting = false;
    if (box.status->state && box.status->state->terminated) EndedIsLast(box);
    box.status->restart_count += 1;
  }
  box.plan = std::move(plan);
  box.ended_at.reset();
  const ResolvedImage& image = *box.image;
  box.status->image = image.canonical;
  box.status->image_id = image.image_id;
  box.status->container_id =
      std::string(node_->host() != nullptr ? "podflow-process://" : "podflow-sim://") + DeterministicHex(assignment_.pod->metadata->uid + "/" + box.spec->name +
                                          "/" + std::to_string(box.status->restart_count));
  SetWaiting(box, text::kContainerCreating);
  Event(t, "Normal", text::kCreated, text::CreatedContainer(box.spec->name), box.field_path);
  const SimDuration start = box.plan.behavior.start_delay.value_or(node_->timing().container_start);
  if (start.count() == 0) {
    Start(box, t);
  } else {
    box.stage = Stage::kStart;
    box.due = t + start;
  }
}

namespace {

// The container's resources.limits (or requests) entry for `name`.
std::optional<model::Quantity> Resource(const api::ContainerT& c, bool limits, std::string_view name) {
  if (c.resources == nullptr) return std::nullopt;
  for (const auto& e : limits ? c.resources->limits : c.resources->requests) {
    if (e && e->key == name) {
      Result<model::Quantity> q = model::Quantity::Parse(e->value);
      if (q.ok()) return *q;
    }
  }
  return std::nullopt;
}

// The container's memory limit in bytes, or nullopt.
std::optional<int64_t> MemoryLimit(const api::ContainerT& c) {
  std::optional<model::Quantity> q = Resource(c, true, "memory");
  return q ? std::optional<int64_t>(q->Value()) : std::nullopt;
}

// The container's limits.cpu (or requests.cpu) in millicores, or nullopt.
std::optional<int64_t> MilliCpu(const api::ContainerT& c, bool limits) {
  std::optional<model::Quantity> q = Resource(c, limits, "cpu");
  return q ? std::optional<int64_t>(q->MilliValue()) : std::nullopt;
}

// A grace period past this (about 30 years) is taken as this: time sums stay
// far from overflow.
constexpr int64_t kMaxGraceSeconds = 1'000'000'000;

// kubelet reads at most 4096 bytes of a container's termination message.
constexpr size_t kMaxTerminationMessage = 4096;

// kubelet keeps the tail of a failed container's log as its message:
// at most 80 lines and 2048 bytes (FallbackToLogsOnError).
std::string LogTail(const std::vector<std::string>& lines) {
  constexpr size_t kMaxLines = 80, kMaxBytes = 2048;
  std::string out;
  const size_t first = lines.size() > kMaxLines ? lines.size() - kMaxLines : 0;
  for (size_t i = first; i < lines.size(); ++i) out += lines[i] + "\n";
  if (out.size() > kMaxBytes) out = out.substr(out.size() - kMaxBytes);
  return out;
}

}  // namespace

bool PodRunner::LaunchProcess(Box& box, SimTime t) {
  ContainerLaunch launch;
  launch.pod_key = assignment_.pod_key;
  launch.log_dir = PodLogDir() + "/" + box.spec->name;
  launch.restart_count = box.status->restart_count;
  launch.argv = ProcessArgv(*box.spec, box.image ? &*box.image : nullptr, box.env);
  launch.env = box.env;
  launch.working_dir = box.spec->working_dir;
  // kubelet's: at most 63 characters, no '-' or '.' left at the end.
  std::string hostname = spec_.hostname.empty() ? assignment_.pod->metadata->name : spec_.hostname;
  if (hostname.size() > 63) {
    hostname.resize(63);
    while (!hostname.empty() && (hostname.back() == '-' || hostname.back() == '.')) hostname.pop_back();
  }
  launch.hostname = std::move(hostname);
  launch.network = network_;
  launch.memory_limit_bytes = MemoryLimit(*box.spec);
  launch.cpu_limit_milli = MilliCpu(*box.spec, true);
  launch.cpu_request_milli = MilliCpu(*box.spec, false);
  launch.security = SecurityOf(*assignment_.pod, *box.spec);
  for (const auto& m : box.spec->volume_mounts) {
    auto volume = m ? volumes_.find(m->name) : volumes_.end();
    if (volume == volumes_.end()) continue;
    launch.mounts.push_back(
        {volume->second.path, MountSubPath(*m, box.env), m->mount_path, m->read_only || volume->second.read_only});
  }
  // kubelet's /etc/hosts and /etc/resolv.conf, unless the container mounts
  // something of its own there.
  for (const char* file : {"hosts", "resolv.conf"}) {
    const std::string target = std::string("/etc/") + file;
    const bool own = std::any_of(box.spec->volume_mounts.begin(), box.spec->volume_mounts.end(),
                                 [&](const auto& m) { return m && m->mount_path == target; });
    if (!etc_dir_.empty() && !own) launch.mounts.push_back({etc_dir_, file, target, false});
  }
  Result<ProcessId> id = node_->host()->Launch(launch);
  if (id.ok()) {
    box.process = *id;
    return true;
  }
  // The runtime could not start it: kubelet shows the container terminated
  // with StartError (exit code 128) and restarts it as its policy says.
  const std::string message = text::StartFailed(id.status().message());
  Event(t, "Warning", text::kFailed, text::Error(message), box.field_path);
  auto& state = box.status->state = std::make_unique<api::ContainerStateT>();
  auto& term = state->terminated = std::make_unique<api::ContainerStateTerminatedT>();
  term->exit_code = 128;
  term->reason = text::kStartError;
  term->message = message;
  term->started_at = FormatRfc3339(SimTime{});
  term->finished_at = FormatRfc3339(t);
  term->container_id = box.status->container_id;
  box.stage = Stage::kIdle;
  box.started_at = t;
  box.ended_at = t;
  box.status->ready = false;
  box.status->started = false;
  AfterExit(box, t, 128, false);
  if (!box.init) AdvanceCursor(box, t);
  return false;
}

void PodRunner::Start(Box& box, SimTime t) {
  if (node_->host() != nullptr && !LaunchProcess(box, t)) return;
  Event(t, "Normal", text::kStarted, text::StartedContainer(box.spec->name), box.field_path);
  box.started_at = t;
  box.stage = Stage::kIdle;
  box.exit_at.reset();  // a process's own exit may come from now on (ProcessExited)
  box.oom = false;
  const api::LifecycleT* lifecycle = box.spec->lifecycle.get();
  // An exec hook on a process node runs for real; its end comes back as a
  // probe's does (HookFinished).
  if (lifecycle && (box.post_start_pending = StartExecHook(box, lifecycle->post_start.get(), model::kNever))) {
    box.stage = Stage::kPostStart;
    box.due.reset();
    return;
  }
  const std::optional<HookRun> hook = PostStartHook(box.plan, *box.spec, box.hook_env);
  if (!hook) {
    Running(box, t);
    return;
  }
  // kubelet runs the hook before anything else of the pod: the container
  // stays ContainerCreating meanwhile.
  box.post_start_failed = hook->failed;
  box.stage = Stage::kPostStart;
  if (hook->takes != model::kNever) box.due = t + std::min(hook->takes, SimDuration(kMaxGraceSeconds * 1000));
}

void PodRunner::PostStartEnded(Box& box, SimTime t) {
  const bool failed = box.post_start_failed;
  box.post_start_failed = false;
  if (!failed) {
    Running(box, t);
    return;
  }
  // kubelet kills it within the same sync: it is never shown running, and
  // the sync goes on to the next container (not past a regular init one).
  box.stage = Stage::kIdle;
  Event(t, "Warning", text::kFailedPostStartHook, text::kPostStartHookFailed, box.field_path);
  Event(t, "Normal", text::kKilling, text::kFailedPostStartHook, box.field_path);
  Kill(box, t, PolicyOf(box) != api::RestartPolicy::Never, nullptr);
  if (!box.init || box.sidecar) AdvanceCursor(box, t);
}

void PodRunner::Running(Box& box, SimTime t) {
  const SimTime started = box.started_at;
  auto& state = box.status->state = std::make_unique<api::ContainerStateT>();
  state->running = std::make_unique<api::ContainerStateRunningT>();
  state->running->started_at = FormatRfc3339(started);
  box.stage = Stage::kIdle;
  box.status->ready = false;
  box.status->started = false;
  const model::SimBehavior& b = box.plan.behavior;
  if (node_->host() != nullptr) {
    // A real process: it ends when it ends (ProcessExited, perhaps already).
  } else if (b.exit_after && *b.exit_after != model::kNever) {
    box.exit_at = std::max(t, started + *b.exit_after);
  } else if (!b.exit_after && box.init && !box.sidecar) {
    box.exit_at = std::max(t, started + node_->timing().init_run);  // an init container does its work and exits
  }
  if (b.memory_bytes && node_->host() == nullptr) {
    const std::optional<int64_t> limit = MemoryLimit(*box.spec);
    if (limit && *b.memory_bytes > *limit) {
      const SimTime oom_at = std::max(t, started + b.memory_after.value_or(SimDuration(0)));
      if (!box.exit_at || oom_at <= *box.exit_at) {
        box.exit_at = oom_at;
        box.oom = true;
      }
    }
  }
  StartProbes(box, t);
  if (!box.init) AdvanceCursor(box, t);  // app containers start side by side
}

void PodRunner::Exited(Box& box, SimTime t, int32_t code, std::string reason) {
  // It ended within its postStart hook (which then fails, as kubelet's
  // against a dead container) or within the kill of a failed one: the sync
  // goes on to the next container.
  const bool in_hook = box.stage == Stage::kPostStart || !(box.status->state && box.status->state->running);
  // Its hooks' commands ended with it: what they tell now is of no run.
  box.post_start_pending.reset();
  box.pre_stop_pending.reset();
  if (box.stage == Stage::kPostStart) {
    box.stage = Stage::kIdle;
    box.due.reset();
    box.post_start_failed = false;
  }
  const std::string started_at = box.status->state && box.status->state->running
                                     ? box.status->state->running->started_at
                                     : FormatRfc3339(box.started_at);
  auto& state = box.status->state = std::make_unique<api::ContainerStateT>();
  auto& term = state->terminated = std::make_unique<api::ContainerStateTerminatedT>();
  term->exit_code = code;
  term->reason = std::move(reason);
  term->started_at = started_at;
  term->finished_at = FormatRfc3339(t);
  term->container_id = box.status->container_id;
  box.ended_at = t;
  const model::SimBehavior& b = box.plan.behavior;
  if (b.termination_message) {
    term->message = b.termination_message->substr(0, kMaxTerminationMessage);
  } else if (code != 0 && box.spec->termination_message_policy == api::TerminationMessagePolicy::FallbackToLogsOnError) {
    if (ContainerHost* host = node_->host()) {
      std::vector<std::string> lines;
      for (ContainerLogLine& l : host->ReadLog(PodLogDir() + "/" + box.spec->name, box.status->restart_count)) {
        lines.push_back(std::move(l.text));
      }
      term->message = LogTail(lines);
    } else if (b.logs) {
      term->message = LogTail(*b.logs);
    }
  }
  // A completed regular init container reports ready.
  box.status->ready = box.init && !box.sidecar && code == 0;
  box.status->started = false;
  box.exit_at.reset();
  box.stop_at.reset();
  box.stopping = false;
  box.oom = false;
  box.probes.clear();
  if (in_hook && (!box.init || box.sidecar)) AdvanceCursor(box, t);
}

void PodRunner::AfterExit(Box& box, SimTime t, int32_t code, bool killed) {
  const api::RestartPolicy policy = PolicyOf(box);
  const bool restart = !finishing_ && (policy == api::RestartPolicy::Always ||
                                       (policy == api::RestartPolicy::OnFailure && (code != 0 || killed)));
  if (!restart) {
    if (box.init && !box.sidecar && code == 0) AdvanceCursor(box, t);
    return;
  }
  // kubelet's back-off: none before the first restart, nor when the
  // container ran for more than twice the cap (10 min) since the last one.
  const RuntimeTiming& timing = node_->timing();
  if (!box.crash_updated || t - *box.crash_updated > timing.backoff_max * 2) {
    box.crash_backoff = timing.backoff_initial;
    box.crash_updated = t;
    Restart(box, t);
    return;
  }
  EndedIsLast(box);
  SetWaiting(box, text::kCrashLoopBackOff,
             text::BackOffRestartingMessage(box.crash_backoff, box.spec->name, PodRefText()));
  Event(t, "Warning", text::kBackOff, text::BackOffRestarting(box.spec->name, PodRefText()), box.field_path);
  box.stage = Stage::kRestart;
  box.due = t + box.crash_backoff;
}

void PodRunner::EndedIsLast(Box& box) {
  box.status->last_state = std::make_unique<api::ContainerStateT>();
  box.status->last_state->terminated = std::move(box.status->state->terminated);
  if (!box.previous) box.previous = std::make_unique<Box::PastRun>();
  auto& logs = box.plan.behavior.logs;
  box.previous->lines = logs ? std::move(*logs) : std::vector<std::string>{};
  logs.reset();
  box.previous->at = std::move(box.plan.log_at);
  box.plan.log_at.clear();
  box.previous->started = box.started_at;
  box.previous_run = box.status->restart_count;
  box.previous->ended = box.ended_at.value_or(box.started_at);
  box.ended_at.reset();  // `plan` holds no run now
}

// The container is made again: its image first. Until the new one is
// created the status shows the one that ended (terminated, or waiting in
// CrashLoopBackOff), as kubelet's does.
void PodRunner::Restart(Box& box, SimTime t) {
  box.restarting = true;
  box.stage = Stage::kEnsureImage;
  box.due = t;
}

SimDuration PodRunner::GracePeriod(const api::ProbeT* probe) const {
  if (probe != nullptr && probe->termination_grace_period_seconds) {
    return SimDuration(std::clamp<int64_t>(*probe->termination_grace_period_seconds, 0, kMaxGraceSeconds) * 1000);
  }
  return SimDuration(std::clamp<int64_t>(spec_.termination_grace_period_seconds.value_or(30), 0, kMaxGraceSeconds) *
                     1000);
}

void PodRunner::Kill(Box& box, SimTime t, bool restart, const api::ProbeT* probe) {
  StopWithPreStop(box, t, t + GracePeriod(probe), restart);
}

void PodRunner::StopWithPreStop(Box& box, SimTime t, SimTime deadline, bool restart) {
  deadline = std::max(t, deadline);
  const api::LifecycleT* lifecycle = box.spec->lifecycle.get();
  if (node_->host() != nullptr && box.process && lifecycle && lifecycle->pre_stop && lifecycle->pre_stop->exec) {
    // Run for real (once per run): the SIGTERM when it ends (HookFinished),
    // at the latest at the deadline.
    if (!box.pre_stop_pending) box.pre_stop_pending = StartExecHook(box, lifecycle->pre_stop.get(), deadline - t);
    Stop(box, deadline, deadline, restart);
    return;
  }
  const SimDuration hook = PreStopTime(box);
  Stop(box, hook >= deadline - t ? deadline : t + hook, deadline, restart);
}

std::optional<uint64_t> PodRunner::StartExecHook(const Box& box, const api::LifecycleHandlerT* handler,
                                                 SimDuration limit) {
  ContainerHost* host = node_->host();
  if (host == nullptr || handler == nullptr || handler->exec == nullptr || !box.process) return std::nullopt;
  ProbeCheck check;
  check.type = ProbeCheck::Type::kExec;
  check.container = *box.process;
  check.command = handler->exec->command;  // kubelet runs a hook's command as written
  check.env = box.env;
  check.working_dir = box.spec->working_dir;
  check.timeout = std::min(limit, SimDuration(kMaxGraceSeconds * 1000));
  check.hook = true;
  return host->StartProbe(assignment_.pod_key, check);
}

void PodRunner::HookFinished(Box& box, const ProbeOutcome& outcome) {
  const bool post_start = box.post_start_pending == outcome.probe;
  (post_start ? box.post_start_pending : box.pre_stop_pending).reset();
  // No result because the container ended: its exit says what follows.
  // Without one while it runs (the hook could not be started), it failed.
  if (outcome.errored && !box.process) return;
  const bool ok = outcome.ok && !outcome.errored;
  const SimTime at = std::max(outcome.at, box.started_at);
  if (post_start) {
    if (box.stage != Stage::kPostStart) return;  // a delete came first: it runs, and is being stopped
    box.post_start_failed = !ok;
    box.due = at;
    return;
  }
  if (box.stopping && box.process) {
    if (!ok) {
      Event(at, "Warning", text::kFailedPreStopHook, text::kPreStopHookFailed, box.field_path);
    }
    if (box.sigterm_at) {
      // The hook is over: SIGTERM now (it was due at the grace period's
      // end), SIGKILL then or the minimum after it.
      const SimTime deadline = *box.sigterm_at;
      ScheduleSignals(box, std::min(deadline, at), deadline);
    }
  }
}

void PodRunner::ScheduleSignals(Box& box, SimTime sigterm_at, SimTime sigkill_at) {
  box.sigterm_at = sigterm_at;
  box.sigkill_at = std::max(sigkill_at, sigterm_at + MinimumGrace());
}

void PodRunner::Stop(Box& box, SimTime sigterm_at, SimTime sigkill_at, bool restart) {
  sigkill_at = std::max(sigkill_at, sigterm_at + MinimumGrace());
  box.probes.clear();
  box.restart_after_stop = restart;
  box.stopping = true;
  if (node_->host() != nullptr) {
    // The process takes the signals; its exit ends the stop.
    if (box.exit_at) return;  // it has already ended
    ScheduleSignals(box, sigterm_at, sigkill_at);
    return;
  }
  box.exit_at.reset();
  const SimDuration stop = box.plan.behavior.stop_after.value_or(SimDuration(0));
  if (stop != model::kNever && sigterm_at <= sigkill_at && stop < sigkill_at - sigterm_at) {
    box.stop_at = sigterm_at + stop;  // it takes SIGTERM and exits
    box.stop_code = 0;
  } else {
    box.stop_at = sigkill_at;  // SIGTERM ignored, or too slow: SIGKILL
    box.stop_code = 137;
  }
}

SimDuration PodRunner::PreStopTime(const Box& box) const {
  const api::LifecycleT* lifecycle = box.spec->lifecycle.get();
  const api::LifecycleHandlerT* hook = lifecycle ? lifecycle->pre_stop.get() : nullptr;
  if (hook == nullptr) return SimDuration(0);
  if (hook->sleep) return SimDuration(std::clamp<int64_t>(hook->sleep->seconds, 0, kMaxGraceSeconds) * 1000);
  if (hook->exec) {
    // The hook's command, read as a container's would be.
    const ScriptReading r = ReadCommand(hook->exec->command, box.hook_env);
    if (r.behavior.exit_after) return *r.behavior.exit_after;  // kNever: until the SIGKILL
  }
  return SimDuration(0);
}

}  // namespace podflow::runtime
