// The pod runner on a process node, against a fake ContainerHost: what it
// launches, the signals it sends and when, and what a process's exit does
// to the pod (restarts, back-off, StartError, a delete, the active deadline).
#include <signal.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <map>

#include "stages/runtime/runtime.h"
#include "test_pods.h"

namespace podflow::runtime {
namespace {

using testing::FakeClock;
using testing::PodFromYaml;
using testing::WaitingReason;

struct FakeHost : ContainerHost {
  std::vector<ContainerLaunch> launched;
  std::vector<std::pair<ProcessId, int>> signals;
  std::vector<ContainerExit> exits;
  std::map<std::string, std::vector<ContainerLogLine>> logs;  // "<log_dir>/<run>"
  std::vector<std::string> removed;
  std::vector<std::string> volumes;  // "<pod_dir>/<volume>" set up
  std::optional<Status> refuse;  // the next launch fails so

  Result<ProcessId> Launch(const ContainerLaunch& launch) override {
    if (refuse) return *std::exchange(refuse, std::nullopt);
    launched.push_back(launch);
    return static_cast<ProcessId>(launched.size());
  }
  void Signal(ProcessId id, int signal) override { signals.emplace_back(id, signal); }
  std::vector<ContainerExit> TakeExits() override { return std::exchange(exits, {}); }
  std::vector<ContainerLogLine> ReadLog(const std::string& log_dir, int32_t run) const override {
    auto it = logs.find(log_dir + "/" + std::to_string(run));
    return it == logs.end() ? std::vector<ContainerLogLine>{} : it->second;
  }
  void RemovePodFiles(const std::string& pod_dir) override { removed.push_back(pod_dir); }
  Result<std::string> SetUpVolume(const std::string& pod_dir, const VolumeSource& volume) override {
    volumes.push_back(pod_dir + "/" + volume.name);
    sources.push_back(volume);
    return "/node/" + volume.name;
  }
  std::vector<VolumeSource> sources;  // as set up
  std::string NodeHosts() const override { return "127.0.0.1 localhost node-host\n"; }
  std::string NodeResolvConf() const override { return "nameserver 192.168.1.1\nsearch corp.example.com\n"; }
  uint64_t StartProbe(const std::string& pod_key, const ProbeCheck& check) override {
    probes.emplace_back(pod_key, check);
    return probes.size();
  }
  std::vector<ProbeOutcome> TakeProbeOutcomes() override { return std::exchange(outcomes, {}); }
  std::vector<std::pair<std::string, ProbeCheck>> probes;
  std::vector<ProbeOutcome> outcomes;

  // A pod network, when `network` (its calls recorded; `refuse_node` and
  // `refuse_pod` fail the next of theirs).
  bool network = false;
  std::optional<Status> refuse_node, refuse_pod;
  std::vector<std::string> node_networks, pod_networks, removed_pod_networks, removed_node_networks;
  bool HasPodNetwork() const override { return network; }
  Status AddNodeNetwork(const std::string& node, const std::string& address, const std::string& pod_cidr,
                        const std::string& gateway) override {
    if (refuse_node) return *std::exchange(refuse_node, std::nullopt);
    node_networks.push_back(node + " " + address + " " + pod_cidr + " " + gateway);
    return Status::Ok();
  }
  void RemoveNodeNetwork(const std::string& node) override { removed_node_networks.push_back(node); }
  std::string NodeNetwork(const std::string& node) const override { return "ns-node-" + node; }
  Result<std::string> AddPodNetwork(const std::string& node, const std::string& pod,
                                    const std::string& address) override {
    if (refuse_pod) return *std::exchange(refuse_pod, std::nullopt);
    pod_networks.push_back(node + " " + pod + " " + address);
    return "ns-pod-" + pod;
  }
  void RemovePodNetwork(const std::string& pod) override { removed_pod_networks.push_back(pod); }
};

struct Fixture {
  ImageCatalog catalog{testing::TestRegistry()};
  RuntimeTiming timing;
  FakeHost host;
  std::unique_ptr<NodeRuntime> node;
  FakeClock clock;

  Fixture() { node = std::make_unique<NodeRuntime>(ProcessNode(), &catalog, &timing, nullptr, &host); }
  static SimNode ProcessNode() {
    SimNode n = testing::TestNode();
    n.type = RuntimeType::kProcess;
    return n;
  }
  // An agent set whose node-1 runs processes on `host`.
  std::unique_ptr<NodeAgentSet> Agents() {
    auto agents = std::make_unique<NodeAgentSet>(&catalog, timing);
    agents->SetContainerHost(&host);
    REQUIRE(agents->AddNode(ProcessNode()).ok());
    return agents;
  }
  std::unique_ptr<PodRunner> Runner(const std::string& yaml) {
    return std::make_unique<PodRunner>(PodAssignment{"/registry/pods/default/p", 7, PodFromYaml(yaml)}, node.get(),
                                       clock.now);
  }
  // A pod whose one container runs `sleep 3600`, launched 1 s in.
  std::unique_ptr<PodRunner> StartedSleeper() {
    auto runner = Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: app, image: busybox:1.28, command: ["sleep", "3600"]}]
)");
    RunUntil(*runner, clock.now + SimDuration(1000));
    REQUIRE(host.launched.size() == 1);
    return runner;
  }
  // Steps everything due up to `until`; the last report.
  model::Report RunUntil(PodRunner& runner, SimTime until) {
    model::Report last;
    while (runner.due() && *runner.due() <= until) last = runner.Step();
    return last;
  }
  ContainerExit Exit(ProcessId id, int32_t code, SimTime at, bool oom = false) {
    return ContainerExit{id, "/registry/pods/default/p", code, oom, at};
  }
};

const api::ContainerStatusT& Only(const model::Report& r) { return *r.status.container_statuses.at(0); }

// How many of the report's events have `reason`.
size_t Count(const model::Report& r, const std::string& reason) {
  return static_cast<size_t>(std::count_if(r.events.begin(), r.events.end(), [&](const auto& e) { return e.reason == reason; }));
}

TEST_CASE("process node: a container that ends within its postStart hook ends; the next container starts") {
  Fixture f;
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  containers:
  - name: quick
    image: busybox:1.28
    command: ["sh", "-c", "echo hi"]
    lifecycle: {postStart: {sleep: {seconds: 5}}}
  - name: next
    image: busybox:1.28
    command: ["sleep", "3600"]
)");
  const SimTime t0 = f.clock.now;
  model::Report r = f.RunUntil(*runner, t0 + SimDuration(1000));
  REQUIRE(f.host.launched.size() == 1);  // the next one waits for the hook
  REQUIRE(r.status.container_statuses.at(0)->state->waiting);
  const SimTime t1 = t0 + SimDuration(2000);
  REQUIRE(runner->ProcessExited(f.Exit(1, 0, t1)));
  r = f.RunUntil(*runner, t1);
  const api::ContainerStatusT& quick = *r.status.container_statuses.at(0);
  REQUIRE(quick.state->terminated);
  CHECK(quick.state->terminated->exit_code == 0);
  CHECK_FALSE(quick.state->terminated->started_at.empty());
  CHECK(f.host.launched.size() == 2);  // the sync went on
  r = f.RunUntil(*runner, t0 + SimDuration(10'000));
  CHECK(f.host.launched.size() == 2);  // nothing ran the hook's end on a dead container
}

TEST_CASE("process node: an exec postStart hook runs for real; a failed hook's kill never shows it running") {
  Fixture f;
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
    lifecycle: {postStart: {exec: {command: ["sh", "-c", "sleep 1; exit 1"]}}}
)");
  const SimTime t0 = f.clock.now;
  std::vector<std::string> reasons;
  model::Report r = f.RunUntil(*runner, t0 + SimDuration(5000));
  for (const auto& e : r.events) reasons.push_back(e.reason);
  // The hook runs beside the container, with its env, and holds it until it ends.
  REQUIRE(f.host.probes.size() == 1);
  const ProbeCheck& hook = f.host.probes[0].second;
  CHECK(hook.type == ProbeCheck::Type::kExec);
  CHECK(hook.container == 1);
  CHECK(hook.command == std::vector<std::string>{"sh", "-c", "sleep 1; exit 1"});
  REQUIRE(r.status.container_statuses.at(0)->state->waiting);
  CHECK_FALSE(runner->due().has_value());
  // It fails 1 s after the start.
  ProbeOutcome ended;
  ended.probe = 1;
  ended.pod_key = "/registry/pods/default/p";
  ended.ok = false;
  ended.output = "";
  ended.at = t0 + SimDuration(1000);
  REQUIRE(runner->ProbeFinished(ended));
  SimTime failed_at = t0 + SimDuration(10'000);
  while (runner->due() && *runner->due() <= failed_at) {
    const SimTime at = *runner->due();
    r = runner->Step();
    for (const auto& e : r.events) reasons.push_back(e.reason);
    if (std::count(reasons.begin(), reasons.end(), "Killing") == 1 && failed_at > at) failed_at = at;
    if (r.status.container_statuses.at(0)->state->running) FAIL("shown running");
  }
  REQUIRE(failed_at < t0 + SimDuration(10'000));
  CHECK(failed_at - t0 >= SimDuration(1000));
  CHECK(std::count(reasons.begin(), reasons.end(), "FailedPostStartHook") == 1);
  CHECK(std::count(reasons.begin(), reasons.end(), "Killing") == 1);
  REQUIRE(Only(r).state->waiting);  // killed, not shown running meanwhile
  CHECK_FALSE(Only(r).ready);
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}});
  REQUIRE(runner->ProcessExited(f.Exit(1, 143, failed_at + SimDuration(500))));
  r = f.RunUntil(*runner, failed_at + SimDuration(500));
  REQUIRE(Only(r).state->terminated);
  CHECK(Only(r).state->terminated->exit_code == 143);
  CHECK(r.status.phase == api::PodPhase::Failed);
}

TEST_CASE("process node: a container is launched with its command, env and limits; its exit code is its status; it is restarted after kubelet's back-off") {
  Fixture f;
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    image: busybox:1.28
    command: ["sh", "-c", "echo $(WHO); exit 2"]
    env: [{name: WHO, value: me}]
    workingDir: /tmp
    resources: {limits: {memory: 64Mi, cpu: 250m}, requests: {cpu: "0.1"}}
)");
  const SimTime t0 = f.clock.now;
  model::Report r = f.RunUntil(*runner, t0 + SimDuration(1000));
  REQUIRE(f.host.launched.size() == 1);
  const ContainerLaunch& launch = f.host.launched[0];
  CHECK(launch.argv == std::vector<std::string>{"sh", "-c", "echo me; exit 2"});
  CHECK(launch.working_dir == "/tmp");
  CHECK(launch.hostname == "p");
  CHECK(launch.log_dir == "default_p_uid-1/app");
  CHECK(launch.restart_count == 0);
  CHECK(launch.memory_limit_bytes == 64 * 1024 * 1024);
  CHECK(launch.cpu_limit_milli == 250);
  CHECK(launch.cpu_request_milli == 100);
  CHECK(std::count(launch.env.begin(), launch.env.end(), std::pair<std::string, std::string>{"WHO", "me"}) == 1);
  REQUIRE(Only(r).state->running);
  CHECK_THAT(Only(r).container_id, Catch::StartsWith("podflow-process://"));
  // Nothing happens until the process ends.
  CHECK_FALSE(runner->due().has_value());

  const SimTime t1 = t0 + SimDuration(3000);
  REQUIRE(runner->ProcessExited(f.Exit(1, 2, t1)));
  CHECK_FALSE(runner->ProcessExited(f.Exit(99, 0, t1)));  // not its process
  REQUIRE(runner->due() == t1);
  r = runner->Step();
  // The first restart is at once: a new run, its restartCount 1.
  REQUIRE(f.host.launched.size() == 2);
  CHECK(f.host.launched[1].restart_count == 1);
  CHECK(Only(r).restart_count == 1);
  REQUIRE(Only(r).last_state->terminated);
  CHECK(Only(r).last_state->terminated->exit_code == 2);
  CHECK(Only(r).last_state->terminated->reason == "Error");

  // The second exit waits out the back-off: CrashLoopBackOff, then a third run.
  const SimTime t2 = t1 + SimDuration(500);
  REQUIRE(runner->ProcessExited(f.Exit(2, 0, t2, /*oom=*/true)));
  r = runner->Step();
  CHECK(WaitingReason(Only(r)) == "CrashLoopBackOff");
  CHECK(Count(r, "BackOff") == 1);
  // The OOM killer ended it, its own exit code kept.
  CHECK(Only(r).last_state->terminated->reason == "OOMKilled");
  CHECK(Only(r).last_state->terminated->exit_code == 0);
  REQUIRE(runner->due() == t2 + f.timing.backoff_initial);
  f.RunUntil(*runner, t2 + f.timing.backoff_initial);
  CHECK(f.host.launched.size() == 3);
}

TEST_CASE("process node: a delete sends SIGTERM, then SIGKILL when the grace period is over; the pod ends when the process does") {
  Fixture f;
  auto runner = f.StartedSleeper();
  const SimTime t1 = f.clock.now + SimDuration(5000);
  runner->Terminate(t1, SimDuration(3000));
  model::Report r = f.RunUntil(*runner, t1);
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}});
  CHECK(Count(r, "Killing") == 1);
  REQUIRE(runner->due() == t1 + SimDuration(3000));
  r = runner->Step();
  CHECK(f.host.signals.back() == std::pair<ProcessId, int>{1, SIGKILL});
  // Still running until the host says it ended.
  CHECK(Only(r).state->running);
  CHECK_FALSE(runner->due().has_value());
  REQUIRE(runner->ProcessExited(f.Exit(1, 137, t1 + SimDuration(3010))));
  r = runner->Step();
  REQUIRE(Only(r).state->terminated);
  CHECK(Only(r).state->terminated->exit_code == 137);
  CHECK(f.host.launched.size() == 1);  // a deleted pod is not restarted
}

TEST_CASE("process node: an exec preStop hook runs for real: the SIGTERM waits for its end (within the grace "
          "period); a failed one is FailedPreStopHook") {
  Fixture f;
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
    lifecycle: {preStop: {exec: {command: ["/usr/sbin/nginx", "-s", "quit"]}}}
)");
  const SimTime t0 = f.clock.now;
  f.RunUntil(*runner, t0 + SimDuration(1000));
  REQUIRE(f.host.launched.size() == 1);
  CHECK(f.host.probes.empty());
  const SimTime t1 = t0 + SimDuration(5000);
  runner->Terminate(t1, SimDuration(3000));
  model::Report r = f.RunUntil(*runner, t1 + SimDuration(1000));
  CHECK(Count(r, "Killing") == 1);
  REQUIRE(f.host.probes.size() == 1);
  const ProbeCheck& hook = f.host.probes[0].second;
  CHECK(hook.command == std::vector<std::string>{"/usr/sbin/nginx", "-s", "quit"});
  CHECK(hook.timeout == SimDuration(3000));  // what is left of the grace period
  CHECK(f.host.signals.empty());  // no SIGTERM while the hook runs
  // It fails 1.5 s in: the event, and the SIGTERM at once.
  ProbeOutcome ended;
  ended.probe = 1;
  ended.pod_key = "/registry/pods/default/p";
  ended.at = t1 + SimDuration(1500);
  REQUIRE(runner->ProbeFinished(ended));
  REQUIRE(runner->due() == t1 + SimDuration(1500));
  r = runner->Step();
  CHECK(Count(r, "FailedPreStopHook") == 1);
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}});
  // SIGKILL at the grace period's end or, as here, kubelet's minimum of 2 s
  // after the SIGTERM, whichever is later.
  REQUIRE(runner->due() == t1 + SimDuration(3500));
  REQUIRE(runner->ProcessExited(f.Exit(1, 143, t1 + SimDuration(1600))));
  r = f.RunUntil(*runner, t1 + SimDuration(1600));
  REQUIRE(Only(r).state->terminated);
  CHECK(Only(r).state->terminated->exit_code == 143);
  CHECK(f.host.signals.size() == 1);
}

TEST_CASE("process node: past activeDeadlineSeconds the pod is Failed, and a process that ignored SIGTERM still reports its end") {
  Fixture f;
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  activeDeadlineSeconds: 2
  terminationGracePeriodSeconds: 1
  containers: [{name: app, image: busybox:1.28, command: ["sleep", "3600"]}]
)");
  const SimTime t0 = f.clock.now;
  model::Report r = f.RunUntil(*runner, t0 + SimDuration(3000));
  CHECK(r.status.phase == api::PodPhase::Failed);
  CHECK(r.status.reason == "DeadlineExceeded");
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}});
  // The grace period is 1 s, but kubelet gives at least 2 s before the SIGKILL.
  REQUIRE(runner->due() == t0 + SimDuration(4000));
  r = f.RunUntil(*runner, t0 + SimDuration(4000));
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}, {1, SIGKILL}});
  // Its exit is still taken and shown.
  REQUIRE(runner->ProcessExited(f.Exit(1, 137, t0 + SimDuration(4100))));
  REQUIRE(runner->due().has_value());
  r = runner->Step();
  REQUIRE(Only(r).state->terminated);
  CHECK(Only(r).state->terminated->exit_code == 137);
}

TEST_CASE("process node: a command that cannot start ends with StartError in the runtime's words") {
  Fixture f;
  f.host.refuse = Status::Invalid("exec: \"nope\": executable file not found in $PATH");
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  containers: [{name: app, image: busybox:1.28, command: ["nope"]}]
)");
  const model::Report r = f.RunUntil(*runner, f.clock.now + SimDuration(1000));
  REQUIRE(Only(r).state->terminated);
  CHECK(Only(r).state->terminated->reason == "StartError");
  CHECK(Only(r).state->terminated->exit_code == 128);
  CHECK(Only(r).state->terminated->message ==
        "failed to start container process: unable to start container process: exec: \"nope\": executable file "
        "not found in $PATH");
  CHECK(r.status.phase == api::PodPhase::Failed);
  bool failed_event = false;
  for (const auto& e : r.events) {
    failed_event |= e.reason == "Failed" && e.message.rfind("Error: failed to start container process", 0) == 0;
  }
  CHECK(failed_event);
  CHECK(f.host.launched.empty());
}

TEST_CASE("process node: logs are the run's file, --previous the run before; a removed pod's logs go, a stopped runner's stay") {
  Fixture f;
  std::unique_ptr<NodeAgentSet> owned = f.Agents();
  NodeAgentSet& agents = *owned;
  const SimTime t0 = f.clock.now;
  REQUIRE(agents.AddPod("node-1", PodAssignment{"/registry/pods/default/p", 7, PodFromYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: app, image: busybox:1.28, command: ["sh", "-c", "echo hi"]}]
)")}, t0).ok());
  agents.Advance(t0 + SimDuration(1000));
  REQUIRE(f.host.launched.size() == 1);
  f.host.logs["default_p_uid-1/app/0"] = {{t0 + SimDuration(1000), "first run"}};
  f.host.exits.push_back(f.Exit(1, 0, t0 + SimDuration(1200)));
  agents.Advance(t0 + SimDuration(1200));  // the exit, then a restart at once
  REQUIRE(f.host.launched.size() == 2);
  f.host.logs["default_p_uid-1/app/1"] = {{t0 + SimDuration(1300), "second run"}};
  const PodRunner* runner = agents.FindPod("/registry/pods/default/p");
  REQUIRE(runner != nullptr);
  Result<LogAnswer> current = runner->ContainerLog({.container = "app"}, t0 + SimDuration(2000));
  REQUIRE(current.ok());
  CHECK(current->text == "second run\n");
  Result<LogAnswer> previous = runner->ContainerLog({.container = "app", .previous = true}, t0 + SimDuration(2000));
  REQUIRE(previous.ok());
  CHECK(previous->text == "first run\n");
  agents.RemovePod("/registry/pods/default/p");
  CHECK(f.host.removed == std::vector<std::string>{"default_p_uid-1"});
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{2, SIGKILL}});
}

TEST_CASE("process node: a finished pod taken over after a restart has its logs removed with it") {
  Fixture f;
  std::unique_ptr<NodeAgentSet> owned = f.Agents();
  NodeAgentSet& agents = *owned;
  REQUIRE(agents.AdoptPod("node-1", "/registry/pods/team/done", "uid-9", "").ok());
  agents.RemovePod("/registry/pods/team/done");
  CHECK(f.host.removed == std::vector<std::string>{"team_done_uid-9"});
}

TEST_CASE("process node: probes run for real; failures are Unhealthy in the probe's own words, and liveness kills after failureThreshold") {
  Fixture f;
  auto runner = f.Runner(R"yaml(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
    env: [{name: FLAG, value: /tmp/ok}]
    ports: [{name: web, containerPort: 8080}]
    livenessProbe: {exec: {command: ["test", "-e", "$(FLAG)"]}, periodSeconds: 1, failureThreshold: 2}
    readinessProbe: {httpGet: {path: /ready, port: web}, periodSeconds: 5}
)yaml");
  // Started once busybox is pulled (100 ms): the probes from then on.
  const SimTime t0 = f.clock.now + SimDuration(100);
  f.RunUntil(*runner, t0);
  REQUIRE(f.host.launched.size() == 1);
  // Both are started at once, with what runs for real: the readiness probe
  // against the pod's (here the host's) address and the named port.
  REQUIRE(f.host.probes.size() == 2);
  const ProbeCheck& liveness = f.host.probes[0].second;
  const ProbeCheck& readiness = f.host.probes[1].second;
  CHECK(f.host.probes[0].first == "/registry/pods/default/p");
  CHECK(liveness.type == ProbeCheck::Type::kExec);
  CHECK(liveness.command == std::vector<std::string>{"test", "-e", "/tmp/ok"});  // $(FLAG) expanded, as kubelet does
  CHECK(liveness.container == 1);
  CHECK(std::count(liveness.env.begin(), liveness.env.end(), std::pair<std::string, std::string>{"FLAG", "/tmp/ok"}) == 1);
  CHECK(readiness.type == ProbeCheck::Type::kHttp);
  CHECK(readiness.host == "192.168.0.2");
  CHECK(readiness.port == 8080);
  CHECK(readiness.path == "/ready");
  // Nothing is due while they run.
  CHECK_FALSE(runner->due().has_value());

  f.host.outcomes.push_back({2, "/registry/pods/default/p", true, "", t0 + SimDuration(20)});
  f.host.outcomes.push_back({1, "/registry/pods/default/p", false, "no flag", t0 + SimDuration(30)});
  for (const ProbeOutcome& o : f.host.TakeProbeOutcomes()) CHECK(runner->ProbeFinished(o));
  CHECK_FALSE(runner->ProbeFinished({1, "/registry/pods/default/p", true, "", t0}));  // taken already
  model::Report r = f.RunUntil(*runner, t0 + SimDuration(30));
  CHECK(Only(r).ready);
  REQUIRE(Count(r, "Unhealthy") == 1);
  CHECK(r.events.back().message == "Liveness probe failed: no flag");
  CHECK(Count(r, "Killing") == 0);  // once is not failureThreshold
  // The next liveness probe a period later; the second failure kills.
  REQUIRE(runner->due() == t0 + SimDuration(1000));
  f.RunUntil(*runner, t0 + SimDuration(1000));
  REQUIRE(f.host.probes.size() == 3);
  CHECK(runner->ProbeFinished({3, "/registry/pods/default/p", false, "no flag", t0 + SimDuration(1010)}));
  r = f.RunUntil(*runner, t0 + SimDuration(1010));
  CHECK(Count(r, "Killing") == 1);
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}});
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {

TEST_CASE("process node: the pod's volumes are set up before its containers, which get them as their mounts say") {
  Fixture f;
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
    env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
    volumeMounts:
    - {name: workdir, mountPath: /work-dir}
    - {name: workdir, mountPath: /logs, subPathExpr: $(POD_NAME)}
    - {name: podinfo, mountPath: /etc/podinfo, readOnly: false}
    - {name: host, mountPath: /host, subPath: data, readOnly: true}
  volumes:
  - {name: workdir, emptyDir: {}}
  - {name: podinfo, downwardAPI: {items: [{path: name, fieldRef: {fieldPath: metadata.name}}]}}
  - {name: host, hostPath: {path: /srv}}
  - {name: unused, emptyDir: {}}
)");
  f.RunUntil(*runner, f.clock.now + SimDuration(5000));
  CHECK(f.host.volumes == std::vector<std::string>{"default_p_uid-1/workdir",
                                                    "default_p_uid-1/podinfo",
                                                    "default_p_uid-1/host",
                                                    "default_p_uid-1/~etc"});
  REQUIRE(f.host.launched.size() == 1);
  const std::vector<ContainerMount>& mounts = f.host.launched[0].mounts;
  REQUIRE(mounts.size() == 6);
  CHECK((mounts[0].source == "/node/workdir" && mounts[0].sub_path.empty() && mounts[0].target == "/work-dir" &&
         !mounts[0].read_only));
  CHECK((mounts[1].source == "/node/workdir" && mounts[1].sub_path == "p" && mounts[1].target == "/logs"));
  CHECK((mounts[2].target == "/etc/podinfo" && mounts[2].read_only));  // the API's data: read-only whatever it says
  CHECK((mounts[3].source == "/node/host" && mounts[3].sub_path == "data" && mounts[3].read_only));
  // kubelet's own files last.
  CHECK((mounts[4].source == "/node/~etc" && mounts[4].sub_path == "hosts" && mounts[4].target == "/etc/hosts"));
  CHECK((mounts[5].sub_path == "resolv.conf" && mounts[5].target == "/etc/resolv.conf"));
}

TEST_CASE("process node: kubelet's /etc/hosts (the node's, with the hostAliases) and resolv.conf by dnsPolicy") {
  Fixture f;
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  hostAliases: [{ip: "10.1.2.3", hostnames: [foo.remote, bar.remote]}]
  dnsPolicy: None
  dnsConfig: {nameservers: [192.0.2.1], options: [{name: ndots, value: "2"}]}
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
  - name: own
    image: busybox:1.28
    command: ["sleep", "3600"]
    volumeMounts: [{name: mine, mountPath: /etc/resolv.conf, subPath: resolv.conf}]
  volumes: [{name: mine, emptyDir: {}}]
)");
  f.RunUntil(*runner, f.clock.now + SimDuration(10000));
  auto etc = std::find_if(f.host.sources.begin(), f.host.sources.end(),
                          [](const VolumeSource& v) { return v.name == "~etc"; });
  REQUIRE(etc != f.host.sources.end());
  REQUIRE(etc->files.size() == 2);
  CHECK(etc->files[0].path == "hosts");
  CHECK(etc->files[0].data ==
        "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost node-host\n\n"
        "# Entries added by HostAliases.\n10.1.2.3\tfoo.remote\tbar.remote\n");
  CHECK(etc->files[1].path == "resolv.conf");
  CHECK(etc->files[1].data == "nameserver 192.0.2.1\noptions ndots:2\n");
  REQUIRE(f.host.launched.size() == 2);
  auto targets = [](const ContainerLaunch& l) {
    std::vector<std::string> out;
    for (const ContainerMount& m : l.mounts) out.push_back(m.target);
    return out;
  };
  CHECK(targets(f.host.launched[0]) == std::vector<std::string>{"/etc/hosts", "/etc/resolv.conf"});
  // A container that mounts its own resolv.conf keeps it.
  CHECK(targets(f.host.launched[1]) == std::vector<std::string>{"/etc/resolv.conf", "/etc/hosts"});
  CHECK(f.host.launched[1].mounts[0].source == "/node/mine");
}


TEST_CASE("process node: the securityContext reaches the launch, the container's own settings over the pod's") {
  Fixture f;
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  securityContext: {runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000], supplementalGroupsPolicy: Strict}
  volumes: [{name: data, emptyDir: {}}]
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
    volumeMounts: [{name: data, mountPath: /data/demo}]
    securityContext:
      runAsUser: 2000
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      capabilities: {add: ["NET_ADMIN", "SYS_TIME"], drop: ["ALL"]}
)");
  f.RunUntil(*runner, f.clock.now + SimDuration(1000));
  REQUIRE(f.host.launched.size() == 1);
  const ContainerSecurity& s = f.host.launched[0].security;
  CHECK(s.run_as_user == 2000);
  CHECK(s.run_as_group == 3000);
  CHECK(s.supplemental_groups == std::vector<int64_t>{4000, 2000});
  CHECK_FALSE(s.merge_user_groups);
  CHECK(s.add_capabilities == std::vector<std::string>{"NET_ADMIN", "SYS_TIME"});
  CHECK(s.drop_capabilities == std::vector<std::string>{"ALL"});
  CHECK(s.no_new_privileges);
  CHECK(s.read_only_root);
  CHECK_FALSE(s.privileged);
}

TEST_CASE("process node: runAsNonRoot without a runAsUser is kubelet's CreateContainerConfigError (the command "
          "would run as root); a runAsUser of 0 breaks it; a non-root one runs") {
  const auto pod = [](const std::string& container_context) {
    return R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  securityContext: {runAsNonRoot: true}
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
    securityContext: )" + container_context + "\n";
  };
  {
    Fixture f;
    auto runner = f.Runner(pod("{}"));
    model::Report r = f.RunUntil(*runner, f.clock.now + SimDuration(1000));
    CHECK(f.host.launched.empty());
    CHECK(WaitingReason(Only(r)) == "CreateContainerConfigError");
    CHECK(Only(r).state->waiting->message ==
          "container has runAsNonRoot and image will run as root (pod: \"p_default(uid-1)\", container: app)");
  }
  {
    Fixture f;
    auto runner = f.Runner(pod("{runAsUser: 0}"));
    model::Report r = f.RunUntil(*runner, f.clock.now + SimDuration(1000));
    CHECK(f.host.launched.empty());
    CHECK(Only(r).state->waiting->message ==
          "container's runAsUser breaks non-root policy (pod: \"p_default(uid-1)\", container: app)");
  }
  {
    Fixture f;
    auto runner = f.Runner(pod("{runAsUser: 1000}"));
    f.RunUntil(*runner, f.clock.now + SimDuration(1000));
    CHECK(f.host.launched.size() == 1);
  }
  {
    // The container's runAsNonRoot: false over the pod's true.
    Fixture f;
    auto runner = f.Runner(pod("{runAsNonRoot: false}"));
    f.RunUntil(*runner, f.clock.now + SimDuration(1000));
    CHECK(f.host.launched.size() == 1);
  }
}

TEST_CASE("process node: the pod's fsGroup goes with its emptyDir and API-data volumes, not with a hostPath") {
  Fixture f;
  FakeHost host;
  NodeRuntime node(Fixture::ProcessNode(), &f.catalog, &f.timing, nullptr, &host);
  PodRunner runner(PodAssignment{"/registry/pods/default/p", 7, PodFromYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p, labels: {a: b}}
spec:
  securityContext: {fsGroup: 2000}
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: info, downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}}
  - {name: host, hostPath: {path: /tmp}}
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
    volumeMounts: [{name: scratch, mountPath: /s}, {name: info, mountPath: /i}, {name: host, mountPath: /h}]
)")},
                   &node, f.clock.now);
  f.RunUntil(runner, f.clock.now + SimDuration(1000));
  REQUIRE(host.sources.size() == 4);  // and kubelet's own files
  std::map<std::string, std::optional<int64_t>> groups;
  for (const VolumeSource& v : host.sources) groups[v.name] = v.fs_group;
  CHECK(groups["scratch"] == 2000);
  CHECK(groups["info"] == 2000);
  CHECK_FALSE(groups["host"].has_value());
  CHECK_FALSE(groups["~etc"].has_value());
}

TEST_CASE("process node: a second delete with a shorter grace period brings the SIGKILL forward, never sooner than "
          "kubelet's 2 s; a longer one changes nothing") {
  Fixture f;
  auto runner = f.StartedSleeper();
  const SimTime t1 = f.clock.now + SimDuration(5000);
  runner->Terminate(t1, SimDuration(30000));
  f.RunUntil(*runner, t1);
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}});
  REQUIRE(runner->due() == t1 + SimDuration(30000));
  runner->Terminate(t1 + SimDuration(1000), SimDuration(5000));
  CHECK(runner->due() == t1 + SimDuration(6000));
  runner->Terminate(t1 + SimDuration(2000), SimDuration(60000));  // longer: no change
  CHECK(runner->due() == t1 + SimDuration(6000));
  runner->Terminate(t1 + SimDuration(3000), SimDuration(0));  // --grace-period=0: 2 s still
  REQUIRE(runner->due() == t1 + SimDuration(5000));
  f.RunUntil(*runner, t1 + SimDuration(5000));
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}, {1, SIGKILL}});
}

TEST_CASE("process node: a shorter second delete while a preStop hook runs: the SIGTERM comes 2 s before the new "
          "SIGKILL at the latest") {
  Fixture f;
  auto runner = f.Runner(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
    lifecycle: {preStop: {exec: {command: ["sleep", "60"]}}}
)");
  f.RunUntil(*runner, f.clock.now + SimDuration(1000));
  REQUIRE(f.host.launched.size() == 1);
  const SimTime t1 = f.clock.now + SimDuration(5000);
  runner->Terminate(t1, SimDuration(30000));
  f.RunUntil(*runner, t1);
  REQUIRE(f.host.probes.size() == 1);  // the hook runs; the SIGTERM waits for it
  CHECK(f.host.signals.empty());
  REQUIRE(runner->due() == t1 + SimDuration(30000));
  runner->Terminate(t1 + SimDuration(500), SimDuration(1000));  // the SIGKILL at 2.5 s: the SIGTERM at 0.5 s
  REQUIRE(runner->due() == t1 + SimDuration(500));
  f.RunUntil(*runner, t1 + SimDuration(500));
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}});
  REQUIRE(runner->due() == t1 + SimDuration(2500));
  f.RunUntil(*runner, t1 + SimDuration(2500));
  CHECK(f.host.signals == std::vector<std::pair<ProcessId, int>>{{1, SIGTERM}, {1, SIGKILL}});
}

TEST_CASE("process node on a pod network: the node joins it, each pod's sandbox gets a namespace and an IP of its "
          "own that its containers join, its probes connect from the node's; a node the network refuses is this "
          "machine") {
  Fixture f;
  f.host.network = true;
  NodeAgentSet agents(&f.catalog, f.timing);
  agents.SetContainerHost(&f.host);
  SimNode joined = Fixture::ProcessNode();
  joined.node_network = *ParseCidr("192.168.0.0/16");
  REQUIRE(agents.AddNode(joined).ok());
  CHECK(f.host.node_networks == std::vector<std::string>{"node-1 192.168.0.2/16 10.244.1.0/24 10.244.1.1/24"});
  NodeRuntime* node = agents.FindNode("node-1");
  REQUIRE(node != nullptr);
  CHECK(node->network() == "ns-node-node-1");
  CHECK(node->host_ip() == "192.168.0.2");

  {
    PodRunner runner(PodAssignment{"/registry/pods/default/p", 7, PodFromYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: web
    image: busybox:1.28
    command: ["python3", "-m", "http.server", "8080"]
    readinessProbe: {httpGet: {port: 8080}}
)")},
                     node, f.clock.now);
    f.host.refuse_pod = Status::Unavailable("veth: File exists");
    model::Report r = f.RunUntil(runner, f.clock.now + SimDuration(1));
    // The plugin's failure: the sandbox is retried, the address not kept.
    REQUIRE(Count(r, "FailedCreatePodSandBox") == 1);
    CHECK(r.events.front().message.find("plugin type=\"bridge\" failed (add): veth: File exists") != std::string::npos);
    CHECK(f.host.launched.empty());
    r = f.RunUntil(runner, f.clock.now + SimDuration(20'000));
    REQUIRE(f.host.pod_networks.size() == 1);
    CHECK(f.host.pod_networks[0] == "node-1 uid-1 10.244.1.2/24");  // the address the failed try took, given back
    CHECK(r.status.pod_ip == "10.244.1.2");
    CHECK(r.status.host_ip == "192.168.0.2");
    REQUIRE(f.host.launched.size() == 1);
    CHECK(f.host.launched[0].network == "ns-pod-uid-1");
    REQUIRE(f.host.probes.size() >= 1);
    CHECK(f.host.probes[0].second.host == "10.244.1.2");
    CHECK(f.host.probes[0].second.network == "ns-node-node-1");
    // Its own /etc/hosts, as kubelet writes a pod's on its own network.
    const auto etc = std::find_if(f.host.sources.begin(), f.host.sources.end(),
                                  [](const VolumeSource& v) { return v.name == "~etc"; });
    REQUIRE(etc != f.host.sources.end());
    CHECK(etc->files.at(0).data.find("10.244.1.2\tp") != std::string::npos);
  }
  // The runner gone, its namespace goes and its address is free again.
  CHECK(f.host.removed_pod_networks == std::vector<std::string>{"uid-1"});
  CHECK(node->ip_pool().Allocate().value() == *ParseIpv4("10.244.1.2"));

  // A node whose address is outside nodeIPRange, or that the network
  // refuses, is hosted on this machine's network.
  SimNode outside = testing::TestNode("node-2", "10.244.2.0/24");
  outside.type = RuntimeType::kProcess;
  outside.node_network = *ParseCidr("172.16.0.0/16");
  Status added = agents.AddNode(outside);
  CHECK_FALSE(added.ok());
  CHECK(added.message() == "not on the pod network (its pods run on this machine's network): its InternalIP "
                           "192.168.0.2 is not an address of nodeIPRange 172.16.0.0/16");
  REQUIRE(agents.FindNode("node-2") != nullptr);
  CHECK(agents.FindNode("node-2")->network().empty());
  CHECK(agents.FindNode("node-2")->host_ip() == "127.0.0.1");
  SimNode refused = testing::TestNode("node-3", "10.244.3.0/24");
  refused.type = RuntimeType::kProcess;
  refused.node_network = *ParseCidr("192.168.0.0/16");
  refused.internal_ip = *ParseIpv4("192.168.0.4");
  refused.internal_ip_given = true;  // given: kept
  f.host.refuse_node = Status::Unavailable("RTNETLINK answers: File exists");
  CHECK_FALSE(agents.AddNode(refused).ok());
  CHECK(agents.FindNode("node-3")->host_ip() == "192.168.0.4");
  CHECK(agents.FindNode("node-3")->network().empty());
  agents.RemoveNode("node-1");
  CHECK(f.host.removed_node_networks == std::vector<std::string>{"node-1"});
}

TEST_CASE("process node on this machine's network: two pods cannot take one port of it; the second's sandbox waits "
          "until the port is free") {
  Fixture f;
  const auto web = [&](const std::string& name) {
    return std::make_unique<PodRunner>(PodAssignment{"/registry/pods/default/" + name, 7, PodFromYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: )" + name + R"(}
spec:
  containers:
  - {name: web, image: busybox:1.28, command: ["sleep", "3600"], ports: [{containerPort: 8080}, {containerPort: 53, protocol: UDP}]}
)")},
                                       f.node.get(), f.clock.now);
  };
  auto first = web("first");
  f.RunUntil(*first, f.clock.now + SimDuration(1000));
  REQUIRE(f.host.launched.size() == 1);
  auto second = web("second");
  model::Report r = f.RunUntil(*second, f.clock.now + SimDuration(1000));
  REQUIRE(Count(r, "FailedCreatePodSandBox") == 1);
  CHECK(r.events.front().message ==
        "Failed to create pod sandbox: port 8080/TCP of this machine is taken by pod default/first (the pods of process "
        "nodes without a pod network share this machine's network)");
  CHECK(f.host.launched.size() == 1);
  first.reset();  // its ports are free again
  f.RunUntil(*second, f.clock.now + SimDuration(30'000));
  CHECK(f.host.launched.size() == 2);
  second.reset();

  // What a container binds is its containerPort (a hostPort maps nothing
  // here); a finished pod holds none, though its object stays.
  auto done = std::make_unique<PodRunner>(PodAssignment{"/registry/pods/default/done", 7, PodFromYaml(R"(apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  restartPolicy: Never
  containers: [{name: job, image: busybox:1.28, command: ["true"], ports: [{containerPort: 9000, hostPort: 19000}]}]
)")},
                                           f.node.get(), f.clock.now);
  f.RunUntil(*done, f.clock.now + SimDuration(1000));
  REQUIRE(f.host.launched.size() == 3);
  CHECK(f.host.ClaimPorts("default/other", {"9000/TCP"}).code() == Code::kAlreadyExists);
  CHECK(f.host.ClaimPorts("default/other", {"19000/TCP"}).ok());
  f.host.ReleasePorts("default/other");
  const SimTime ended = f.clock.now + SimDuration(2000);
  REQUIRE(done->ProcessExited(ContainerExit{3, "/registry/pods/default/done", 0, false, ended}));
  model::Report r2 = f.RunUntil(*done, ended);
  REQUIRE(r2.status.phase == api::PodPhase::Succeeded);
  CHECK(f.host.ClaimPorts("default/other", {"9000/TCP"}).ok());
}

}  // namespace podflow::runtime
