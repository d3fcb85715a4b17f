#include "cli/printers.h"

#include <catch2/catch.hpp>

#include "api_generated.h"
#include "cli/cli_test_util.h"
#include "model/objects.h"

namespace podflow::cli {
namespace {

using testing::Now;
using testing::Objects;
using testing::One;

// A pod named `name` created 10 minutes before Now(), with `rest` appended
// (spec/status YAML at the top level).
std::string PodYaml(const std::string& name, const std::string& rest,
                    const std::string& meta_extra = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\n  creationTimestamp: \"2025-01-14T11:50:00Z\"\n" + meta_extra +
         rest;
}

const char* kOneContainer = R"(spec:
  containers:
  - name: app
    image: nginx:1.14.2
)";

std::string Status(const std::string& pod_yaml) {
  return PodStatusReason(*model::Unpack<api::Pod>(One(pod_yaml)));
}

std::vector<std::string> Row(const std::string& pod_yaml, PrintOptions options = {}) {
  std::vector<std::string> pods = {One(pod_yaml)};
  Table t = BuildTable(model::Kind("Pod"), pods, options, Now());
  REQUIRE(t.rows.size() == 1);
  return t.rows[0];
}

TEST_CASE("pod STATUS follows kubectl's printPod", "[cli][printers]") {
  SECTION("pending, not yet scheduled") {
    CHECK(Status(PodYaml("p", std::string(kOneContainer) + "status:\n  phase: Pending\n")) == "Pending");
  }
  SECTION("status.reason wins over the phase") {
    CHECK(Status(PodYaml("p", std::string(kOneContainer) +
                                  "status:\n  phase: Failed\n  reason: Evicted\n")) == "Evicted");
  }
  SECTION("container waiting reasons") {
    for (const char* reason : {"ContainerCreating", "ErrImagePull", "ImagePullBackOff", "CrashLoopBackOff"}) {
      std::string status = std::string(kOneContainer) +
                           "status:\n  phase: Pending\n  containerStatuses:\n  - name: app\n"
                           "    image: nginx:1.14.2\n    state:\n      waiting:\n        reason: " +
                           reason + "\n";
      CHECK(Status(PodYaml("p", status)) == reason);
    }
  }
  SECTION("running and ready") {
    auto row = Row(PodYaml("web", std::string(kOneContainer) + R"(status:
  phase: Running
  containerStatuses:
  - name: app
    ready: true
    restartCount: 2
    state:
      running:
        startedAt: "2025-01-14T11:51:00Z"
)"));
    CHECK(row == std::vector<std::string>{"web", "1/1", "Running", "2", "10m"});
  }
  SECTION("completed, error, signal and exit code") {
    auto terminated = [](const std::string& fields) {
      return std::string(kOneContainer) +
             "status:\n  phase: Succeeded\n  containerStatuses:\n  - name: app\n    state:\n"
             "      terminated:\n" + fields;
    };
    CHECK(Status(PodYaml("p", terminated("        exitCode: 0\n        reason: Completed\n"))) == "Completed");
    CHECK(Status(PodYaml("p", terminated("        exitCode: 1\n        reason: Error\n"))) == "Error");
    CHECK(Status(PodYaml("p", terminated("        exitCode: 137\n        signal: 9\n"))) == "Signal:9");
    CHECK(Status(PodYaml("p", terminated("        exitCode: 3\n"))) == "ExitCode:3");
  }
  SECTION("init containers") {
    const std::string spec = R"(spec:
  initContainers:
  - name: init-a
    image: busybox
  - name: init-b
    image: busybox
  containers:
  - name: app
    image: nginx
)";
    auto init_state = [&](const std::string& state_a) {
      return PodYaml("p", spec + "status:\n  phase: Pending\n  initContainerStatuses:\n"
                                 "  - name: init-a\n    state:\n" + state_a +
                                 "  - name: init-b\n    state:\n      waiting:\n        reason: PodInitializing\n"
                                 "  containerStatuses:\n  - name: app\n    state:\n      waiting:\n"
                                 "        reason: PodInitializing\n");
    };
    CHECK(Status(init_state("      running:\n        startedAt: \"2025-01-14T11:59:00Z\"\n")) == "Init:0/2");
    CHECK(Status(init_state("      waiting:\n        reason: ErrImagePull\n")) == "Init:ErrImagePull");
    CHECK(Status(init_state("      waiting:\n        reason: CrashLoopBackOff\n")) == "Init:CrashLoopBackOff");
    CHECK(Status(init_state("      terminated:\n        exitCode: 1\n        reason: Error\n")) == "Init:Error");
    CHECK(Status(init_state("      terminated:\n        exitCode: 0\n        reason: Completed\n")) == "Init:1/2");
  }
  SECTION("deletion makes a live pod Terminating") {
    CHECK(Status(PodYaml("p", std::string(kOneContainer) + "status:\n  phase: Running\n",
                         "  deletionTimestamp: \"2025-01-14T11:59:00Z\"\n")) == "Terminating");
    CHECK(Status(PodYaml("p", std::string(kOneContainer) + "status:\n  phase: Succeeded\n",
                         "  deletionTimestamp: \"2025-01-14T11:59:00Z\"\n")) == "Succeeded");
  }
}

TEST_CASE("pod READY and RESTARTS count containers", "[cli][printers]") {
  auto row = Row(PodYaml("two", R"(spec:
  containers:
  - name: a
    image: nginx
  - name: b
    image: nginx
status:
  phase: Running
  containerStatuses:
  - name: a
    ready: true
    restartCount: 1
    state:
      running: {startedAt: "2025-01-14T11:51:00Z"}
  - name: b
    ready: false
    restartCount: 3
    lastState:
      terminated: {exitCode: 1, reason: Error, finishedAt: "2025-01-14T11:57:00Z"}
    state:
      waiting: {reason: CrashLoopBackOff}
)"));
  CHECK(row == std::vector<std::string>{"two", "1/2", "CrashLoopBackOff", "4 (3m ago)", "10m"});
}

TEST_CASE("pod wide columns and the -A namespace column", "[cli][printers]") {
  std::vector<std::string> pods = Objects(PodYaml("a", R"(spec:
  nodeName: node-1
  containers:
  - {name: app, image: nginx}
status:
  phase: Running
  podIP: 10.244.0.5
  podIPs:
  - ip: 10.244.0.5
  containerStatuses:
  - name: app
    ready: true
    state:
      running: {startedAt: "2025-01-14T11:51:00Z"}
)") + "---\n" + PodYaml("pending-one", std::string(kOneContainer) + "status:\n  phase: Pending\n"));
  PrintOptions wide;
  wide.wide = true;
  Table t = BuildTable(model::Kind("Pod"), pods, wide, Now());
  CHECK(t.header == std::vector<std::string>{"NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE",
                                             "NOMINATED NODE", "READINESS GATES"});
  CHECK(RenderTable(t) ==
        "NAME          READY   STATUS    RESTARTS   AGE   IP           NODE     NOMINATED NODE   READINESS GATES\n"
        "a             1/1     Running   0          10m   10.244.0.5   node-1   <none>           <none>\n"
        "pending-one   0/1     Pending   0          10m   <none>       <none>   <none>           <none>\n");

  PrintOptions all;
  all.all_namespaces = true;
  CHECK(RenderTable(BuildTable(model::Kind("Pod"), pods, all, Now())) ==
        "NAMESPACE   NAME          READY   STATUS    RESTARTS   AGE\n"
        "default     a             1/1     Running   0          10m\n"
        "default     pending-one   0/1     Pending   0          10m\n");
}

TEST_CASE("node STATUS and ROLES", "[cli][printers]") {
  std::vector<std::string> nodes = Objects(R"(apiVersion: v1
kind: Node
metadata:
  name: control-plane
  creationTimestamp: "2025-01-12T09:00:00Z"
  labels:
    node-role.kubernetes.io/control-plane: ""
    node-role.kubernetes.io/etcd: ""
spec:
  unschedulable: true
status:
  conditions:
  - {type: MemoryPressure, status: "False"}
  - {type: Ready, status: "True"}
  addresses:
  - {type: InternalIP, address: 192.168.1.10}
  nodeInfo:
    kubeletVersion: v1.32.0
    osImage: Ubuntu 24.04 LTS
    kernelVersion: 6.8.0
    containerRuntimeVersion: containerd://1.7.24
---
apiVersion: v1
kind: Node
metadata:
  name: worker
  creationTimestamp: "2025-01-14T11:00:00Z"
status:
  conditions:
  - {type: Ready, status: Unknown}
---
apiVersion: v1
kind: Node
metadata:
  name: fresh
  creationTimestamp: "2025-01-14T11:59:30Z"
)");
  Table t = BuildTable(model::Kind("Node"), nodes, {}, Now());
  CHECK(RenderTable(t) ==
        "NAME            STATUS                     ROLES                AGE    VERSION\n"
        "control-plane   Ready,SchedulingDisabled   control-plane,etcd   2d3h   v1.32.0\n"
        "worker          NotReady                   <none>               60m    \n"
        "fresh           Unknown                    <none>               30s    \n");
  PrintOptions wide;
  wide.wide = true;
  Table w = BuildTable(model::Kind("Node"), nodes, wide, Now());
  CHECK(w.rows[0] == std::vector<std::string>{"control-plane", "Ready,SchedulingDisabled", "control-plane,etcd",
                                              "2d3h", "v1.32.0", "192.168.1.10", "<none>", "Ubuntu 24.04 LTS",
                                              "6.8.0", "containerd://1.7.24"});
  CHECK(w.rows[1][7] == "<unknown>");
}

TEST_CASE("service TYPE, EXTERNAL-IP and PORT(S)", "[cli][printers]") {
  std::vector<std::string> services = Objects(R"(apiVersion: v1
kind: Service
metadata: {name: web, namespace: default, creationTimestamp: "2025-01-14T09:00:00Z"}
spec:
  type: NodePort
  clusterIP: 10.96.12.7
  clusterIPs: [10.96.12.7]
  selector: {app: web, tier: front}
  ports:
  - {port: 80, nodePort: 30080, protocol: TCP}
  - {port: 53, protocol: UDP}
---
apiVersion: v1
kind: Service
metadata: {name: kubernetes, namespace: default, creationTimestamp: "2025-01-14T11:55:00Z"}
spec:
  clusterIP: 10.96.0.1
  ports:
  - {port: 443}
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: default, creationTimestamp: "2025-01-14T11:55:00Z"}
spec:
  type: LoadBalancer
  clusterIP: 10.96.3.3
  ports:
  - {port: 8080, nodePort: 31000}
)");
  PrintOptions wide;
  wide.wide = true;
  CHECK(RenderTable(BuildTable(model::Kind("Service"), services, wide, Now())) ==
        "NAME         TYPE           CLUSTER-IP   EXTERNAL-IP   PORT(S)               AGE   SELECTOR\n"
        "web          NodePort       10.96.12.7   <none>        80:30080/TCP,53/UDP   3h    app=web,tier=front\n"
        "kubernetes   ClusterIP      10.96.0.1    <none>        443/TCP               5m    <none>\n"
        "lb           LoadBalancer   10.96.3.3    <pending>     8080:31000/TCP        5m    <none>\n");
}

TEST_CASE("endpoints show at most three addresses", "[cli][printers]") {
  std::vector<std::string> endpoints = Objects(R"(apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: default, creationTimestamp: "2025-01-14T11:00:00Z"}
subsets:
- addresses: [{ip: 10.244.0.5}, {ip: 10.244.0.7}, {ip: 10.244.1.2}, {ip: 10.244.1.3}, {ip: 10.244.2.9}]
  ports: [{port: 80}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: two, namespace: default, creationTimestamp: "2025-01-14T11:00:00Z"}
subsets:
- addresses: [{ip: 10.244.0.5}, {ip: 10.244.0.7}]
  ports: [{port: 80}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: empty, namespace: default, creationTimestamp: "2025-01-14T11:00:00Z"}
)");
  Table t = BuildTable(model::Kind("Endpoints"), endpoints, {}, Now());
  CHECK(t.rows[0][1] == "10.244.0.5:80,10.244.0.7:80,10.244.1.2:80 + 2 more...");
  CHECK(t.rows[1][1] == "10.244.0.5:80,10.244.0.7:80");
  CHECK(t.rows[2][1] == "<none>");
  CHECK(t.header == std::vector<std::string>{"NAME", "ENDPOINTS", "AGE"});
}

TEST_CASE("events are listed in the server's order, which is the order they were made in", "[cli][printers]") {
  std::vector<std::string> events = Objects(R"(apiVersion: v1
kind: Event
metadata: {name: nginx-pod.181a9c3b2f7e1000, namespace: default}
involvedObject: {kind: Pod, name: nginx-pod, namespace: default}
reason: Scheduled
message: "Successfully assigned default/nginx-pod to node-1"
type: Normal
eventTime: "2025-01-14T11:59:20.993000Z"
---
apiVersion: v1
kind: Event
metadata: {name: nginx-pod.181a9c3b30b12000, namespace: default}
involvedObject: {kind: Pod, name: nginx-pod, namespace: default}
reason: Started
message: "Started container nginx"
type: Normal
firstTimestamp: "2025-01-14T11:59:20Z"
lastTimestamp: "2025-01-14T11:59:20Z"
count: 1
---
apiVersion: v1
kind: Event
metadata: {name: node-1.181a9c1a00000000, namespace: default}
involvedObject: {kind: Node, name: node-1}
reason: NodeNotReady
message: "Node node-1 status is now: NodeNotReady\n"
type: Warning
firstTimestamp: "2025-01-14T10:00:00Z"
lastTimestamp: "2025-01-14T11:59:50Z"
count: 4
)");
  CHECK(RenderTable(BuildTable(model::Kind("Event"), events, {}, Now())) ==
        "LAST SEEN   TYPE      REASON         OBJECT          MESSAGE\n"
        "39s         Normal    Scheduled      pod/nginx-pod   Successfully assigned default/nginx-pod to node-1\n"
        "40s         Normal    Started        pod/nginx-pod   Started container nginx\n"
        "10s         Warning   NodeNotReady   node/node-1     Node node-1 status is now: NodeNotReady\n");
}

TEST_CASE("ResourceQuota: REQUEST and LIMIT say used/hard per resource, as kubectl prints them", "[cli][printers]") {
  std::vector<std::string> quota = Objects(R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: mem-cpu-demo, creationTimestamp: "2025-01-14T11:00:00Z"}
spec:
  hard: {requests.cpu: "1", requests.memory: 1Gi, limits.cpu: "2", limits.memory: 2Gi, pods: "4"}
status:
  hard: {requests.cpu: "1", requests.memory: 1Gi, limits.cpu: "2", limits.memory: 2Gi, pods: "4"}
  used: {requests.cpu: 400m, requests.memory: 600Mi, limits.cpu: 800m, limits.memory: 800Mi}
)");
  CHECK(RenderTable(BuildTable(model::Kind("ResourceQuota"), quota, {}, Now())) ==
        "NAME           AGE   REQUEST" + std::string(55, ' ') + "LIMIT\n"
        "mem-cpu-demo   60m   pods: 0/4, requests.cpu: 400m/1, requests.memory: 600Mi/1Gi   "
        "limits.cpu: 800m/2, limits.memory: 800Mi/2Gi\n");
}

TEST_CASE("kinds without a printer get NAME and AGE; empty lists", "[cli][printers]") {
  std::vector<std::string> volume = Objects(R"(apiVersion: v1
kind: PersistentVolume
metadata: {name: team-a, creationTimestamp: "2025-01-14T11:00:00Z"}
)");
  CHECK(RenderTable(BuildTable(model::Kind("PersistentVolume"), volume, {}, Now())) == "NAME     AGE\nteam-a   60m\n");
  CHECK(NoResourcesMessage(model::Kind("Pod"), "default", false) == "No resources found in default namespace.");
  CHECK(NoResourcesMessage(model::Kind("Pod"), "default", true) == "No resources found");
  CHECK(NoResourcesMessage(model::Kind("Node"), "default", false) == "No resources found");
}

}  // namespace
}  // namespace podflow::cli
