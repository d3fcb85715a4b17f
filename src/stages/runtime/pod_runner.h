// PodRunner: one pod's lifecycle on one simulated node, as kubelet drives it,
// on simulated time. Steps: sandbox (pod IP from the node's podCIDR, hostIP),
// then each init container in order (image, Created, Started, run to its
// exit; a restartable "sidecar" init container only has to start), then the
// app containers (image, Created, Started).
//
// What a container does once it runs is its plan (container_plan.h): it
// may exit (Completed / Error / OOMKilled, with its termination message),
// and is then restarted as the restart policy says (sidecars always;
// regular init containers unless the pod's policy is Never), at once the
// first time and then after kubelet's back-off (10 s doubling to 5 min,
// forgotten after 10 min of running), shown as CrashLoopBackOff. Probes run
// on their period: startup holds the others back and, like liveness, kills
// the container after failureThreshold failures (Unhealthy, then Killing);
// readiness drives `ready`. A killed container exits when it takes SIGTERM,
// or at the grace period's SIGKILL (137) when it ignores it. Once every app
// container has stopped for good the pod is Succeeded or Failed and its
// sidecars are stopped.
//
// An image the catalog lacks fails with ErrImagePull, then ImagePullBackOff,
// retried after 10s, 20s, 40s ... up to 300s. Each instant at which something
// happens is one step and yields one Report (status snapshot + its events).
//
// A deleted pod is stopped gracefully (Terminate: preStop hooks, SIGTERM,
// SIGKILL at the grace period's end, sidecars last); past
// activeDeadlineSeconds the pod is stopped and Failed (DeadlineExceeded).
//
// Before the sandbox, the volumes are set up (on a process node for real,
// ContainerHost::SetUpVolume; its containers get them as their
// volumeMounts say): a ConfigMap or Secret a
// volume needs that does not exist yet holds the pod in ContainerCreating
// with FailedMount events, tried again after 0.5 s doubling to 2m2s (the
// volume manager's back-off). Each container's environment is made when it
// is created; one it cannot make (a missing ConfigMap, Secret or key) is
// CreateContainerConfigError, tried again at the pod's next sync
// (RuntimeTiming::sync_retry).
//
// A container's postStart hook runs right after its start (sleep, an exec
// command read as a container's, an httpGet): until it ends the container
// is not shown running nor probed and the next container waits, as in
// kubelet's sequential start; a failed hook is FailedPostStartHook and the
// container is killed (Killing "FailedPostStartHook") and restarted as its
// policy says.
//
// Not simulated (yet): volume contents (a container does not read the files
// of its volumes).
//
// On a node with a ContainerHost (the process runtime) a container's run is
// a real process: Start launches it (one that cannot start ends at once
// with StartError, exit code 128), its exit comes from ProcessExited with
// its own code (OOMKilled when its memory cgroup's OOM killer ended it), a
// kill sends SIGTERM and then SIGKILL at the grace period's end, its
// exec, tcpSocket and httpGet probes run for real (the outcome comes back
// through ProbeFinished; the period counts from each probe's start), its pod
// is on the host's network, and its log is the run's log file. Everything else (the order of containers,
// restarts and back-off, phases, events) is the same as a simulated one's,
// lifecycle hooks included: an exec hook is not run, its command's
// reading only says how long it takes (and, for postStart, whether it fails).
//
// Thread safety: none. The node must outlive the runner.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "model/report.h"
#include "pod_generated.h"
#include "stages/runtime/container_plan.h"
#include "stages/runtime/node_runtime.h"

namespace podflow::runtime {

// What `kubectl logs` asks of kubelet (PodLogOptions).
struct LogQuery {
  std::string container;
  bool previous = false;
  bool timestamps = false;
  std::optional<int64_t> tail_lines;
  std::optional<int64_t> since_seconds;
  std::optional<int64_t> limit_bytes;
  std::optional<int64_t> from_line;  // podflow's follow: skip the run's first N lines
};

// A log as kubelet serves it, and where the run stands (for a follow).
struct LogAnswer {
  std::string text;
  int64_t lines = 0;         // how many lines the run has printed by now
  std::string container_id;  // the run's
};

// A pod bound to a node, as the runtime saw it in the log.
struct PodAssignment {
  std::string pod_key;                   // "/registry/pods/default/nginx"
  int64_t mod_revision = 0;              // the revision it was read at
  std::shared_ptr<const api::PodT> pod;  // REQUIRES: metadata and spec set
};

class PodRunner {
 public:
  // The pod is admitted at `now`: the first step is due then.
  PodRunner(PodAssignment assignment, NodeRuntime* node, SimTime now);
  ~PodRunner();  // returns the pod IP to the node's pool
  PodRunner(const PodRunner&) = delete;
  PodRunner& operator=(const PodRunner&) = delete;

  // When the next step is due; nullopt when nothing more will happen.
  std::optional<SimTime> due() const;

  // Runs everything due at due(): one instant. REQUIRES: due().has_value().
  model::Report Step();

  // The runtime saw a newer revision of the same pod (e.g. a status write).
  void ObserveRevision(int64_t mod_revision);

  // A container of this pod that runs as a process (its node has a
  // ContainerHost) exited: its end is the next step. False when no
  // container of the pod is that process.
  bool ProcessExited(const ContainerExit& exit);
  // A probe of one of its processes came back: its outcome is the next
  // step. False when no probe of the pod waits for it (its container ended).
  bool ProbeFinished(const ProbeOutcome& outcome);
  // The pod was removed: its containers' logs and its volumes go with it,
  // as kubelet removes a deleted pod's (a process node's; a runner that is
  // only destroyed, at a stop, leaves them).
  void RemoveFiles() const;

  // The pod was deleted: kubelet's killPod at `now` with `grace` (the
  // deletion's grace period). Each running app container gets a Killing
  // event, runs its preStop hook, then SIGTERM, and SIGKILL (137) when the
  // grace period is over (at least 2 s after the SIGTERM, kubelet's
  // minimum) if it has not exited; sidecars follow once the app containers
  // have stopped, the last started first; nothing starts or restarts any
  // more. A second call whose grace period ends sooner brings every SIGKILL
  // still to come forward to its end (not sooner than 2 s from `now`), as a
  // second, shorter delete does; a later one changes nothing.
  void Terminate(SimTime now, SimDuration grace);
  bool terminating() const { return terminating_; }

  // The log of one of the pod's containers at `now`, as kubelet serves it
  // (the lines printed so far, of the running or last run, or with
  // `previous` of the run before), or why not in kubelet's words
  // (InvalidArgument: `container "c" in pod "p" is waiting to start:
  // ContainerCreating`, `previous terminated container ... not found`).
  Result<LogAnswer> ContainerLog(const LogQuery& query, SimTime now) const;

  // A container of this pod as an exec reaches it: the process its run is
  // now, with that run's env and working dir. Invalid on a simulated node
  // (its containers are no processes); NotFound, in kubelet's words, when
  // it is not running (`container not found ("c")`).
  struct ExecInto {
    ProcessId process = 0;
    EnvList env;
    std::string working_dir;
  };
  Result<ExecInto> ExecTarget(const std::string& container) const;

  const api::PodStatusT& status() const { return status_; }
  const std::string& pod_key() const { return assignment_.pod_key; }
  const std::string& uid() const { return assignment_.pod->metadata->uid; }
  const std::string& pod_namespace() const { return assignment_.pod->metadata->namespace_; }
  // A ConfigMap or Secret of its namespace changed: on a process node the
  // files of its configMap, secret, downwardAPI and projected volumes are
  // brought up to date (swapped at once, as kubelet's atomic writer does;
  // a source now missing leaves them as they are, and a subPath mount keeps
  // what it bound).
  void RefreshVolumes();

 private:
  enum class Stage {
    kIdle,         // not reached yet, or nothing scheduled
    kEnsureImage,  // check presence / start a pull
    kPullDone,     // the pull completes
    kPullFailed,   // the registry answers "not found"
    kShowBackOff,  // the pod worker's next sync shows ImagePullBackOff
    kStart,        // Created -> running
    kRestart,      // the restart back-off is over
    kPostStart,    // its postStart hook ends
  };
  // One probe worker of one container run (kubelet's prober worker).
  struct ProbeRun {
    const api::ProbeT* spec = nullptr;
    ProbeKind kind = ProbeKind::kLiveness;
    std::vector<FailSpan> fails;  // of this run
    std::optional<SimTime> next;  // the next probe
    bool last_ok = false;         // the last probe's result ...
    int run = 0;                  // ... and how many in a row
    bool ok = false;              // the result kubelet acts on ...
    bool known = true;            // ... unless there is none yet (startup)
    // On a process node: the probe as it runs for real (nullopt: it follows
    // the plan), the one under way, and its outcome once it came.
    std::optional<ProbeCheck> check;
    std::optional<uint64_t> pending;
    SimTime launched{};  // when the one under way was started: the period counts from it
    std::optional<ProbeOutcome> outcome;
  };
  struct Box {  // one container and where it is
    const api::ContainerT* spec = nullptr;
    bool init = false;
    bool sidecar = false;
    std::string field_path;
    api::ContainerStatusT* status = nullptr;  // inside status_
    std::optional<ResolvedImage> image;  // the catalog's answer for spec->image; nullopt: it has none
    ContainerPlan plan;  // made at each creation, with the environment of that moment
    std::optional<SimTime> ended_at;  // the run of `plan` ended (terminated)
    // The run before (what `kubectl logs --previous` shows): its lines, when
    // each was printed, and when it started and ended.
    struct PastRun {
      std::vector<std::string> lines;
      std::vector<SimDuration> at;
      SimTime started{};
      SimTime ended{};
    };
    std::unique_ptr<PastRun> previous;
    int32_t previous_run = -1;  // its restartCount (a process run's log file)
    EnvList hook_env;    // the process environment, kept for its exec hooks
    bool post_start_failed = false;  // the hook running fails when it ends
    // On a process node: its exec hooks running for real, named as the
    // host's probes are.
    std::optional<uint64_t> post_start_pending, pre_stop_pending;
    Stage stage = Stage::kIdle;
    std::optional<SimTime> due;  // of `stage`
    SimTime pull_asked{};
    SimTime pull_done{};
    SimDuration pulling{0};
    SimDuration backoff{0};
    SimTime retry_at{};
    std::string pull_error;
    // The run in progress.
    SimTime started_at{};
    // On a process node: its process while it runs, what the kill sends
    // when, and how it ended (exit_at is then when).
    std::optional<ProcessId> process;
    std::optional<SimTime> sigterm_at, sigkill_at;
    int32_t exit_code = 0;
    EnvList env;  // the process environment of its run (for its exec probes)
    std::optional<SimTime> exit_at;  // ends by itself (or is OOM-killed)
    bool oom = false;
    std::optional<SimTime> stop_at;  // a kill completes (simulated)
    bool stopping = false;           // a kill is under way
    int32_t stop_code = 0;
    bool restart_after_stop = false;  // killed by a probe: restarted unless policy Never
    bool restarting = false;          // a new container is on its way: Create counts it
    std::vector<ProbeRun> probes;     // startup, liveness, readiness (those it has)
    // kubelet's restart back-off entry for this container.
    std::optional<SimTime> crash_updated;
    SimDuration crash_backoff{0};
  };

  void RunSandbox(SimTime t);
  void SetUpEtcFiles(SimTime t, ContainerHost& host, const std::string& pod_ip);
  // Runs the earliest of the box's timers due at `t`; false when none is.
  bool RunDue(Box& box, SimTime t);
  static std::optional<SimTime> BoxDue(const Box& box);
  void RunStage(Box& box, SimTime t);
  void EnsureImage(Box& box, SimTime t);
  void PullFailed(Box& box, SimTime t);
  void ShowBackOff(Box& box, SimTime t);
  void Create(Box& box, SimTime t);
  void Start(Box& box, SimTime t);
  // The container runs (from box.started_at, shown from `t`): its exits and
  // probes are scheduled and the next container may start.
  void Running(Box& box, SimTime t);
  // Its postStart hook ended: a failed one kills it.
  void PostStartEnded(Box& box, SimTime t);
  void Exited(Box& box, SimTime t, int32_t code, std::string reason);
  void AfterExit(Box& box, SimTime t, int32_t code, bool killed);
  void Restart(Box& box, SimTime t);
  // The run that ended becomes lastState, its log the previous log.
  static void EndedIsLast(Box& box);
  // Stops a running container as kubelet's killContainer does: its preStop
  // hook, SIGTERM, then SIGKILL at the grace period (the probe's
  // terminationGracePeriodSeconds when `probe` failed, else the pod's)
  // unless it exits first. `restart`: it is started again after.
  void Kill(Box& box, SimTime t, bool restart, const api::ProbeT* probe = nullptr);
  // From `t`: its preStop hook, then SIGTERM, SIGKILL at `deadline` (the
  // hook cut short there).
  void StopWithPreStop(Box& box, SimTime t, SimTime deadline, bool restart);
  // SIGTERM at `sigterm_at` (after a preStop hook), SIGKILL at `sigkill_at`.
  void Stop(Box& box, SimTime sigterm_at, SimTime sigkill_at, bool restart);
  // kubelet's minimumGracePeriodInSeconds: whatever the grace period and
  // however long the preStop hook took, a container has this long between
  // its SIGTERM and its SIGKILL.
  static constexpr SimDuration MinimumGrace() { return SimDuration(2000); }
  // A process container's SIGTERM at `sigterm_at` and its SIGKILL at
  // `sigkill_at`, or MinimumGrace() after the SIGTERM if that is later.
  static void ScheduleSignals(Box& box, SimTime sigterm_at, SimTime sigkill_at);
  // A delete of a terminating pod with a grace period ending at `deadline`.
  void Shorten(SimTime now, SimTime deadline);
  // How long the container's preStop hook runs.
  SimDuration PreStopTime(const Box& box) const;
  // A process node's exec hook `handler` of `box`, started for real within
  // `limit`; nullopt when it is not one (or the container is not running).
  std::optional<uint64_t> StartExecHook(const Box& box, const api::LifecycleHandlerT* handler, SimDuration limit);
  // The end of the exec hook under way (a probe's outcome): a postStart
  // hook's ends its stage, a preStop hook's brings the SIGTERM forward.
  void HookFinished(Box& box, const ProbeOutcome& outcome);
  void DeadlineExceeded(SimTime t);
  void Probe(Box& box, ProbeRun& probe, SimTime t);
  void KillForProbe(Box& box, const ProbeRun& probe, SimTime t);
  void StartProbes(Box& box, SimTime t);
  void BecameStarted(Box& box, SimTime t);
  // Once no app container runs again: sidecars are stopped one after the
  // other, the last started first.
  void StopSidecarsIfDone();
  void StopNextSidecar(SimTime t);
  // The probe's terminationGracePeriodSeconds, else the pod's (30 s by default).
  SimDuration GracePeriod(const api::ProbeT* probe) const;
  api::RestartPolicy PolicyOf(const Box& box) const;
  void AdvanceCursor(const Box& from, SimTime t);
  void Event(SimTime t, const char* type, const char* reason, std::string message,
             const std::string& field_path);
  static void SetWaiting(Box& box, std::string reason, std::string message = {});
  std::string PodRefText() const;  // kubelet's format.Pod: name_namespace(uid)
  // On a process node: starts the box's process; false (the container
  // ended with StartError) when it cannot.
  bool LaunchProcess(Box& box, SimTime t);
  std::string PodLogDir() const;  // "<namespace>_<name>_<uid>"
  std::string PodName() const;    // "<namespace>/<name>"
  std::vector<std::string> MachinePorts() const;

  PodAssignment assignment_;
  const api::PodSpecT& spec_;
  NodeRuntime* node_;
  api::PodStatusT status_;
  std::vector<Box> boxes_;  // init containers, then app containers
  size_t cursor_ = 0;       // the box being brought up
  std::optional<SimTime> sandbox_due_;
  SimDuration mount_backoff_{0};  // the volume manager's wait before it tries a failed mount again
  // A process node's volumes of this pod, set up: name -> where, read-only.
  struct SetUpVolume {
    std::string path;
    bool read_only = false;
  };
  std::map<std::string, SetUpVolume> volumes_;
  // A process node's /etc/hosts and /etc/resolv.conf for the pod's
  // containers (pod_dns.h): where they are, "" before the sandbox.
  std::string etc_dir_;
  std::optional<Ipv4> pod_ip_;
  // The network namespace its containers join (its own, or its node's;
  // empty: this machine's), and whether it is its own (removed with it).
  std::string network_;
  bool own_network_ = false;
  bool claimed_ports_ = false;  // this machine's ports it holds (ContainerHost::ClaimPorts)
  std::vector<model::ReportEvent> events_;  // of the step being run
  bool finishing_ = false;                  // no app container runs again: stopping sidecars
  bool terminating_ = false;                // deleted: stopping everything
  SimTime kill_deadline_{};                 // when terminating: the grace period's end
  std::optional<SimTime> active_deadline_;  // spec.activeDeadlineSeconds after the start
  std::optional<api::PodPhase> forced_phase_;  // Failed once past the active deadline
  std::optional<SimTime> report_due_;          // a change made outside Step to report
  bool terminal_ = false;                   // Succeeded or Failed: nothing more happens
};

}  // namespace podflow::runtime
