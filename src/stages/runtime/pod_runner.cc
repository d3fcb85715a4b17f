// PodRunner: the pod-level steps (sandbox, sequencing, the report). The
// per-container transitions are in container_steps.cc.
#include "stages/runtime/pod_runner.h"

#include "stages/runtime/pod_dns.h"

#include <signal.h>

#include <algorithm>

#include "model/pod_phase.h"
#include "stages/runtime/kubelet_text.h"

namespace podflow::runtime {
namespace {

std::unique_ptr<api::ContainerStatusT> InitialStatus(const api::ContainerT& c, const char* reason) {
  auto s = std::make_unique<api::ContainerStatusT>();
  s->name = c.name;
  s->image = c.image;
  s->ready = false;
  s->restart_count = 0;
  s->started = false;
  s->state = std::make_unique<api::ContainerStateT>();
  s->state->waiting = std::make_unique<api::ContainerStateWaitingT>();
  s->state->waiting->reason = reason;
  return s;
}

}  // namespace

PodRunner::PodRunner(PodAssignment assignment, NodeRuntime* node, SimTime now)
    : assignment_(std::move(assignment)), spec_(*assignment_.pod->spec), node_(node) {
  using kubelet_text::kContainerCreating;
  using kubelet_text::kPodInitializing;
  const bool has_init = !spec_.init_containers.empty();
  boxes_.reserve(spec_.init_containers.size() + spec_.containers.size());
  status_.phase = api::PodPhase::Pending;
  status_.start_time = FormatRfc3339(now);
  auto ready_to_start = std::make_unique<api::PodConditionT>();
  ready_to_start->type = "PodReadyToStartContainers";
  ready_to_start->status = api::ConditionStatus::False;
  ready_to_start->last_transition_time = status_.start_time;
  status_.conditions.push_back(std::move(ready_to_start));
  for (const auto& c : spec_.init_containers) {
    status_.init_container_statuses.push_back(InitialStatus(*c, kPodInitializing));
    Box& box = boxes_.emplace_back();
    box.spec = c.get();
    box.init = true;
    box.sidecar = model::IsRestartableInitContainer(*c);
    box.field_path = "spec.initContainers{" + c->name + "}";
    box.status = status_.init_container_statuses.back().get();
  }
  for (const auto& c : spec_.containers) {
    status_.container_statuses.push_back(
        InitialStatus(*c, has_init ? kPodInitializing : kContainerCreating));
    Box& box = boxes_.emplace_back();
    box.spec = c.get();
    box.field_path = "spec.containers{" + c->name + "}";
    box.status = status_.container_statuses.back().get();
  }
  // The catalog does not change: each image is resolved once.
  for (Box& box : boxes_) box.image = node_->catalog().Resolve(box.spec->image);
  sandbox_due_ = now;
  if (spec_.active_deadline_seconds && *spec_.active_deadline_seconds > 0) {
    active_deadline_ = now + SimDuration(std::min<int64_t>(*spec_.active_deadline_seconds, 1'000'000'000) * 1000);
  }
}

PodRunner::~PodRunner() {
  if (ContainerHost* host = node_->host()) {
    // The pod is gone, or no longer this node's: nothing of it runs on.
    for (const Box& box : boxes_) {
      if (box.process) host->Signal(*box.process, SIGKILL);
    }
    // The CNI plugin's DEL: its namespace and veth go.
    if (own_network_) host->RemovePodNetwork(assignment_.pod->metadata->uid);
    if (claimed_ports_) host->ReleasePorts(PodName());
  }
  if (pod_ip_) node_->ip_pool().Release(*pod_ip_);
}

void PodRunner::RemoveFiles() const {
  if (ContainerHost* host = node_->host()) host->RemovePodFiles(PodLogDir());
}

Result<PodRunner::ExecInto> PodRunner::ExecTarget(const std::string& container) const {
  if (node_->host() == nullptr) {
    return Status::Invalid("pod " + kubelet_text::Quoted(assignment_.pod->metadata->name) + " runs on node " +
                           kubelet_text::Quoted(node_->node().name) +
                           ", a simulated node: its containers are not processes to exec in (runtime.type: process "
                           "runs them)");
  }
  for (const Box& box : boxes_) {
    if (box.spec->name != container) continue;
    if (!box.process) break;
    return ExecInto{*box.process, box.env, box.spec->working_dir};
  }
  return Status::NotFound("container not found (" + kubelet_text::Quoted(container) + ")");
}

bool PodRunner::ProcessExited(const ContainerExit& exit) {
  for (Box& box : boxes_) {
    if (box.process != exit.id) continue;
    box.process.reset();
    box.sigterm_at.reset();
    box.sigkill_at.reset();
    box.exit_code = exit.exit_code;
    box.oom = exit.oom_killed;
    box.exit_at = std::max(exit.at, box.started_at);
    return true;
  }
  return false;
}

std::string PodRunner::PodLogDir() const {
  const api::ObjectMetaT& m = *assignment_.pod->metadata;
  return runtime::PodLogDir(m.namespace_, m.name, m.uid);
}

std::optional<SimTime> PodRunner::BoxDue(const Box& box) {
  std::optional<SimTime> next = box.due;
  auto consider = [&next](const std::optional<SimTime>& at) {
    if (at && (!next || *at < *next)) next = at;
  };
  consider(box.stop_at);
  consider(box.sigterm_at);
  consider(box.sigkill_at);
  consider(box.exit_at);
  for (const ProbeRun& p : box.probes) {
    consider(p.next);
    if (p.outcome) consider(p.outcome->at);
  }
  return next;
}

std::optional<SimTime> PodRunner::due() const {
  if (terminal_) return report_due_;  // a finished pod only reports its deletion
  std::optional<SimTime> next = sandbox_due_;
  if (active_deadline_ && (!next || *active_deadline_ < *next)) next = active_deadline_;
  if (report_due_ && (!next || *report_due_ < *next)) next = report_due_;
  for (const Box& box : boxes_) {
    const std::optional<SimTime> at = BoxDue(box);
    if (at && (!next || *at < *next)) next = at;
  }
  return next;
}

void PodRunner::ObserveRevision(int64_t mod_revision) {
  assignment_.mod_revision = std::max(assignment_.mod_revision, mod_revision);
}

model::Report PodRunner::Step() {
  const SimTime t = *due();
  report_due_.reset();
  if (sandbox_due_ && *sandbox_due_ <= t) RunSandbox(t);
  if (active_deadline_ && *active_deadline_ <= t) DeadlineExceeded(t);
  // Work started at `t` (the next container in line) also runs at `t`.
  for (bool ran = true; ran;) {
    ran = false;
    for (Box& box : boxes_) {
      while (RunDue(box, t)) ran = true;
    }
    if (!ran) {
      StopSidecarsIfDone();
      if (finishing_) StopNextSidecar(t);
      for (Box& box : boxes_) {
        while (RunDue(box, t)) ran = true;
      }
    }
  }
  status_.phase = forced_phase_ ? *forced_phase_ : model::KubeletPhase(spec_, status_);
  if (finishing_ && status_.phase != api::PodPhase::Running && status_.phase != api::PodPhase::Pending) {
    // A process still running (its kill sent, its exit to come) holds it open.
    terminal_ = std::none_of(boxes_.begin(), boxes_.end(),
                             [](const Box& b) { return BoxDue(b).has_value() || b.process.has_value(); });
  }
  // A finished pod whose processes are all gone holds none of this
  // machine's ports, though its object stays.
  if (claimed_ports_ && (status_.phase == api::PodPhase::Succeeded || status_.phase == api::PodPhase::Failed) &&
      std::none_of(boxes_.begin(), boxes_.end(), [](const Box& b) { return b.process.has_value(); })) {
    node_->host()->ReleasePorts(PodName());
    claimed_ports_ = false;
  }

  model::Report report;
  report.node_name = node_->node().name;
  report.pod_key = assignment_.pod_key;
  report.pod_uid = assignment_.pod->metadata->uid;
  report.observed_mod_revision = assignment_.mod_revision;
  report.status = status_;
  report.events = std::move(events_);
  events_.clear();
  return report;
}

void PodRunner::RefreshVolumes() {
  ContainerHost* host = node_->host();
  if (host == nullptr || volumes_.empty()) return;
  const PodFacts facts{status_.pod_ip, node_->host_ip(), &node_->node().capacity};
  for (const VolumeSource& v : ResolveVolumes(*assignment_.pod, facts, node_->sources()).ready) {
    if (v.type == VolumeSource::Type::kFiles && volumes_.contains(v.name)) (void)host->SetUpVolume(PodLogDir(), v);
  }
}

// The files kubelet writes for every container of the pod: a pod without
// a network of its own is on its node's (a hostNetwork pod, or every pod
// of a process node without a pod network). The volume's name is none a
// user's can have.
void PodRunner::SetUpEtcFiles(SimTime t, ContainerHost& host, const std::string& pod_ip) {
  const bool on_node_network = !own_network_;
  DnsSettings dns = node_->dns();
  dns.node_resolv_conf = host.NodeResolvConf();
  ResolvConf resolv = PodResolvConf(*assignment_.pod, on_node_network, dns);
  for (const auto& [reason, message] : resolv.warnings) Event(t, "Warning", reason.c_str(), message, "");
  VolumeSource etc;
  etc.name = "~etc";
  etc.type = VolumeSource::Type::kFiles;
  etc.files = {{"hosts", HostsFile(*assignment_.pod, on_node_network, {pod_ip}, host.NodeHosts(), dns.cluster_domain)},
               {"resolv.conf", std::move(resolv.text)}};
  Result<std::string> at = host.SetUpVolume(PodLogDir(), etc);
  etc_dir_ = at.ok() ? *at : "";  // without them the containers see the node's own
}

std::string PodRunner::PodName() const {
  const api::ObjectMetaT& meta = *assignment_.pod->metadata;
  return (meta.namespace_.empty() ? "default" : meta.namespace_) + "/" + meta.name;
}

// The ports a pod on this machine's network listens on: each container's
// (and sidecar's) containerPort, which its process binds (a hostPort is
// mapped to nothing here; a hostNetwork pod's equals it).
std::vector<std::string> PodRunner::MachinePorts() const {
  std::vector<std::string> ports;
  const auto add = [&](const api::ContainerT& c) {
    for (const auto& p : c.ports) {
      if (!p) continue;
      const int32_t port = p->container_port;
      const char* protocol = p->protocol == api::Protocol::Unset ? "TCP" : api::EnumNameProtocol(p->protocol);
      if (port > 0) ports.push_back(std::to_string(port) + "/" + protocol);
    }
  };
  for (const auto& c : spec_.init_containers) {
    if (c && c->restart_policy == "Always") add(*c);
  }
  for (const auto& c : spec_.containers) {
    if (c) add(*c);
  }
  return ports;
}

void PodRunner::RunSandbox(SimTime t) {
  sandbox_due_.reset();
  // kubelet waits for the pod's volumes before it makes the sandbox.
  const PodFacts facts{status_.pod_ip, node_->host_ip(), &node_->node().capacity};
  PodVolumes volumes = ResolveVolumes(*assignment_.pod, facts, node_->sources());
  std::vector<VolumeFailure>& failed = volumes.failed;
  if (ContainerHost* host = node_->host(); host != nullptr && failed.empty()) {
    // A process node makes them for real.
    for (const VolumeSource& v : volumes.ready) {
      Result<std::string> at = host->SetUpVolume(PodLogDir(), v);
      if (at.ok()) {
        volumes_[v.name] = {std::move(*at), v.read_only};
      } else {
        failed.push_back({v.name, at.status().message()});
      }
    }
  }
  if (!failed.empty()) {
    for (const VolumeFailure& f : failed) {
      Event(t, "Warning", kubelet_text::kFailedMount, kubelet_text::MountSetUpFailed(f.volume, f.message), "");
    }
    constexpr SimDuration kFirst{500}, kMax{122'000};  // the volume manager's exponential back-off
    mount_backoff_ = mount_backoff_.count() == 0 ? kFirst : std::min(mount_backoff_ * 2, kMax);
    sandbox_due_ = t + mount_backoff_;
    return;
  }
  // A hostNetwork pod is on its node's network; so is every pod of a
  // process node that has no pod network (this machine's network).
  ContainerHost* host = node_->host();
  if (spec_.host_network || (host != nullptr && node_->network().empty())) {
    // On this machine's own network, its ports are this machine's.
    if (host != nullptr && node_->network().empty()) {
      if (Status claimed = host->ClaimPorts(PodName(), MachinePorts()); !claimed.ok()) {
        Event(t, "Warning", kubelet_text::kFailedCreatePodSandBox,
              "Failed to create pod sandbox: " + claimed.message(), "");
        sandbox_due_ = t + node_->timing().backoff_initial;
        return;
      }
      claimed_ports_ = true;
    }
    pod_ip_.reset();
    network_ = node_->network();
  } else {
    // The CNI plugin's ADD: an address from the podCIDR (host-local), and
    // on a process node the pod's namespace on the node's bridge.
    Result<Ipv4> ip = node_->ip_pool().Allocate();
    Status networked = ip.ok() ? Status::Ok() : ip.status();
    if (ip.ok() && host != nullptr) {
      Result<std::string> ns = host->AddPodNetwork(
          node_->node().name, assignment_.pod->metadata->uid,
          FormatIpv4(*ip) + "/" + std::to_string(node_->node().pod_cidr.prefix));
      if (ns.ok()) {
        network_ = std::move(*ns);
        own_network_ = true;
      } else {
        node_->ip_pool().Release(*ip);
        networked = ns.status();
      }
    }
    if (!networked.ok()) {
      // Kubelet retries the sandbox on its next sync.
      Event(t, "Warning", kubelet_text::kFailedCreatePodSandBox,
            "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup "
            "network for sandbox: plugin type=\"" + std::string(ip.ok() ? "bridge" : "host-local") +
                "\" failed (add): " + networked.message(),
            "");
      sandbox_due_ = t + node_->timing().backoff_initial;
      return;
    }
    pod_ip_ = *ip;
  }
  const std::string pod_ip = pod_ip_ ? FormatIpv4(*pod_ip_) : node_->host_ip();
  if (host != nullptr) SetUpEtcFiles(t, *host, pod_ip);
  status_.host_ip = node_->host_ip();
  status_.host_ips.clear();
  status_.host_ips.push_back(std::make_unique<api::HostIPT>());
  status_.host_ips.back()->ip = status_.host_ip;
  status_.pod_ip = pod_ip;
  status_.pod_ips.clear();
  status_.pod_ips.push_back(std::make_unique<api::PodIPT>());
  status_.pod_ips.back()->ip = pod_ip;
  status_.conditions[0]->status = api::ConditionStatus::True;
  status_.conditions[0]->last_transition_time = FormatRfc3339(t);
  if (!boxes_.empty()) {
    boxes_[0].stage = Stage::kEnsureImage;
    boxes_[0].due = t;
  }
}

bool PodRunner::RunDue(Box& box, SimTime t) {
  if (box.due && *box.due <= t) {
    box.due.reset();
    RunStage(box, t);
    return true;
  }
  if (box.stop_at && *box.stop_at <= t) {
    const int32_t code = box.stop_code;
    Exited(box, t, code, code == 0 ? kubelet_text::kCompleted : kubelet_text::kError);
    AfterExit(box, t, code, box.restart_after_stop);
    return true;
  }
  if (box.sigterm_at && *box.sigterm_at <= t) {
    box.sigterm_at.reset();
    if (box.process) node_->host()->Signal(*box.process, SIGTERM);
    return true;
  }
  if (box.sigkill_at && *box.sigkill_at <= t) {
    box.sigkill_at.reset();
    if (box.process) node_->host()->Signal(*box.process, SIGKILL);
    return true;
  }
  if (box.exit_at && *box.exit_at <= t) {
    const bool oom = box.oom;
    const bool killed = box.stopping && box.restart_after_stop;
    // A process's own code (the OOM killer may have ended a child of it);
    // a simulated OOM kill is SIGKILL's.
    const int32_t code = node_->host() != nullptr ? box.exit_code : oom ? 137 : box.plan.behavior.exit_code.value_or(0);
    Exited(box, t, code, oom ? kubelet_text::kOOMKilled : code == 0 ? kubelet_text::kCompleted : kubelet_text::kError);
    AfterExit(box, t, code, killed);
    return true;
  }
  for (ProbeRun& probe : box.probes) {
    if (probe.outcome && probe.outcome->at <= t) {
      Probe(box, probe, t);
      return true;
    }
    if (probe.next && *probe.next <= t) {
      probe.next.reset();
      if (probe.check) {
        // Run for real: the outcome comes back later (ProbeFinished). A
        // process that has just ended is not probed: its exit is next.
        if (box.process) {
          probe.check->container = *box.process;
          probe.pending = node_->host()->StartProbe(assignment_.pod_key, *probe.check);
          probe.launched = t;
        }
      } else {
        Probe(box, probe, t);
      }
      return true;
    }
  }
  return false;
}

bool PodRunner::ProbeFinished(const ProbeOutcome& outcome) {
  for (Box& box : boxes_) {
    if (box.post_start_pending == outcome.probe || box.pre_stop_pending == outcome.probe) {
      HookFinished(box, outcome);
      return true;
    }
    for (ProbeRun& probe : box.probes) {
      if (probe.pending != outcome.probe) continue;
      probe.pending.reset();
      if (outcome.errored) {
        // No result: the next one at its tick, as kubelet's prober goes on.
        probe.next = std::max(probe.launched + ProbePeriod(*probe.spec), outcome.at);
        return true;
      }
      probe.outcome = outcome;
      probe.outcome->at = std::max(outcome.at, box.started_at);
      return true;
    }
  }
  return false;
}

void PodRunner::RunStage(Box& box, SimTime t) {
  switch (box.stage) {
    case Stage::kEnsureImage:
      EnsureImage(box, t);
      break;
    case Stage::kPullDone:
      Event(t, "Normal", kubelet_text::kPulled,
            kubelet_text::SuccessfullyPulled(box.spec->image, box.pulling,
                                             box.pull_done - box.pull_asked,
                                             box.image->size_bytes),
            box.field_path);
      Create(box, t);
      break;
    case Stage::kPullFailed:
      PullFailed(box, t);
      break;
    case Stage::kShowBackOff:
      ShowBackOff(box, t);
      break;
    case Stage::kStart:
      Start(box, t);
      break;
    case Stage::kPostStart:
      PostStartEnded(box, t);
      break;
    case Stage::kRestart:
      box.crash_backoff = std::min(box.crash_backoff * 2, node_->timing().backoff_max);
      box.crash_updated = t;
      Restart(box, t);
      break;
    case Stage::kIdle:
      break;
  }
}

api::RestartPolicy PodRunner::PolicyOf(const Box& box) const {
  const api::RestartPolicy pod =
      spec_.restart_policy == api::RestartPolicy::Unset ? api::RestartPolicy::Always : spec_.restart_policy;
  if (box.sidecar) return api::RestartPolicy::Always;
  if (box.init) return pod == api::RestartPolicy::Never ? pod : api::RestartPolicy::OnFailure;
  return pod;
}

// Once no app container will run again (all stopped for good, or a regular
// init container failed under restartPolicy Never), the pod is finished:
// its sidecars are stopped and nothing is restarted any more.
void PodRunner::StopSidecarsIfDone() {
  if (finishing_) return;
  bool apps_done = true;
  bool init_failed = false;
  for (const Box& box : boxes_) {
    const bool idle = !BoxDue(box) && box.stage != Stage::kRestart;
    const api::ContainerStateTerminatedT* term =
        box.status->state ? box.status->state->terminated.get() : nullptr;
    if (!box.init && (term == nullptr || !idle)) apps_done = false;
    if (box.init && !box.sidecar && term != nullptr && term->exit_code != 0 && idle &&
        PolicyOf(box) == api::RestartPolicy::Never) {
      init_failed = true;
    }
  }
  if (!apps_done && !init_failed) return;
  finishing_ = true;
  // A sidecar not running now is not started again.
  for (Box& box : boxes_) {
    if (box.sidecar && !(box.status->state && box.status->state->running)) {
      box.stage = Stage::kIdle;
      box.due.reset();
      box.restarting = false;
    }
  }
}

void PodRunner::Shorten(SimTime now, SimTime deadline) {
  // A later delete with a shorter grace period is kubelet's kill again
  // within it: what is being stopped is killed by then (and never sooner
  // than the minimum after now); a longer one changes nothing.
  if (deadline >= kill_deadline_) return;
  kill_deadline_ = deadline;
  const SimTime kill = std::max(deadline, now + MinimumGrace());
  for (Box& box : boxes_) {
    if (box.sigkill_at && *box.sigkill_at > kill) box.sigkill_at = kill;
    if (box.sigterm_at && *box.sigterm_at > kill - MinimumGrace()) {
      // A preStop hook holds the SIGTERM no longer than leaves the minimum
      // before the SIGKILL (a SIGTERM to come has its SIGKILL set with it).
      ScheduleSignals(box, std::max(now, kill - MinimumGrace()), box.sigkill_at.value_or(kill));
    }
    if (box.stop_at && *box.stop_at > kill) {
      box.stop_at = kill;  // a simulated kill: SIGKILL's
      box.stop_code = 137;
    }
  }
}

void PodRunner::StopNextSidecar(SimTime t) {
  for (const Box& box : boxes_) {
    if (box.sidecar && box.stopping) return;  // one is stopping: the next waits for it
    // Sidecars stop after every other container.
    if (!box.sidecar && box.status->state && box.status->state->running) return;
  }
  for (auto it = boxes_.rbegin(); it != boxes_.rend(); ++it) {
    Box& box = *it;
    if (!box.sidecar || !(box.status->state && box.status->state->running)) continue;
    Event(t, "Normal", kubelet_text::kKilling, kubelet_text::StoppingContainer(box.spec->name), box.field_path);
    if (terminating_) {
      StopWithPreStop(box, t, kill_deadline_, false);  // within what is left of the grace period
    } else {
      Kill(box, t, false);
    }
    return;
  }
}

void PodRunner::AdvanceCursor(const Box& from, SimTime t) {
  if (terminating_) return;  // a deleted pod starts nothing more
  // A retry of a container already passed.
  if (cursor_ >= boxes_.size() || &boxes_[cursor_] != &from) return;
  ++cursor_;
  if (cursor_ == spec_.init_containers.size()) {
    // Initialization is over: app containers are now being created.
    for (auto& s : status_.container_statuses) {
      if (s->state->waiting && s->state->waiting->reason == kubelet_text::kPodInitializing) {
        s->state->waiting->reason = kubelet_text::kContainerCreating;
      }
    }
  }
  if (cursor_ < boxes_.size()) {
    boxes_[cursor_].stage = Stage::kEnsureImage;
    boxes_[cursor_].due = t;
  }
}

void PodRunner::Terminate(SimTime now, SimDuration grace) {
  if (terminating_) {
    Shorten(now, now + grace);
    return;
  }
  terminating_ = true;
  report_due_ = now;  // what changes now is reported even if nothing else happens
  finishing_ = true;
  active_deadline_.reset();
  sandbox_due_.reset();
  kill_deadline_ = now + grace;
  for (Box& box : boxes_) {
    if (box.stage == Stage::kPostStart) Running(box, now);  // its hook was under way: it runs
    box.stage = Stage::kIdle;  // no pull, start or restart goes on
    box.due.reset();
    box.restarting = false;
    api::ContainerStateT& state = *box.status->state;
    if (state.running) {
      if (box.sidecar) {
        box.probes.clear();  // kubelet stops probing a pod it is killing
        continue;            // sidecars stop last
      }
      if (box.stopping) continue;  // a kill under way goes on
      Event(now, "Normal", kubelet_text::kKilling, kubelet_text::StoppingContainer(box.spec->name),
            box.field_path);
      StopWithPreStop(box, now, kill_deadline_, false);
    } else if (!state.terminated) {
      // Never started (or waiting to start again): it ends where it is.
      box.status->state = std::make_unique<api::ContainerStateT>();
      box.status->state->terminated = std::make_unique<api::ContainerStateTerminatedT>();
      box.status->state->terminated->exit_code = 0;
      box.status->state->terminated->reason = kubelet_text::kCompleted;
      box.status->state->terminated->finished_at = FormatRfc3339(now);
      box.status->state->terminated->container_id = box.status->container_id;
      box.status->ready = false;
      box.status->started = false;
    }
  }
}

void PodRunner::DeadlineExceeded(SimTime t) {
  active_deadline_.reset();
  if (finishing_) return;
  Event(t, "Normal", kubelet_text::kDeadlineExceeded, kubelet_text::kDeadlineExceededMessage, "");
  status_.reason = kubelet_text::kDeadlineExceeded;
  status_.message = kubelet_text::kDeadlineExceededMessage;
  forced_phase_ = api::PodPhase::Failed;
  Terminate(t, GracePeriod(nullptr));
}

std::string PodRunner::PodRefText() const {
  const api::ObjectMetaT& m = *assignment_.pod->metadata;
  return kubelet_text::PodText(m.name, m.namespace_, m.uid);
}

void PodRunner::Event(SimTime t, const char* type, const char* reason, std::string message,
                      const std::string& field_path) {
  events_.push_back(model::ReportEvent{type, reason, std::move(message), FormatRfc3339(t), field_path});
}

}  // namespace podflow::runtime
