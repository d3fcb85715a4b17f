// The pod lifecycle on simulated time: containers that exit, fail, restart
// and are probed, from manifests as the Kubernetes documentation writes them.
#include <catch2/catch.hpp>
#include <sstream>

#include "model/codec.h"
#include "model/objects.h"
#include "stages/runtime/runtime.h"
#include "test_pods.h"

namespace podflow::runtime {
namespace {

using testing::PodFromYaml;
using testing::WaitingReason;

// The container's KubeletEnv with no ConfigMaps or Secrets.
EnvList EnvOf(const api::PodT& pod, size_t container = 0) {
  Result<EnvList> env = KubeletEnv(pod, *pod.spec->containers.at(container), PodFacts{}, ConfigSources{});
  REQUIRE(env.ok());
  return *env;
}

struct Sim {
  ImageCatalog catalog;
  RuntimeTiming timing;
  ConfigSources sources;
  std::unique_ptr<NodeRuntime> node;
  testing::FakeClock clock;
  SimTime t0 = clock.now;
  std::unique_ptr<PodRunner> runner;
  std::vector<std::string> log;  // "12s Reason message"

  static std::vector<CatalogImage> Registry() {
    std::vector<CatalogImage> images = testing::TestRegistry();
    images.push_back({"registry.k8s.io/busybox", {}, 1'000'000, SimDuration(0), {}});
    CatalogImage job{"example/job", {}, 1'000'000, SimDuration(100), {}};
    job.behavior.exit_after = SimDuration(3000);
    images.push_back(job);
    return images;
  }

  explicit Sim(const std::string& yaml) : catalog(Registry()) {
    SimNode n = testing::TestNode();
    n.images = {"busybox:1.28", "nginx:1.14.2", "registry.k8s.io/busybox", "example/job:v1"};
    node = std::make_unique<NodeRuntime>(n, &catalog, &timing, &sources);
    auto pod = PodFromYaml(yaml);
    runner = std::make_unique<PodRunner>(
        PodAssignment{"/registry/pods/default/" + pod->metadata->name, 7, pod}, node.get(), t0);
  }

  // Runs every step up to `seconds` after t0; the last report, if any.
  std::optional<model::Report> Until(double seconds) {
    std::optional<model::Report> last;
    const SimTime until = t0 + SimDuration(static_cast<int64_t>(seconds * 1000));
    while (runner->due() && *runner->due() <= until) {
      const SimTime at = *runner->due();
      last = runner->Step();
      for (const auto& e : last->events) {
        std::ostringstream line;
        line << (at - t0).count() / 1000.0 << "s " << e.reason << " " << e.message;
        log.push_back(line.str());
      }
    }
    return last;
  }
  const api::PodStatusT& status() const { return runner->status(); }
  const api::ContainerStatusT& app(size_t i = 0) const {
    return *status().container_statuses.at(i);
  }
  const api::ContainerStatusT& init(size_t i = 0) const {
    return *status().init_container_statuses.at(i);
  }
  // The log lines with `reason`.
  std::vector<std::string> With(const std::string& reason) const {
    std::vector<std::string> out;
    for (const std::string& l : log) {
      if (l.find(" " + reason + " ") != std::string::npos) out.push_back(l);
    }
    return out;
  }
};

TEST_CASE("printenv runs to completion: Completed, Succeeded, nothing more") {
  Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: envar-demo}
spec:
  restartPolicy: Never
  containers:
  - name: envar-demo-container
    image: busybox:1.28
    command: ["printenv"]
    args: ["DEMO_GREETING"]
    env:
    - {name: DEMO_GREETING, value: "Hello from the environment"}
)");
  sim.Until(0);
  const api::ContainerStatusT& c = sim.app();
  REQUIRE(c.state->terminated);
  CHECK(c.state->terminated->exit_code == 0);
  CHECK(c.state->terminated->reason == "Completed");
  CHECK(c.state->terminated->started_at == "2024-05-01T12:00:00Z");
  CHECK(c.state->terminated->finished_at == "2024-05-01T12:00:00Z");
  CHECK_FALSE(c.ready);
  CHECK(c.restart_count == 0);
  CHECK(sim.status().phase == api::PodPhase::Succeeded);
  CHECK_FALSE(sim.runner->due());
}

TEST_CASE("a failing container restarts at once, then in CrashLoopBackOff 10s doubling to 5m") {
  Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  containers:
  - name: app
    image: busybox:1.28
    command: ["sh", "-c", "echo boom; exit 1"]
)");
  sim.Until(0);
  const api::ContainerStatusT& c = sim.app();
  CHECK(c.restart_count == 1);  // the first restart comes without back-off
  CHECK(WaitingReason(c) == "CrashLoopBackOff");
  CHECK(c.state->waiting->message ==
        "back-off 10s restarting failed container=app pod=crash_default(uid-1)");
  REQUIRE(c.last_state);
  REQUIRE(c.last_state->terminated);
  CHECK(c.last_state->terminated->exit_code == 1);
  CHECK(c.last_state->terminated->reason == "Error");
  CHECK(sim.status().phase == api::PodPhase::Running);  // restartPolicy Always
  REQUIRE(sim.With("BackOff").size() == 1);
  CHECK(sim.With("BackOff")[0] ==
        "0s BackOff Back-off restarting failed container app in pod crash_default(uid-1)");

  // Each restart comes when the back-off is over.
  std::vector<double> starts;
  sim.log.clear();
  sim.Until(3600);
  for (const std::string& l : sim.With("Started")) starts.push_back(std::stod(l));
  CHECK(starts == std::vector<double>{10, 30, 70, 150, 310, 610, 910, 1210, 1510, 1810, 2110, 2410,
                                      2710, 3010, 3310});
  CHECK(sim.app().state->waiting->message ==
        "back-off 5m0s restarting failed container=app pod=crash_default(uid-1)");
  CHECK(sim.app().restart_count == 16);
}

TEST_CASE("restartPolicy decides what an exit leaves") {
  SECTION("OnFailure: exit 0 stays Completed, the pod Succeeded") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: ok}
spec:
  restartPolicy: OnFailure
  containers: [{name: app, image: busybox:1.28, command: ["sh", "-c", "sleep 5"]}]
)");
    sim.Until(4);
    CHECK(sim.status().phase == api::PodPhase::Running);
    CHECK(sim.app().ready);
    sim.Until(100);
    CHECK(sim.status().phase == api::PodPhase::Succeeded);
    CHECK(sim.app().state->terminated->finished_at == "2024-05-01T12:00:05Z");
    CHECK(sim.app().restart_count == 0);
  }
  SECTION("Never: exit 1 leaves the pod Failed, with the log's tail as the message") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: fails}
spec:
  restartPolicy: Never
  containers:
  - name: app
    image: busybox:1.28
    command: ["sh", "-c", "echo something went wrong; exit 2"]
    terminationMessagePolicy: FallbackToLogsOnError
)");
    sim.Until(100);
    CHECK(sim.status().phase == api::PodPhase::Failed);
    CHECK(sim.app().state->terminated->exit_code == 2);
    CHECK(sim.app().state->terminated->reason == "Error");
    CHECK(sim.app().state->terminated->message == "something went wrong\n");
    CHECK_FALSE(sim.runner->due());
  }
  SECTION("a catalog image's own behaviour: the job image exits 0 after 3s") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: job}
spec:
  restartPolicy: OnFailure
  containers: [{name: work, image: "example/job:v1"}]
)");
    sim.Until(2.9);
    CHECK(sim.status().phase == api::PodPhase::Running);
    sim.Until(3);
    CHECK(sim.status().phase == api::PodPhase::Succeeded);
  }
  SECTION("after more than 10 minutes of running the back-off starts again") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: long
  annotations: {behavior.podflow.io/app: "{exitAfter: 11m, exitCode: 1}"}
spec:
  containers: [{name: app, image: busybox:1.28}]
)");
    sim.Until(3 * 660 + 1);
    CHECK(sim.app().restart_count == 3);
    CHECK(sim.With("BackOff").empty());
    CHECK(sim.app().state->running);
  }
}

TEST_CASE("a memory use above limits.memory is OOMKilled") {
  Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: memory-demo-2
  annotations: {behavior.podflow.io/memory-demo-2-ctr: "{memory: 250Mi, memoryAfter: 1s}"}
spec:
  containers:
  - name: memory-demo-2-ctr
    image: busybox:1.28
    resources:
      requests: {memory: 50Mi}
      limits: {memory: 100Mi}
    command: ["sleep", "3600"]
)");
  sim.Until(1);
  const api::ContainerStatusT& c = sim.app();
  CHECK(c.restart_count == 1);
  REQUIRE(c.last_state->terminated);
  CHECK(c.last_state->terminated->reason == "OOMKilled");
  CHECK(c.last_state->terminated->exit_code == 137);
  sim.Until(2);
  CHECK(WaitingReason(sim.app()) == "CrashLoopBackOff");
}

TEST_CASE(
    "the liveness-exec example: three failures, Killing, SIGKILL after the grace period, restart") {
  Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  labels:
    test: liveness
  name: liveness-exec
spec:
  containers:
  - name: liveness
    image: registry.k8s.io/busybox
    args:
    - /bin/sh
    - -c
    - touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600
    livenessProbe:
      exec:
        command:
        - cat
        - /tmp/healthy
      initialDelaySeconds: 5
      periodSeconds: 5
)");
  sim.Until(29);
  // Pulling (:latest is pulled Always), Pulled, Created, Started: the passing
  // probes cost no step.
  CHECK(sim.log.size() == 4);
  sim.Until(69);
  CHECK(sim.With("Unhealthy") ==
        std::vector<std::string>{"30s Unhealthy Liveness probe failed: cat: can't open "
                                 "'/tmp/healthy': No such file or directory",
                                 "35s Unhealthy Liveness probe failed: cat: can't open "
                                 "'/tmp/healthy': No such file or directory",
                                 "40s Unhealthy Liveness probe failed: cat: can't open "
                                 "'/tmp/healthy': No such file or directory"});
  CHECK(sim.With("Killing") ==
        std::vector<std::string>{
            "40s Killing Container liveness failed liveness probe, will be restarted"});
  CHECK(sim.app().state->running);  // sh ignores SIGTERM: it runs until the SIGKILL
  CHECK(sim.app().restart_count == 0);
  sim.Until(70);
  CHECK(sim.app().restart_count == 1);
  CHECK(sim.app().state->running);
  CHECK(sim.app().last_state->terminated->exit_code == 137);
  CHECK(sim.app().last_state->terminated->reason == "Error");
  CHECK(sim.app().last_state->terminated->finished_at == "2024-05-01T12:01:10Z");
  // The second run fails the same way; its end comes with the back-off.
  sim.Until(140);
  CHECK(WaitingReason(sim.app()) == "CrashLoopBackOff");
  sim.Until(150);
  CHECK(sim.app().restart_count == 2);
}

TEST_CASE("readiness toggles ready; a failed startup probe holds the others, then kills") {
  SECTION("unready for a while, ready again") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations: {podflow.io/behavior: "{unreadyAfter: 20s, unreadyFor: 15s}"}
spec:
  containers:
  - name: web
    image: nginx:1.14.2
    ports: [{containerPort: 80}]
    readinessProbe:
      httpGet: {path: /, port: 80}
      periodSeconds: 5
)");
    sim.Until(0);
    CHECK(sim.app().ready);
    sim.Until(29);
    CHECK(sim.app().ready);  // two failures of three
    sim.Until(30);
    CHECK_FALSE(sim.app().ready);
    CHECK(sim.With("Unhealthy").size() == 3);
    CHECK(sim.With("Unhealthy")[0] ==
          "20s Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 500");
    sim.Until(35);
    CHECK(sim.app().ready);
    CHECK(sim.app().restart_count == 0);
    CHECK_FALSE(sim.runner->due());  // passing for good: no more probes to step
  }
  SECTION("startup takes 20s") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: slow
  annotations: {podflow.io/behavior: "{readyAfter: 20s}"}
spec:
  containers:
  - name: app
    image: nginx:1.14.2
    ports: [{name: http, containerPort: 8080}]
    startupProbe:
      httpGet: {path: /healthz, port: http}
      periodSeconds: 5
      failureThreshold: 30
    livenessProbe:
      httpGet: {path: /healthz, port: http}
)");
    sim.Until(19);
    CHECK(sim.app().started == false);
    CHECK_FALSE(sim.app().ready);
    CHECK(sim.status().phase == api::PodPhase::Running);
    REQUIRE(sim.With("Unhealthy").size() == 4);
    CHECK(sim.With("Unhealthy")[0] ==
          "0s Unhealthy Startup probe failed: Get \"http://10.244.1.2:8080/healthz\": dial tcp "
          "10.244.1.2:8080: connect: connection refused");
    sim.Until(20);
    CHECK(sim.app().started == true);
    CHECK(sim.app().ready);
  }
  SECTION("startup never succeeds: killed after failureThreshold") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: never
  annotations: {podflow.io/behavior: "{readyAfter: 1h}"}
spec:
  terminationGracePeriodSeconds: 3
  containers:
  - name: app
    image: nginx:1.14.2
    startupProbe:
      tcpSocket: {port: 8080}
      periodSeconds: 1
      failureThreshold: 3
)");
    sim.Until(2);
    CHECK(sim.With("Killing") ==
          std::vector<std::string>{
              "2s Killing Container app failed startup probe, will be restarted"});
    REQUIRE(sim.With("Unhealthy").size() == 4);  // 0s, 1s, 2s; the new container's first at 2s
    CHECK(
        sim.With("Unhealthy")[0] ==
        "0s Unhealthy Startup probe failed: dial tcp 10.244.1.2:8080: connect: connection refused");
    sim.Until(2.5);
    CHECK(sim.app().restart_count == 1);  // nginx takes SIGTERM and exits at once
    CHECK(sim.app().last_state->terminated->reason == "Completed");
  }
}

TEST_CASE("init containers retry by the restart policy; sidecars restart and are stopped last") {
  SECTION("a failing init container under Always: Init:CrashLoopBackOff, the app waits") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: init-fails}
spec:
  initContainers: [{name: setup, image: busybox:1.28, command: ["sh", "-c", "exit 1"]}]
  containers: [{name: app, image: nginx:1.14.2}]
)");
    sim.Until(29);
    CHECK(sim.init().restart_count == 2);  // at once, then after 10s
    CHECK(WaitingReason(sim.init()) == "CrashLoopBackOff");
    CHECK(WaitingReason(sim.app()) == "PodInitializing");
    CHECK(sim.status().phase == api::PodPhase::Pending);
  }
  SECTION("under Never the pod fails") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: init-fails}
spec:
  restartPolicy: Never
  initContainers: [{name: setup, image: busybox:1.28, command: ["sh", "-c", "exit 1"]}]
  containers: [{name: app, image: nginx:1.14.2}]
)");
    sim.Until(60);
    CHECK(sim.status().phase == api::PodPhase::Failed);
    CHECK(sim.init().state->terminated->exit_code == 1);
    CHECK(sim.init().restart_count == 0);
    CHECK_FALSE(sim.runner->due());
  }
  SECTION("a sidecar restarts when it exits and is stopped once the job's container completed") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: job-with-sidecar
  annotations: {behavior.podflow.io/logshipper: "{exitAfter: 8s}"}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  initContainers:
  - name: logshipper
    image: busybox:1.28
    restartPolicy: Always
    command: ["sh", "-c", "tail -F /opt/logs.txt"]
  containers:
  - name: main
    image: busybox:1.28
    command: ["sh", "-c", "echo done; sleep 12"]
)");
    sim.Until(9);
    CHECK(sim.init().restart_count == 1);
    CHECK(sim.init().state->running);
    CHECK(sim.app().state->running);
    sim.Until(12);
    CHECK(sim.app().state->terminated);
    CHECK(sim.With("Killing") ==
          std::vector<std::string>{"12s Killing Stopping container logshipper"});
    CHECK(sim.status().phase == api::PodPhase::Running);  // the sidecar stops
    sim.Until(14);
    CHECK(sim.init().state->terminated);
    CHECK(sim.init().state->terminated->exit_code == 137);
    CHECK(sim.init().restart_count == 1);
    CHECK(sim.status().phase == api::PodPhase::Succeeded);
    CHECK_FALSE(sim.runner->due());
  }
}

TEST_CASE("a restart shows the container that ended until the new one is created") {
  Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: repull}
spec:
  containers: [{name: app, image: busybox, command: ["sh", "-c", "sleep 5; exit 1"]}]
)");
  // busybox is :latest, pulled Always: 100ms for each start.
  sim.Until(5.15);
  const api::ContainerStatusT& c = sim.app();
  REQUIRE(c.state->terminated);  // the pull for the restart is under way
  CHECK(c.state->terminated->exit_code == 1);
  CHECK(c.restart_count == 0);
  CHECK(sim.status().phase == api::PodPhase::Running);
  sim.Until(5.2);
  CHECK(sim.app().state->running);
  CHECK(sim.app().restart_count == 1);
  CHECK(sim.app().last_state->terminated->exit_code == 1);
}

TEST_CASE("a liveness failure under restartPolicy Never kills for good; a sidecar's says Init container") {
  SECTION("Never") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: once
  annotations: {podflow.io/behavior: "{livenessFailAfter: 10s}"}
spec:
  restartPolicy: Never
  containers:
  - name: app
    image: nginx:1.14.2
    livenessProbe: {tcpSocket: {port: 80}, periodSeconds: 5, failureThreshold: 1}
)");
    sim.Until(60);
    CHECK(sim.With("Killing") == std::vector<std::string>{"10s Killing Container app failed liveness probe"});
    CHECK(sim.status().phase == api::PodPhase::Succeeded);  // nginx exits 0 on SIGTERM
    CHECK(sim.app().restart_count == 0);
  }
  SECTION("sidecar") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: side
  annotations: {behavior.podflow.io/proxy: "{livenessFailAfter: 10s}"}
spec:
  initContainers:
  - name: proxy
    image: nginx:1.14.2
    restartPolicy: Always
    livenessProbe: {tcpSocket: {port: 80}, periodSeconds: 5, failureThreshold: 1}
  containers: [{name: app, image: nginx:1.14.2}]
)");
    sim.Until(10);
    CHECK(sim.With("Killing") ==
          std::vector<std::string>{"10s Killing Init container proxy failed liveness probe"});
    CHECK(sim.init().restart_count == 1);
  }
}

TEST_CASE("every kill runs the preStop hook first, as kubelet's killContainer: a liveness kill, a sidecar's stop") {
  SECTION("liveness") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: once
  annotations: {podflow.io/behavior: "{livenessFailAfter: 10s}"}
spec:
  restartPolicy: Never
  containers:
  - name: app
    image: nginx:1.14.2
    livenessProbe: {tcpSocket: {port: 80}, periodSeconds: 5, failureThreshold: 1}
    lifecycle: {preStop: {sleep: {seconds: 3}}}
)");
    sim.Until(12);
    CHECK(sim.With("Killing") == std::vector<std::string>{"10s Killing Container app failed liveness probe"});
    CHECK(sim.app().state->running);  // its preStop hook runs
    sim.Until(13);
    REQUIRE(sim.app().state->terminated);
    CHECK(sim.app().state->terminated->finished_at == "2024-05-01T12:00:13Z");  // SIGTERM after the hook
  }
  SECTION("a sidecar stopped after the app containers of a deleted pod") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: side}
spec:
  initContainers:
  - name: proxy
    image: nginx:1.14.2
    restartPolicy: Always
    lifecycle: {preStop: {sleep: {seconds: 2}}}
  containers: [{name: app, image: nginx:1.14.2}]
)");
    sim.Until(1);
    sim.runner->Terminate(sim.t0 + SimDuration(1000), SimDuration(30'000));
    sim.Until(10);
    REQUIRE(sim.app().state->terminated);
    CHECK(sim.app().state->terminated->finished_at == "2024-05-01T12:00:01Z");
    REQUIRE(sim.init().state->terminated);
    CHECK(sim.init().state->terminated->finished_at == "2024-05-01T12:00:03Z");  // its hook's 2 s first
  }
}

TEST_CASE("sidecars stop one after the other, the last started first") {
  Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: two-sidecars}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 3
  initContainers:
  - {name: first, image: busybox:1.28, restartPolicy: Always, command: ["sleep", "infinity"]}
  - {name: second, image: busybox:1.28, restartPolicy: Always, command: ["sleep", "infinity"]}
  containers: [{name: main, image: busybox:1.28, command: ["sleep", "10"]}]
)");
  sim.Until(100);
  // sleep ignores SIGTERM: each waits out the grace period before the next is signalled.
  CHECK(sim.With("Killing") == std::vector<std::string>{"10s Killing Stopping container second",
                                                        "13s Killing Stopping container first"});
  CHECK(sim.init(0).state->terminated->finished_at == "2024-05-01T12:00:16Z");
  CHECK(sim.init(1).state->terminated->finished_at == "2024-05-01T12:00:13Z");
  CHECK(sim.status().phase == api::PodPhase::Succeeded);
  CHECK_FALSE(sim.runner->due());
}

TEST_CASE("an invalid behaviour annotation: CreateContainerConfigError naming it") {
  Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: bad
  annotations: {behavior.podflow.io/app: "{exitCode: 999}"}
spec:
  containers: [{name: app, image: busybox:1.28}]
)");
  sim.Until(1);
  CHECK(WaitingReason(sim.app()) == "CreateContainerConfigError");
  const std::string why =
      "metadata.annotations[behavior.podflow.io/app].exitCode: must be an integer 0..255";
  CHECK(sim.app().state->waiting->message == why);
  CHECK(sim.With("Failed") == std::vector<std::string>{"0s Failed Error: " + why});
  CHECK(sim.status().phase == api::PodPhase::Pending);
}

TEST_CASE("kubelet's $(VAR) expansion") {
  const EnvList env = {{"A", "x"}, {"B", "y"}};
  CHECK(ExpandKubeVars("$(A)-$(B)", env) == "x-y");
  CHECK(ExpandKubeVars("$(C)", env) == "$(C)");
  CHECK(ExpandKubeVars("$$(A)", env) == "$(A)");
  CHECK(ExpandKubeVars("$$", env) == "$");
  CHECK(ExpandKubeVars("$A $(A", env) == "$A $(A");
  api::PodT pod = *PodFromYaml(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: dependent-envars-demo}
spec:
  containers:
  - name: dependent-envars-demo
    image: busybox
    env:
    - {name: SERVICE_PORT, value: "80"}
    - {name: SERVICE_IP, value: "172.17.0.1"}
    - {name: UNCHANGED_REFERENCE, value: "$(PROTOCOL)://$(SERVICE_IP):$(SERVICE_PORT)"}
    - {name: PROTOCOL, value: "https"}
    - {name: SERVICE_ADDRESS, value: "$(PROTOCOL)://$(SERVICE_IP):$(SERVICE_PORT)"}
    - {name: ESCAPED_REFERENCE, value: "$$(PROTOCOL)://$(SERVICE_IP):$(SERVICE_PORT)"}
)yaml");
  const EnvList got = ContainerEnv(pod, EnvOf(pod));
  auto value = [&](const std::string& name) {
    for (const auto& [k, v] : got) {
      if (k == name) return v;
    }
    return std::string("<unset>");
  };
  // The values the documentation's example prints.
  CHECK(value("UNCHANGED_REFERENCE") == "$(PROTOCOL)://172.17.0.1:80");
  CHECK(value("SERVICE_ADDRESS") == "https://172.17.0.1:80");
  CHECK(value("ESCAPED_REFERENCE") == "$(PROTOCOL)://172.17.0.1:80");
  CHECK(value("HOSTNAME") == "dependent-envars-demo");
  // $(VAR) names only the container's env: HOSTNAME is the runtime's.
  api::PodT other = pod;
  other.spec->containers[0]->env[0]->value = "$(HOSTNAME)";
  const EnvList kubelet_env = EnvOf(other);
  CHECK(kubelet_env[0] == std::make_pair(std::string("SERVICE_PORT"), std::string("$(HOSTNAME)")));
  // The container's own HOME wins.
  other.spec->containers[0]->env[1]->name = "HOME";
  other.spec->containers[0]->env[1]->value = "/data";
  const EnvList process = ContainerEnv(other, EnvOf(other));
  CHECK(ReadCommand({"printenv", "HOME"}, process).behavior.logs == std::vector<std::string>{"/data"});
}

TEST_CASE("expansions feeding each other stay bounded") {
  api::PodT pod = *PodFromYaml(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: bomb}
spec:
  containers: [{name: c, image: busybox}]
)yaml");
  auto& env = pod.spec->containers[0]->env;
  std::string previous = "A";
  for (int i = 0; i < 40; ++i) {
    auto e = std::make_unique<api::EnvVarT>();
    e->name = "V" + std::to_string(i);
    e->value = i == 0 ? std::string(1000, 'x') : "$(" + previous + ")$(" + previous + ")";
    previous = e->name;
    env.push_back(std::move(e));
  }
  size_t bytes = 0;
  for (const auto& [k, v] : EnvOf(pod)) bytes += v.size();
  CHECK(bytes <= 1024 * 1024);
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

TEST_CASE("a deleted pod stops gracefully: preStop, SIGTERM, SIGKILL at the grace period") {
  SECTION("nginx takes SIGTERM and exits at once") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: nginx, image: nginx:1.14.2}]
)");
    sim.Until(1);
    sim.runner->Terminate(sim.t0 + SimDuration(1000), SimDuration(30'000));
    sim.Until(1);
    CHECK(sim.With("Killing") == std::vector<std::string>{"1s Killing Stopping container nginx"});
    REQUIRE(sim.app().state->terminated);
    CHECK(sim.app().state->terminated->exit_code == 0);
    CHECK_FALSE(sim.runner->due());
    CHECK(model::ContainersStopped(sim.status()));
  }
  SECTION("a pod that already completed reports once more, for its removal") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: done}
spec:
  restartPolicy: Never
  containers: [{name: app, image: busybox:1.28, command: ["true"]}]
)");
    sim.Until(1);
    REQUIRE_FALSE(sim.runner->due());
    sim.runner->Terminate(sim.t0 + SimDuration(2000), SimDuration(30'000));
    REQUIRE(sim.runner->due() == sim.t0 + SimDuration(2000));
    const model::Report last = sim.runner->Step();
    CHECK(model::ContainersStopped(last.status));
    CHECK(last.status.phase == api::PodPhase::Succeeded);
    CHECK_FALSE(sim.runner->due());
  }
  SECTION("sleep ignores SIGTERM: SIGKILL when the grace period ends") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: sleeper}
spec:
  terminationGracePeriodSeconds: 5
  containers: [{name: app, image: busybox:1.28, command: ["sleep", "3600"]}]
)");
    sim.Until(0);
    sim.runner->Terminate(sim.t0, SimDuration(5000));
    sim.Until(4.9);
    CHECK(sim.app().state->running);
    sim.Until(5);
    CHECK(sim.app().state->terminated->exit_code == 137);
    CHECK(sim.app().state->terminated->reason == "Error");
  }
  SECTION("a preStop hook runs first, within the grace period") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: hooked}
spec:
  containers:
  - name: web
    image: nginx:1.14.2
    lifecycle: {preStop: {sleep: {seconds: 5}}}
  - name: slow
    image: nginx:1.14.2
    lifecycle: {preStop: {exec: {command: ["sh", "-c", "sleep 60"]}}}
)");
    sim.Until(0);
    sim.runner->Terminate(sim.t0, SimDuration(30'000));
    sim.Until(5);
    CHECK(sim.app(0).state->terminated->exit_code == 0);
    CHECK(sim.app(0).state->terminated->finished_at == "2024-05-01T12:00:05Z");
    CHECK(sim.app(1).state->running);
    sim.Until(29.9);
    CHECK(sim.app(1).state->running);
    // The hook outlasted the grace period: SIGTERM at its end, and still
    // kubelet's 2 s before a SIGKILL; nginx takes the SIGTERM at once.
    sim.Until(30);
    CHECK(sim.app(1).state->terminated->exit_code == 0);
  }
  SECTION("kubelet's minimum: 2 s between SIGTERM and SIGKILL, whatever the grace period or the hook took") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: sleepers}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - {name: plain, image: busybox:1.28, command: ["sleep", "3600"]}
  - name: hooked
    image: busybox:1.28
    command: ["sleep", "3600"]
    lifecycle: {preStop: {sleep: {seconds: 10}}}
)");
    sim.Until(0);
    sim.runner->Terminate(sim.t0, SimDuration(1000));
    sim.Until(1.9);
    CHECK(sim.app(0).state->running);
    CHECK(sim.app(1).state->running);
    sim.Until(2);
    CHECK(sim.app(0).state->terminated->exit_code == 137);
    // Its hook was cut at the grace period's end (1 s), the SIGKILL 2 s later.
    CHECK(sim.app(1).state->running);
    sim.Until(3);
    CHECK(sim.app(1).state->terminated->exit_code == 137);
  }
  SECTION("sidecars stop after the app containers; nothing waiting starts") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: mixed}
spec:
  initContainers:
  - {name: proxy, image: nginx:1.14.2, restartPolicy: Always}
  containers:
  - {name: app, image: nginx:1.14.2, lifecycle: {preStop: {sleep: {seconds: 2}}}}
  - {name: broken, image: "nginx:nope"}
)");
    sim.Until(0);
    CHECK(WaitingReason(sim.app(1)) == "ErrImagePull");
    sim.runner->Terminate(sim.t0, SimDuration(30'000));
    sim.Until(0);
    CHECK(sim.app(1).state->terminated);  // never started: ends where it is
    CHECK(sim.init().state->running);
    sim.Until(2);
    CHECK(sim.With("Killing") == std::vector<std::string>{"0s Killing Stopping container app",
                                                          "2s Killing Stopping container proxy"});
    CHECK(sim.init().state->terminated);
    CHECK(model::ContainersStopped(sim.status()));
    CHECK_FALSE(sim.runner->due());
  }
}

TEST_CASE("postStart: the container is not shown running until its hook ends; a failed hook kills it") {
  SECTION("the docs' exec hook, then a slow one: the next container waits for it") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: lifecycle-demo}
spec:
  containers:
  - name: lifecycle-demo-container
    image: nginx:1.14.2
    lifecycle:
      postStart: {exec: {command: ["/bin/sh", "-c", "echo Hello from the postStart handler > /usr/share/message"]}}
  - name: slow
    image: nginx:1.14.2
    lifecycle: {postStart: {sleep: {seconds: 3}}}
  - name: after
    image: nginx:1.14.2
)");
    sim.Until(1);
    CHECK(sim.app(0).state->running);
    REQUIRE(sim.app(1).state->waiting);
    CHECK(sim.app(1).state->waiting->reason == "ContainerCreating");
    CHECK(sim.app(2).state->waiting);  // not created before the hook ends
    CHECK(sim.status().phase == api::PodPhase::Pending);
    sim.Until(3);
    REQUIRE(sim.app(1).state->running);
    CHECK(sim.app(1).state->running->started_at == "2024-05-01T12:00:00Z");  // when it started
    CHECK(sim.app(2).state->running);
    CHECK(sim.With("FailedPostStartHook").empty());
  }
  SECTION("a failing exec hook: FailedPostStartHook, Killing, a restart") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: hook-fails}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: web
    image: nginx:1.14.2
    lifecycle: {postStart: {exec: {command: ["sh", "-c", "echo no; sleep 1; exit 3"]}}}
)");
    sim.Until(1);
    CHECK(sim.With("FailedPostStartHook") == std::vector<std::string>{"1s FailedPostStartHook PostStartHook failed"});
    CHECK(sim.With("Killing") == std::vector<std::string>{"1s Killing FailedPostStartHook"});
    sim.Until(3);
    CHECK(sim.app().restart_count >= 1);
  }
  SECTION("an httpGet hook to a container not listening yet fails") {
    Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: http-hook, annotations: {podflow.io/behavior: "{readyAfter: 5s}"}}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 2
  containers:
  - name: web
    image: busybox:1.28
    command: ["sleep", "3600"]
    lifecycle: {postStart: {httpGet: {path: /hook, port: 80}}}
)");
    sim.Until(0);
    CHECK(sim.With("FailedPostStartHook") == std::vector<std::string>{"0s FailedPostStartHook PostStartHook failed"});
    CHECK(sim.With("Killing") == std::vector<std::string>{"0s Killing FailedPostStartHook"});
    // Never: killed for good (sleep ignores SIGTERM: SIGKILL at 2 s), the pod Failed.
    sim.Until(40);
    REQUIRE(sim.app().state->terminated);
    CHECK(sim.app().state->terminated->exit_code == 137);
    CHECK(sim.app().restart_count == 0);
    CHECK(sim.status().phase == api::PodPhase::Failed);
  }
}

TEST_CASE("activeDeadlineSeconds: DeadlineExceeded, the pod Failed") {
  Sim sim(R"(
apiVersion: v1
kind: Pod
metadata: {name: bounded}
spec:
  activeDeadlineSeconds: 10
  containers: [{name: app, image: nginx:1.14.2}]
)");
  sim.Until(9);
  CHECK(sim.status().phase == api::PodPhase::Running);
  sim.Until(10);
  CHECK(sim.With("DeadlineExceeded") ==
        std::vector<std::string>{"10s DeadlineExceeded Pod was active on the node longer than the specified deadline"});
  CHECK(sim.status().phase == api::PodPhase::Failed);
  CHECK(sim.status().reason == "DeadlineExceeded");
  CHECK(sim.status().message == "Pod was active on the node longer than the specified deadline");
  CHECK(sim.app().state->terminated);
  CHECK_FALSE(sim.runner->due());
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

TEST_CASE("a pod deleted while an init container runs starts nothing more") {
  Sim sim(R"(
apiVersion: v1
kind: Pod
metadata:
  name: init-then-app
  annotations: {behavior.podflow.io/setup: "{exitAfter: 30s}"}
spec:
  initContainers: [{name: setup, image: nginx:1.14.2}]
  containers: [{name: app, image: nginx:1.14.2}]
)");
  sim.Until(5);
  sim.runner->Terminate(sim.t0 + SimDuration(5000), SimDuration(30'000));
  sim.Until(100);
  CHECK(sim.init().state->terminated);
  CHECK(sim.app().state->terminated);  // never started
  CHECK(sim.With("Started").size() == 1);
  CHECK(model::ContainersStopped(sim.status()));
  CHECK_FALSE(sim.runner->due());
}

TEST_CASE("$(VAR) fan-out past 1 MiB is kept as written") {
  const EnvList env = {{"A", std::string(500'000, 'a')}};
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "$(A)";
  CHECK(ExpandKubeVars(text, env) == text);
  CHECK(ExpandKubeVars("$(A)$(A)", env).size() == 1'000'000);
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

TEST_CASE("a Secret the env names holds the container in CreateContainerConfigError until it appears") {
  Sim sim(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: secret-env}
spec:
  restartPolicy: Never
  containers:
  - name: app
    image: busybox:1.28
    command: ["sh", "-c", "echo $SECRET_USERNAME; sleep 3600"]
    env:
    - name: SECRET_USERNAME
      valueFrom:
        secretKeyRef: {name: mysecret, key: username}
  - name: other
    image: busybox:1.28
    command: ["sleep", "3600"]
)yaml");
  sim.Until(0);
  CHECK(WaitingReason(sim.app(0)) == "CreateContainerConfigError");
  CHECK(sim.app(0).state->waiting->message == "secret \"mysecret\" not found");
  CHECK(sim.With("Failed") == std::vector<std::string>{"0s Failed Error: secret \"mysecret\" not found"});
  // The next container is not held up.
  CHECK(sim.app(1).state->running);
  CHECK(sim.status().phase == api::PodPhase::Pending);
  // Still missing at the next sync (10 s later): the same again.
  sim.Until(10);
  CHECK(sim.With("Failed").size() == 2);
  CHECK(sim.With("Pulled").back() == "10s Pulled Container image \"busybox:1.28\" already present on machine");
  sim.sources.Put(model::ObjectKey(model::Kind("Secret"), "default", "mysecret"),
                  ConfigData{{{"username", "my-app"}}, {}});
  sim.Until(19.9);
  CHECK(WaitingReason(sim.app(0)) == "CreateContainerConfigError");
  sim.Until(20);
  REQUIRE(sim.app(0).state->running);
  CHECK(sim.With("Started").back() == "20s Started Started container app");
  CHECK(sim.status().phase == api::PodPhase::Running);
}

TEST_CASE("a ConfigMap volume that does not exist holds the pod in ContainerCreating with FailedMount") {
  Sim sim(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: dapi-test-pod}
spec:
  containers:
    - name: test-container
      image: busybox:1.28
      command: [ "/bin/sh", "-c", "ls /etc/config/" ]
      volumeMounts:
      - name: config-volume
        mountPath: /etc/config
  volumes:
    - name: config-volume
      configMap:
        name: special-config
  restartPolicy: Never
)yaml");
  sim.Until(3);
  const std::string failed =
      "FailedMount MountVolume.SetUp failed for volume \"config-volume\" : configmap \"special-config\" not found";
  // The volume manager's back-off: 0.5 s, doubling.
  CHECK(sim.With("FailedMount") ==
        std::vector<std::string>{"0s " + failed, "0.5s " + failed, "1.5s " + failed});
  CHECK(WaitingReason(sim.app()) == "ContainerCreating");
  CHECK(sim.status().pod_ip.empty());
  CHECK(sim.With("Created").empty());
  sim.sources.Put(model::ObjectKey(model::Kind("ConfigMap"), "default", "special-config"),
                  ConfigData{{{"SPECIAL_LEVEL", "very"}}, {}});
  sim.Until(3.5);
  CHECK(sim.With("FailedMount").size() == 3);
  CHECK_FALSE(sim.status().pod_ip.empty());
  REQUIRE(sim.app().state->terminated);  // `ls` ran and exited
  CHECK(sim.app().state->terminated->reason == "Completed");
  CHECK(sim.status().phase == api::PodPhase::Succeeded);
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

LogQuery Query(std::string container, bool previous = false, bool timestamps = false,
               std::optional<int64_t> tail = {}, std::optional<int64_t> since = {},
               std::optional<int64_t> limit = {}) {
  return LogQuery{std::move(container), previous, timestamps, tail, since, limit};
}

TEST_CASE("a container's log as kubelet serves it: the lines so far, the previous run, kubelet's refusals") {
  Sim sim(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: counter}
spec:
  containers:
  - name: count
    image: busybox:1.28
    command: ["sh", "-c", "echo one; sleep 5; echo two; sleep 5; echo three; exit 2"]
  - name: waits
    image: example/not-there:1
)yaml");
  // The text, or "error: " and kubelet's words.
  auto log = [&](const LogQuery& q, double seconds) -> std::string {
    Result<LogAnswer> a = sim.runner->ContainerLog(q, sim.t0 + SimDuration(static_cast<int64_t>(seconds * 1000)));
    return a.ok() ? a->text : "error: " + a.status().message();
  };
  sim.Until(1);
  CHECK(log(Query("count"), 1) == "one\n");
  CHECK(log(Query("count", false, true), 1) == "2024-05-01T12:00:00.000000000Z one\n");
  CHECK(log(Query("count", true), 1) ==
        "error: previous terminated container \"count\" in pod \"counter\" not found");
  CHECK(log(Query("nope"), 1) == "error: container \"nope\" in pod \"counter\" is not available");
  sim.Until(6);
  CHECK(log(Query("count"), 6) == "one\ntwo\n");
  CHECK(log(Query("count", false, false, 1), 6) == "two\n");
  CHECK(log(Query("count", false, false, {}, 2), 6) == "two\n");
  CHECK(log(Query("count", false, false, {}, {}, 5), 6) == "one\nt");
  // A follow asks for what came after the lines it has.
  const Result<LogAnswer> so_far = sim.runner->ContainerLog(Query("count"), sim.t0 + SimDuration(6000));
  REQUIRE(so_far.ok());
  CHECK(so_far->lines == 2);
  CHECK(so_far->container_id == sim.app(0).container_id);
  LogQuery next = Query("count");
  next.from_line = 1;
  CHECK(log(next, 6) == "two\n");
  next.from_line = 2;
  CHECK(log(next, 6).empty());
  // It exits at 10 s and restarts at once: the ended run is the previous log.
  sim.Until(10);
  REQUIRE(sim.app(0).restart_count == 1);
  CHECK(log(Query("count", true), 10) == "one\ntwo\nthree\n");
  CHECK(log(Query("count", true, true), 10) ==
        "2024-05-01T12:00:00.000000000Z one\n2024-05-01T12:00:05.000000000Z two\n"
        "2024-05-01T12:00:10.000000000Z three\n");
  CHECK(log(Query("count"), 10) == "one\n");  // the new run's first line
  // Its second exit (20 s) puts it in CrashLoopBackOff: its log is that run's.
  sim.Until(21);
  REQUIRE(WaitingReason(sim.app(0)) == "CrashLoopBackOff");
  CHECK(log(Query("count"), 21) == "one\ntwo\nthree\n");
  CHECK(log(Query("count", true, true), 21).starts_with(
      "2024-05-01T12:00:10.000000000Z one\n"));
  // A container that never started has no log yet.
  sim.Until(30);
  CHECK_THAT(log(Query("waits"), 30),
             Catch::Matches("error: container \"waits\" in pod \"counter\" is waiting to start: "
                            "(image can't be pulled|trying and failing to pull image)"));
}

TEST_CASE("the log of a deleted pod's waiting containers: the run before, or none") {
  Sim sim(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: gone}
spec:
  containers:
  - {name: crash, image: busybox:1.28, command: ["sh", "-c", "echo boom; exit 1"]}
  - {name: stuck, image: example/not-there:1}
)yaml");
  sim.Until(1);
  REQUIRE(WaitingReason(sim.app(0)) == "CrashLoopBackOff");
  sim.runner->Terminate(sim.t0 + SimDuration(1000), SimDuration(0));
  sim.Until(2);
  REQUIRE(sim.app(0).state->terminated);
  REQUIRE(sim.app(1).state->terminated);
  const SimTime now = sim.t0 + SimDuration(2000);
  const Result<LogAnswer> crash = sim.runner->ContainerLog(Query("crash"), now);
  REQUIRE(crash.ok());
  CHECK(crash->text == "boom\n");
  CHECK(sim.runner->ContainerLog(Query("stuck"), now).status().message() ==
        "container \"stuck\" in pod \"gone\" is terminated");
}

TEST_CASE("a restart whose environment cannot be made keeps the ended container as lastState") {
  Sim sim(R"yaml(
apiVersion: v1
kind: Pod
metadata: {name: restarts}
spec:
  containers:
  - name: app
    image: busybox:1.28
    command: ["sh", "-c", "echo ran; sleep 1; exit 1"]
    env:
    - name: LEVEL
      valueFrom:
        configMapKeyRef: {name: settings, key: level}
)yaml");
  const std::string key = model::ObjectKey(model::Kind("ConfigMap"), "default", "settings");
  sim.sources.Put(key, ConfigData{{{"level", "high"}}, {}});
  sim.Until(0.5);
  REQUIRE(sim.app().state->running);
  sim.sources.Erase(key);
  sim.Until(1);  // exits, restarts at once, and cannot be made
  CHECK(WaitingReason(sim.app()) == "CreateContainerConfigError");
  CHECK(sim.app().state->waiting->message == "configmap \"settings\" not found");
  REQUIRE(sim.app().last_state);
  REQUIRE(sim.app().last_state->terminated);
  CHECK(sim.app().last_state->terminated->exit_code == 1);
  const Result<LogAnswer> previous = sim.runner->ContainerLog(Query("app", true), sim.t0 + SimDuration(1000));
  REQUIRE(previous.ok());
  CHECK(previous->text == "ran\n");
  sim.sources.Put(key, ConfigData{{{"level", "high"}}, {}});
  sim.Until(11);  // the next sync makes it
  CHECK(sim.app().state->running);
  CHECK(sim.app().restart_count == 1);
  CHECK(sim.app().last_state->terminated->exit_code == 1);
}

}  // namespace
}  // namespace podflow::runtime
