// The seeds' story end to end, on a real pipeline: one process, and every
// stage in its own process.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include "bad_manifests.h"
#include "free_port.h"
#include "apps_generated.h"
#include "model/conditions.h"
#include "model/labels.h"
#include "netns/command.h"
#include "netns/pod_network.h"
#include "pipeline_fixture.h"
#include "stages/proxy/dns/dns_server.h"

namespace podflow::e2e {
namespace {

using PodCheck = std::function<bool(const api::Pod&)>;

const char* kNginx = R"(apiVersion: v1
kind: Pod
metadata:
  name: nginx-pod
  labels: {app: web}
spec:
  containers:
  - name: nginx
    image: nginx:1.14.2
    ports:
    - containerPort: 80
)";

bool Running(const api::Pod& p) { return p.status() && p.status()->phase() == api::PodPhase::Running; }

std::string PodKey(const std::string& name) { return model::ObjectKey(model::Kind("Pod"), "default", name); }

// The path of an example manifest podflow ships (config/manifests).
std::string Manifest(const std::string& name) { return std::string(PODFLOW_SOURCE_DIR) + "/config/manifests/" + name; }

void SeedsStory(Pipeline& pipeline) {
  SECTION("the nginx pod is admitted, scheduled, bound, started and reported Running") {
    auto results = pipeline.Submit(kNginx);
    REQUIRE(results.size() == 1);
    CHECK(results[0].first.empty());
    std::string bytes;
    const api::Pod* pod = pipeline.WaitFor<api::Pod>(PodKey("nginx-pod"), Running, &bytes);
    INFO(pipeline.Logs());
    REQUIRE(pod != nullptr);
    CHECK_FALSE(pod->spec()->node_name()->str().empty());
    REQUIRE(pod->status()->pod_ip() != nullptr);
    CHECK(pod->status()->pod_ip()->str().rfind("10.244.", 0) == 0);
    REQUIRE(pod->status()->container_statuses() != nullptr);
    CHECK(pod->status()->container_statuses()->Get(0)->ready());
    // The events, in the order the stages wrote them.
    std::vector<std::string> events = pipeline.EventsFor("default", "nginx-pod");
    std::vector<std::string> reasons;
    for (const std::string& e : events) reasons.push_back(e.substr(0, e.find(':')));
    std::vector<std::string> expected = {"Normal Scheduled", "Normal Pulling", "Normal Pulled", "Normal Created",
                                         "Normal Started"};
    CHECK(reasons == expected);
    CHECK(events[0] == "Normal Scheduled: Successfully assigned default/nginx-pod to " +
                           pod->spec()->node_name()->str());

    // Seed 004's `get events --field-selector involvedObject.name=nginx-pod`:
    // the pod's events only, Scheduled first, as kubectl lists them.
    const std::string podflow = Pipeline::Program("podflow");
    auto [code, listed] = RunCommand({podflow, "get", "events", "--field-selector", "involvedObject.name=nginx-pod",
                                      "--config", pipeline.config()},
                                     pipeline.dir());
    INFO(listed);
    CHECK(code == 0);
    std::vector<std::string> lines;
    for (size_t at = 0; at < listed.size();) {
      size_t end = listed.find('\n', at);
      lines.push_back(listed.substr(at, end - at));
      at = end == std::string::npos ? listed.size() : end + 1;
    }
    REQUIRE(lines.size() == 6);
    CHECK(lines[1].find("Scheduled") != std::string::npos);
    CHECK(lines[5].find("Started") != std::string::npos);
    auto [labelled_code, labelled] =
        RunCommand({podflow, "get", "pods", "-l", "app=web", "-o", "name", "--config", pipeline.config()},
                   pipeline.dir());
    CHECK(labelled_code == 0);
    CHECK(labelled == "pod/nginx-pod\n");
    auto [none_code, none] =
        RunCommand({podflow, "get", "pods", "-l", "app in (db)", "--config", pipeline.config()}, pipeline.dir());
    CHECK(none_code == 0);
    CHECK(none == "No resources found in default namespace.\n");
  }

  SECTION("namespaces: the bootstrap ones exist, a missing one refuses pods, a new one gets its default account") {
    for (const char* ns : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
      INFO(ns);
      std::string bytes;
      CHECK(pipeline.WaitFor<api::ServiceAccount>(model::ObjectKey(model::Kind("ServiceAccount"), ns, "default"),
                                                  [](const api::ServiceAccount&) { return true; }, &bytes) != nullptr);
      CHECK(pipeline.Get(model::ObjectKey(model::Kind("Namespace"), "", ns)).has_value());
    }
    auto refused = pipeline.Submit(
        "{apiVersion: v1, kind: Pod, metadata: {name: lost, namespace: nope}, "
        "spec: {containers: [{name: app, image: nginx:1.14.2}]}}");
    REQUIRE(refused.size() == 1);
    CHECK(refused[0] == std::make_pair(std::string("NotFound"), std::string("namespaces \"nope\" not found")));
    CHECK_FALSE(pipeline.Get(model::ObjectKey(model::Kind("Pod"), "nope", "lost")).has_value());

    auto made = pipeline.Submit(
        "{apiVersion: v1, kind: Namespace, metadata: {name: team-a}}\n---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: member, namespace: team-a}, "
        "spec: {containers: [{name: app, image: nginx:1.14.2}]}}");
    REQUIRE(made.size() == 2);
    CHECK(made[0].first.empty());
    CHECK(made[1].first.empty());
    std::string bytes;
    CHECK(pipeline.WaitFor<api::Pod>(model::ObjectKey(model::Kind("Pod"), "team-a", "member"), Running, &bytes) !=
          nullptr);
    CHECK(pipeline.Get(model::ObjectKey(model::Kind("ServiceAccount"), "team-a", "default")).has_value());

    // Kinds of a group are named with it, as kubectl names them.
    auto deployed = pipeline.Submit(
        "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: team-a}, spec: {selector: "
        "{matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, "
        "image: nginx}]}}}}");
    REQUIRE(deployed.size() == 1);
    CHECK(deployed[0] == std::make_pair(std::string(), std::string("deployment.apps/web created")));
    auto [named_code, named] = RunCommand({Pipeline::Program("podflow"), "get", "deploy", "-n", "team-a", "-o", "name",
                                           "--config", pipeline.config()},
                                          pipeline.dir());
    CHECK(named_code == 0);
    CHECK(named == "deployment.apps/web\n");
  }

  SECTION("nodeSelector disktype: ssd lands on the labelled node") {
    auto results = pipeline.Submit(R"(apiVersion: v1
kind: Pod
metadata: {name: ssd-pod}
spec:
  nodeSelector: {disktype: ssd}
  containers: [{name: app, image: nginx:1.14.2}]
)");
    REQUIRE(results[0].first.empty());
    std::string bytes;
    const api::Pod* pod = pipeline.WaitFor<api::Pod>(PodKey("ssd-pod"), Running, &bytes);
    INFO(pipeline.Logs());
    REQUIRE(pod != nullptr);
    CHECK(pod->spec()->node_name()->str() == "node-1");
  }

  SECTION("a pod asking more cpu than any node has stays Pending with FailedScheduling") {
    REQUIRE(pipeline.Submit(R"(apiVersion: v1
kind: Pod
metadata: {name: huge}
spec:
  containers:
  - {name: app, image: nginx:1.14.2, resources: {requests: {cpu: "64"}}}
)")[0].first.empty());
    // The scheduler may decide before it has seen every node register
    // ("0/1 nodes are available: ..."); a node added moves the pod back and
    // it is tried again, so the event naming all three nodes comes within
    // the 10 s backoff bound.
    const std::string expected = "Warning FailedScheduling: 0/3 nodes are available: 3 Insufficient cpu.";
    std::vector<std::string> events;
    bool found = false;
    for (int i = 0; i < 400 && !found; ++i) {
      events = pipeline.EventsFor("default", "huge");
      for (const std::string& e : events) found = found || e.rfind(expected, 0) == 0;
      if (!found) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    INFO(pipeline.Logs());
    CHECK(found);
    for (const std::string& e : events) {
      INFO(e);
      CHECK(e.rfind("Warning FailedScheduling: 0/", 0) == 0);
      CHECK(e.find("Insufficient cpu.") != std::string::npos);
    }
    auto pod = pipeline.Get(PodKey("huge"));
    REQUIRE(pod);
    const api::Pod* p = flatbuffers::GetRoot<api::Pod>(pod->value.data());
    CHECK((p->spec()->node_name() == nullptr || p->spec()->node_name()->str().empty()));
    CHECK(p->status()->phase() == api::PodPhase::Pending);
  }

  SECTION("an image the registry does not have gives ErrImagePull") {
    REQUIRE(pipeline.Submit("apiVersion: v1\nkind: Pod\nmetadata: {name: nope}\n"
                            "spec: {containers: [{name: app, image: nginx:does-not-exist}]}\n")[0]
                .first.empty());
    std::string bytes;
    const api::Pod* pod = pipeline.WaitFor<api::Pod>(
        PodKey("nope"),
        [](const api::Pod& p) {
          if (!p.status() || !p.status()->container_statuses()) return false;
          const api::ContainerStatus* c = p.status()->container_statuses()->Get(0);
          return c->state() && c->state()->waiting() && c->state()->waiting()->reason() &&
                 (c->state()->waiting()->reason()->str() == "ErrImagePull" ||
                  c->state()->waiting()->reason()->str() == "ImagePullBackOff");
        },
        &bytes);
    INFO(pipeline.Logs());
    REQUIRE(pod != nullptr);
    CHECK(pod->status()->phase() == api::PodPhase::Pending);
  }

  SECTION("a Service's Endpoints and EndpointSlice list its running pods' IPs; kube-proxy's rules spread over them") {
    auto results = pipeline.Submit(R"(apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  type: NodePort
  selector: {tier: web}
  ports: [{port: 80, targetPort: 80, nodePort: 30080}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {tier: web}}
spec: {containers: [{name: nginx, image: nginx:1.14.2, ports: [{containerPort: 80}]}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, labels: {tier: web}}
spec: {containers: [{name: nginx, image: nginx:1.14.2, ports: [{containerPort: 80}]}]}
)");
    REQUIRE(results.size() == 3);
    for (auto& r : results) CHECK(r.first.empty());
    std::string b1, b2, eb;
    const api::Pod* p1 = pipeline.WaitFor<api::Pod>(PodKey("web-1"), Running, &b1);
    const api::Pod* p2 = pipeline.WaitFor<api::Pod>(PodKey("web-2"), Running, &b2);
    INFO(pipeline.Logs());
    REQUIRE(p1 != nullptr);
    REQUIRE(p2 != nullptr);
    std::set<std::string> want = {p1->status()->pod_ip()->str(), p2->status()->pod_ip()->str()};
    const api::Endpoints* ep = pipeline.WaitFor<api::Endpoints>(
        model::ObjectKey(model::Kind("Endpoints"), "default", "web"),
        [&](const api::Endpoints& e) {
          if (!e.subsets() || e.subsets()->size() != 1 || !e.subsets()->Get(0)->addresses()) return false;
          std::set<std::string> have;
          for (const api::EndpointAddress* a : *e.subsets()->Get(0)->addresses()) have.insert(a->ip()->str());
          return have == want;
        },
        &eb);
    REQUIRE(ep != nullptr);
    CHECK(ep->subsets()->Get(0)->ports()->Get(0)->port() == 80);
    // The EndpointSlice: both pods ready, under a generated name.
    std::string slice_name;
    const auto slice_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (slice_name.empty() && std::chrono::steady_clock::now() < slice_deadline) {
      auto slices = pipeline.Api().Read(RangeRequest::Prefix(model::KindPrefix(model::Kind("EndpointSlice"), "default")));
      REQUIRE(slices.ok());
      for (const KeyValue& kv : slices->kvs) {
        auto slice = model::Unpack<api::EndpointSlice>(kv.value);
        std::set<std::string> ready;
        for (const auto& e : slice->endpoints) {
          if (e->conditions && e->conditions->ready.value_or(false)) ready.insert(e->addresses.at(0));
        }
        if (ready == want) slice_name = slice->metadata->name;
      }
      if (slice_name.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(slice_name.rfind("web-", 0) == 0);
    const std::string podflow = Pipeline::Program("podflow");
    auto [code, listed] = RunCommand({podflow, "get", "endpointslices", "--config", pipeline.config()}, pipeline.dir());
    CHECK(code == 0);
    CHECK(listed.find(slice_name) != std::string::npos);
    // The node's ruleset: the node port into the service's chain, which
    // spreads over both pods.
    auto [rules_code, rules] = RunCommand(
        {podflow, "proxy", "rules", "--node", p1->spec()->node_name()->str(), "--config", pipeline.config()},
        pipeline.dir());
    INFO(rules);
    CHECK(rules_code == 0);
    CHECK(rules.find("-A KUBE-NODEPORTS -m comment --comment default/web -m tcp -p tcp --dport 30080 -j KUBE-EXT-") !=
          std::string::npos);
    for (const std::string& ip : want) {
      CHECK(rules.find("-j DNAT --to-destination " + ip + ":80") != std::string::npos);
    }
    CHECK(rules.find("--probability 0.5000000000") != std::string::npos);
    auto [missing_code, missing] =
        RunCommand({podflow, "proxy", "rules", "--node", "no-such-node", "--config", pipeline.config()}, pipeline.dir());
    CHECK(missing_code == 1);
    CHECK(missing.find("Error from server (NotFound): nodes \"no-such-node\" not found") != std::string::npos);
  }

  SECTION("a duplicate name is AlreadyExists and a malformed manifest is Invalid; neither writes") {
    REQUIRE(pipeline.Submit(kNginx)[0].first.empty());
    auto before = pipeline.Api().Read(RangeRequest::Prefix("/registry/pods/"));
    REQUIRE(before.ok());
    auto dup = pipeline.Submit(kNginx);
    CHECK(dup[0].first == "AlreadyExists");
    CHECK(dup[0].second == "pods \"nginx-pod\" already exists");
    // Several documents are created together, yet each on its own: the one
    // that exists fails, the others before and after it are created.
    auto mixed = pipeline.Submit(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: first}\nspec: {containers: [{name: a, image: nginx}]}\n---\n" +
        std::string(kNginx) +
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: last}\nspec: {containers: [{name: a, image: nginx}]}\n");
    REQUIRE(mixed.size() == 3);
    CHECK(mixed[0].first.empty());
    CHECK(mixed[1].first == "AlreadyExists");
    CHECK(mixed[2].first.empty());
    CHECK(pipeline.Get(PodKey("first")).has_value());
    CHECK(pipeline.Get(PodKey("last")).has_value());
    // The same object twice in one manifest: the first is created.
    const std::string twice = "apiVersion: v1\nkind: Pod\nmetadata: {name: twice}\n"
                              "spec: {containers: [{name: a, image: nginx}]}\n";
    auto repeated = pipeline.Submit(twice + "---\n" + twice);
    REQUIRE(repeated.size() == 2);
    CHECK(repeated[0].first.empty());
    CHECK(repeated[1].first == "AlreadyExists");
    auto bad = pipeline.Submit("apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\n"
                               "spec: {containers: [{name: app}]}\n");
    CHECK(bad[0].first == "Invalid");
    CHECK(bad[0].second == "Pod \"bad\" is invalid: spec.containers[0].image: Required value");
    auto unknown = pipeline.Submit("apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\n"
                                   "spec: {containers: [{name: app, image: nginx, imagePullPolcy: Always}]}\n");
    // kube-apiserver's strict field validation: an unknown field is a BadRequest.
    CHECK(unknown[0].first == "BadRequest");
    CHECK(unknown[0].second == "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: "
                               "unknown field \"spec.containers[0].imagePullPolcy\"");
    CHECK_FALSE(pipeline.Get(PodKey("bad")).has_value());
    CHECK_FALSE(pipeline.Get(PodKey("typo")).has_value());
    auto denied = pipeline.Submit(kNginx, "wrong-token");
    CHECK(denied[0].first == "Unauthorized");
  }
}

TEST_CASE("Single-process pipeline: the seeds' story", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  SeedsStory(pipeline);
}

TEST_CASE("Multi-process pipeline: the seeds' story", "[e2e]") {
  Pipeline pipeline(true);
  pipeline.StartAll();
  SeedsStory(pipeline);
}

TEST_CASE("Cluster DNS answers dig for a Service, its SRV record, a headless Service's pods and a pod name",
          "[e2e]") {
  if (std::system("command -v dig >/dev/null 2>&1") != 0) {
    WARN("skipped: dig is not installed (Debian's bind9-dnsutils, which tools/setup installs)");
    return;
  }
  const std::string port = std::to_string(testing::FreePort());
  Pipeline pipeline(false, "", "proxy: {dnsListen: \"127.0.0.1:" + port + "\"}\n");
  pipeline.StartAll();
  auto results = pipeline.Submit(R"(apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{name: pg, port: 5432}]
---
apiVersion: v1
kind: Pod
metadata: {name: db-0, labels: {app: db}}
spec:
  hostname: db-0
  subdomain: db
  containers: [{name: pg, image: nginx:1.14.2, ports: [{containerPort: 5432}]}]
)");
  REQUIRE(results.size() == 3);
  for (const auto& r : results) CHECK(r.first.empty());
  std::string bytes;
  const api::Pod* pod = pipeline.WaitFor<api::Pod>(PodKey("db-0"), [](const api::Pod& p) {
    return Running(p) && model::ConditionIsTrue(p, "Ready");
  }, &bytes);
  INFO(pipeline.Logs());
  REQUIRE(pod != nullptr);
  const std::string pod_ip = pod->status()->pod_ip()->str();
  auto service = pipeline.Get(model::ObjectKey(model::Kind("Service"), "default", "web"));
  REQUIRE(service.has_value());
  const std::string cluster_ip = model::Unpack<api::Service>(service->value)->spec->cluster_ip;
  const std::string dig = "dig @127.0.0.1 -p " + port + " +time=2 +tries=1 +short ";
  auto ask = [&](const std::string& question) {
    return RunCommand({"/bin/sh", "-c", dig + question}, pipeline.dir()).second;
  };
  // The records follow the log: the headless service's pod once it is ready.
  std::string headless;
  for (int i = 0; i < 50 && headless != pod_ip + "\n"; ++i) {
    headless = ask("db.default.svc.cluster.local");
    if (headless != pod_ip + "\n") std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(headless == pod_ip + "\n");
  CHECK(ask("web.default.svc.cluster.local") == cluster_ip + "\n");
  CHECK(ask("_http._tcp.web.default.svc.cluster.local SRV") == "0 100 80 web.default.svc.cluster.local.\n");
  CHECK(ask("db-0.db.default.svc.cluster.local") == pod_ip + "\n");
  std::string dashed = pod_ip;
  std::replace(dashed.begin(), dashed.end(), '.', '-');
  CHECK(ask(dashed + ".default.pod.cluster.local") == pod_ip + "\n");
  CHECK(RunCommand({"/bin/sh", "-c", "dig @127.0.0.1 -p " + port + " +time=2 +tries=1 nope.default.svc.cluster.local"},
                   pipeline.dir())
            .second.find("status: NXDOMAIN") != std::string::npos);
  // A deleted Service leaves DNS.
  auto [code, out] = RunCommand({Pipeline::Program("podflow"), "delete", "service", "web", "--config", pipeline.config()},
                                pipeline.dir());
  CHECK(code == 0);
  std::string gone = "x";
  for (int i = 0; i < 50 && !gone.empty(); ++i) {
    gone = ask("web.default.svc.cluster.local");
    if (!gone.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(gone.empty());
}

TEST_CASE("A Service deleted while the proxy stage is down loses its Endpoints and EndpointSlice when it is back",
          "[e2e]") {
  Pipeline pipeline(true);
  pipeline.StartAll();
  auto results = pipeline.Submit(R"(apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
)");
  REQUIRE(results.size() == 1);
  REQUIRE(results[0].first.empty());
  const std::string slices_prefix = model::KindPrefix(model::Kind("EndpointSlice"), "default");
  const std::string endpoints_key = model::ObjectKey(model::Kind("Endpoints"), "default", "web");
  auto count = [&](const std::string& prefix) {
    auto read = pipeline.Api().Read(RangeRequest::Prefix(prefix));
    REQUIRE(read.ok());
    return read->kvs.size();
  };
  auto wait_until = [](const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
  };
  INFO(pipeline.Logs());
  REQUIRE(wait_until([&] { return count(slices_prefix) == 1 && pipeline.Get(endpoints_key).has_value(); }));
  pipeline.StopStage("proxy");
  auto [code, out] = RunCommand({Pipeline::Program("podflow"), "delete", "service", "web", "--config", pipeline.config()},
                                pipeline.dir());
  REQUIRE(code == 0);
  CHECK(count(slices_prefix) == 1);  // nobody else deletes them
  pipeline.StartStage("proxy");
  CHECK(wait_until([&] { return count(slices_prefix) == 0 && !pipeline.Get(endpoints_key).has_value(); }));
}

TEST_CASE("Containers that end: Completed, Error and CrashLoopBackOff, as kubectl shows them", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  auto results = pipeline.Submit(R"(apiVersion: v1
kind: Pod
metadata: {name: once}
spec:
  restartPolicy: Never
  containers: [{name: hello, image: busybox:1.28, command: ["sh", "-c", "echo hello; sleep 1"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: fails}
spec:
  restartPolicy: Never
  containers: [{name: app, image: busybox:1.28, command: ["sh", "-c", "exit 3"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  containers: [{name: app, image: busybox:1.28, command: ["false"]}]
)");
  REQUIRE(results.size() == 3);
  for (const auto& r : results) CHECK(r.first.empty());
  auto phase_is = [](api::PodPhase phase) {
    return [phase](const api::Pod& p) { return p.status() != nullptr && p.status()->phase() == phase; };
  };
  INFO(pipeline.Logs());
  CHECK(pipeline.PodReaches("once", phase_is(api::PodPhase::Succeeded)));
  CHECK(pipeline.PodReaches("fails", phase_is(api::PodPhase::Failed)));
  CHECK(pipeline.PodReaches("crash", [](const api::Pod& p) {
    const auto* statuses = p.status() ? p.status()->container_statuses() : nullptr;
    if (statuses == nullptr || statuses->size() != 1) return false;
    const api::ContainerStatus* c = statuses->Get(0);
    return c->restart_count() == 1 && c->state() && c->state()->waiting() &&
           c->state()->waiting()->reason()->str() == "CrashLoopBackOff";
  }));
  const std::string podflow = Pipeline::Program("podflow");
  auto [code, listed] = RunCommand({podflow, "get", "pods", "--config", pipeline.config()}, pipeline.dir());
  INFO(listed);
  CHECK(code == 0);
  auto row = [&listed](const std::string& name) {
    const size_t at = listed.find("\n" + name + " ");
    return at == std::string::npos ? std::string() : listed.substr(at + 1, listed.find('\n', at + 1) - at - 1);
  };
  CHECK_THAT(row("once"), Catch::Matches("once +0/1 +Completed +0 +[0-9]+s"));
  CHECK_THAT(row("fails"), Catch::Matches("fails +0/1 +Error +0 +[0-9]+s"));
  // Restarted at once, then after 10s, 20s ...: how many times by now
  // depends on this machine's pace.
  CHECK_THAT(row("crash"),
             Catch::Matches("crash +0/1 +CrashLoopBackOff +[1-9][0-9]* \\([0-9]+[sm] ago\\) +[0-9]+[sm]"));
  std::vector<std::string> events = pipeline.EventsFor("default", "crash");
  CHECK(std::count_if(events.begin(), events.end(), [](const std::string& e) {
          return e.rfind("Warning BackOff: Back-off restarting failed container app in pod crash_default(", 0) == 0;
        }) >= 1);
  CHECK(std::count_if(events.begin(), events.end(),
                      [](const std::string& e) { return e.rfind("Normal Started:", 0) == 0; }) >= 2);
}

// The container status of `name` among the pod's containers or init containers.
const api::ContainerStatus* ContainerStatusOf(const api::Pod& p, const std::string& name) {
  if (p.status() == nullptr) return nullptr;
  for (const auto* list : {p.status()->container_statuses(), p.status()->init_container_statuses()}) {
    if (list == nullptr) continue;
    for (const api::ContainerStatus* c : *list) {
      if (c->name() && c->name()->str() == name) return c;
    }
  }
  return nullptr;
}

bool HasEvent(const std::vector<std::string>& events, const std::string& prefix) {
  return std::ranges::any_of(events, [&](const std::string& e) { return e.rfind(prefix, 0) == 0; });
}

TEST_CASE("Simulated containers: OOMKilled, a liveness restart, readiness in and out of the endpoints, an init retry, "
          "a sidecar, a preStop hook; pulled images in Node.status.images", "[e2e]") {
  Pipeline pipeline(false, "", "", "  nodeStatusUpdateMillis: 300\n");
  pipeline.StartAll();
  auto results = pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata: {name: memory-hog, annotations: {podflow.io/behavior: "{memory: 200Mi, memoryAfter: 300ms}"}}
spec:
  restartPolicy: Never
  containers: [{name: app, image: busybox:1.28, command: ["sleep", "3600"], resources: {limits: {memory: 64Mi}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: liveness-exec}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: liveness
    image: busybox:1.28
    args: [/bin/sh, -c, "touch /tmp/healthy; sleep 2; rm -f /tmp/healthy; sleep 600"]
    livenessProbe: {exec: {command: [cat, /tmp/healthy]}, periodSeconds: 1, failureThreshold: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: flappy, labels: {app: flappy}, annotations: {podflow.io/behavior: "{unreadyAfter: 2s, unreadyFor: 2s}"}}
spec:
  containers:
  - name: web
    image: nginx:1.14.2
    ports: [{containerPort: 80}]
    readinessProbe: {tcpSocket: {port: 80}, periodSeconds: 1, failureThreshold: 1}
---
apiVersion: v1
kind: Service
metadata: {name: flappy}
spec: {selector: {app: flappy}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: init-retry}
spec:
  initContainers: [{name: setup, image: busybox:1.28, command: ["sh", "-c", "exit 1"]}]
  containers: [{name: app, image: busybox:1.28, command: ["sleep", "3600"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: with-sidecar}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  initContainers:
  - {name: shipper, image: busybox:1.28, restartPolicy: Always, command: ["sh", "-c", "while true; do echo shipped; sleep 1; done"]}
  containers: [{name: main, image: busybox:1.28, command: ["sh", "-c", "echo working; sleep 12"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: graceful}
spec:
  terminationGracePeriodSeconds: 10
  containers:
  - name: web
    image: nginx:1.14.2
    lifecycle: {preStop: {exec: {command: ["sh", "-c", "sleep 2"]}}}
)yaml");
  REQUIRE(results.size() == 7);
  for (const auto& r : results) CHECK(r.first.empty());
  INFO(pipeline.Logs());

  // Readiness, from the start: not ready until its first probe passes (it
  // may be ready by the first look), in the Endpoints' addresses, out
  // (notReadyAddresses) while the probe fails (2 s to 4 s), and back in.
  std::vector<std::string> seen;  // "ready" / "not ready", each change once
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline && seen.size() < 3) {
    std::optional<KeyValue> kv = pipeline.Get(model::ObjectKey(model::Kind("Endpoints"), "default", "flappy"));
    if (kv) {
      auto endpoints = model::Unpack<api::Endpoints>(kv->value);
      std::string now;
      if (endpoints->subsets.size() == 1) {
        const auto& subset = *endpoints->subsets[0];
        if (subset.addresses.size() == 1 && subset.not_ready_addresses.empty()) now = "ready";
        if (subset.addresses.empty() && subset.not_ready_addresses.size() == 1) now = "not ready";
      }
      if (!now.empty() && (seen.empty() || seen.back() != now) && !(seen.empty() && now == "not ready")) {
        seen.push_back(now);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(seen == std::vector<std::string>{"ready", "not ready", "ready"});

  // A sidecar runs beside the main container, both ready.
  CHECK(pipeline.PodReaches("with-sidecar", [](const api::Pod& p) {
    const api::ContainerStatus* shipper = ContainerStatusOf(p, "shipper");
    const api::ContainerStatus* main = ContainerStatusOf(p, "main");
    return shipper != nullptr && main != nullptr && shipper->ready() && main->ready();
  }));

  // Over its memory limit: OOMKilled, exit 137; never restarted, so Failed.
  CHECK(pipeline.PodReaches("memory-hog", [](const api::Pod& p) {
    const api::ContainerStatus* c = ContainerStatusOf(p, "app");
    return p.status()->phase() == api::PodPhase::Failed && c != nullptr && c->state() && c->state()->terminated() &&
           c->state()->terminated()->reason()->str() == "OOMKilled" && c->state()->terminated()->exit_code() == 137;
  }));

  // The docs' exec liveness example: /tmp/healthy goes after 2 s, the probe
  // fails, kubelet kills and restarts the container.
  CHECK(pipeline.PodReaches("liveness-exec", [](const api::Pod& p) {
    const api::ContainerStatus* c = ContainerStatusOf(p, "liveness");
    return c != nullptr && c->restart_count() >= 1;
  }));
  std::vector<std::string> events = pipeline.EventsFor("default", "liveness-exec");
  CHECK(HasEvent(events, "Warning Unhealthy: Liveness probe failed:"));
  CHECK(HasEvent(events, "Normal Killing: Container liveness failed liveness probe, will be restarted"));

  // A failing init container is retried (restartPolicy Always), the app
  // container never starts.
  CHECK(pipeline.PodReaches("init-retry", [](const api::Pod& p) {
    const api::ContainerStatus* c = ContainerStatusOf(p, "setup");
    return c != nullptr && c->restart_count() >= 1;
  }));

  // Once the main container completed, the sidecar is stopped and the pod Succeeded.
  CHECK(pipeline.PodReaches("with-sidecar", [](const api::Pod& p) {
    const api::ContainerStatus* shipper = ContainerStatusOf(p, "shipper");
    return p.status()->phase() == api::PodPhase::Succeeded && shipper != nullptr && shipper->state() &&
           shipper->state()->terminated() != nullptr;
  }));

  const std::string podflow = Pipeline::Program("podflow");
  auto [code, listed] = RunCommand({podflow, "get", "pods", "--config", pipeline.config()}, pipeline.dir());
  INFO(listed);
  CHECK(code == 0);
  CHECK_THAT(listed, Catch::Matches("(.|\n)*\nmemory-hog +0/1 +OOMKilled +0 +[0-9]+s(.|\n)*"));
  CHECK_THAT(listed, Catch::Matches("(.|\n)*\ninit-retry +0/1 +Init:(Error|CrashLoopBackOff) +[1-9][0-9]* (.|\n)*"));
  CHECK_THAT(listed, Catch::Matches("(.|\n)*\nwith-sidecar +0/2 +Completed +0 +[0-9]+s(.|\n)*"));

  // A graceful delete: Killing, the preStop hook's 2 s, then SIGTERM; the
  // pod stays (Terminating) meanwhile and is gone after.
  REQUIRE(pipeline.PodReaches("graceful", Pipeline::Running));
  auto [deleted, said] = pipeline.Podflow({"delete", "pod", "graceful", "--wait=false"});
  CHECK(deleted == 0);
  CHECK(said == "pod \"graceful\" deleted\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  CHECK(pipeline.Get(PodKey("graceful")).has_value());
  CHECK(pipeline.WaitForGone(PodKey("graceful"), std::chrono::seconds(10)));
  events = pipeline.EventsFor("default", "graceful");
  CHECK(std::count(events.begin(), events.end(), "Normal Killing: Stopping container web") == 1);

  // The nodes that pulled busybox list it in their status (node-1..3 had
  // nothing cached), as ImageLocality reads it.
  std::string bytes;
  const api::Pod* hog = pipeline.WaitFor<api::Pod>(PodKey("memory-hog"), Pipeline::Bound, &bytes);
  REQUIRE(hog != nullptr);
  const std::string node = hog->spec()->node_name()->str();
  std::string node_bytes;
  CHECK(pipeline.WaitFor<api::Node>(model::ObjectKey(model::Kind("Node"), "", node), [](const api::Node& n) {
    if (n.status() == nullptr || n.status()->images() == nullptr) return false;
    return std::ranges::any_of(*n.status()->images(), [](const api::ContainerImage* i) {
      return i->names() && i->names()->size() == 2 && i->names()->Get(1)->str() == "docker.io/library/busybox:1.28" &&
             i->size_bytes() == 2'200'000;
    });
  }, &node_bytes) != nullptr);
}

TEST_CASE("A Secret or ConfigMap that does not exist yet: CreateContainerConfigError and FailedMount until it does", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  auto results = pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata: {name: secret-env}
spec:
  containers:
  - name: app
    image: busybox:1.28
    command: ["sh", "-c", "echo $SECRET_USERNAME; sleep 3600"]
    env:
    - name: SECRET_USERNAME
      valueFrom:
        secretKeyRef: {name: mysecret, key: username}
---
apiVersion: v1
kind: Pod
metadata: {name: config-vol}
spec:
  containers:
  - name: app
    image: busybox:1.28
    command: ["sleep", "3600"]
    volumeMounts: [{name: config-volume, mountPath: /etc/config}]
  volumes:
  - name: config-volume
    configMap: {name: special-config}
)yaml");
  REQUIRE(results.size() == 2);
  for (const auto& r : results) CHECK(r.first.empty());
  auto waiting_is = [](const std::string& reason) {
    return [reason](const api::Pod& p) {
      const auto* statuses = p.status() ? p.status()->container_statuses() : nullptr;
      if (statuses == nullptr || statuses->size() != 1) return false;
      const api::ContainerStatus* c = statuses->Get(0);
      return c->state() && c->state()->waiting() && c->state()->waiting()->reason() &&
             c->state()->waiting()->reason()->str() == reason;
    };
  };
  INFO(pipeline.Logs());
  REQUIRE(pipeline.PodReaches("secret-env", waiting_is("CreateContainerConfigError")));
  const auto mount_failed = [&pipeline] {
    for (const std::string& e : pipeline.EventsFor("default", "config-vol")) {
      if (e == "Warning FailedMount: MountVolume.SetUp failed for volume \"config-volume\" : configmap "
               "\"special-config\" not found")
        return true;
    }
    return false;
  };
  for (int i = 0; i < 100 && !mount_failed(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(mount_failed());
  const std::string podflow = Pipeline::Program("podflow");
  auto [code, listed] = RunCommand({podflow, "get", "pods", "--config", pipeline.config()}, pipeline.dir());
  INFO(listed);
  CHECK(code == 0);
  CHECK_THAT(listed, Catch::Matches("(.|\n)*\nsecret-env +0/1 +CreateContainerConfigError +0 +[0-9]+s(.|\n)*"));
  CHECK_THAT(listed, Catch::Matches("(.|\n)*\nconfig-vol +0/1 +ContainerCreating +0 +[0-9]+s(.|\n)*"));
  std::vector<std::string> events = pipeline.EventsFor("default", "secret-env");
  CHECK(std::count(events.begin(), events.end(), "Warning Failed: Error: secret \"mysecret\" not found") >= 1);

  // Once they exist, both pods start (the next sync, the next mount try).
  results = pipeline.Submit(R"yaml(apiVersion: v1
kind: Secret
metadata: {name: mysecret}
type: Opaque
stringData: {username: my-app}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: special-config}
data: {SPECIAL_LEVEL: very}
)yaml");
  REQUIRE(results.size() == 2);
  for (const auto& r : results) CHECK(r.first.empty());
  CHECK(pipeline.PodReaches("secret-env", Pipeline::Running));
  CHECK(pipeline.PodReaches("config-vol", Pipeline::Running));
}

TEST_CASE("podflow logs: the lines so far, --previous, --tail, --timestamps and kubectl's errors", "[e2e]") {
  Pipeline pipeline(true);  // the kubelet channel between processes, authenticated
  pipeline.StartAll();
  auto results = pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata: {name: logger}
spec:
  containers:
  - {name: logger, image: busybox:1.28, command: ["sh", "-c", "echo one; echo two; sleep 2; echo three; sleep 3600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  containers: [{name: app, image: busybox:1.28, command: ["sh", "-c", "echo boom; exit 1"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: multi}
spec:
  initContainers: [{name: setup, image: busybox:1.28, command: ["echo", "set up"]}]
  containers:
  - {name: a, image: busybox:1.28, command: ["sh", "-c", "echo from-a; sleep 3600"]}
  - {name: b, image: busybox:1.28, command: ["sleep", "3600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: stuck}
spec:
  containers: [{name: stuck, image: "example/not-there:1"}]
)yaml");
  REQUIRE(results.size() == 4);
  for (const auto& r : results) CHECK(r.first.empty());
  INFO(pipeline.Logs());
  REQUIRE(pipeline.PodReaches("logger", Pipeline::Running));
  const std::string podflow = Pipeline::Program("podflow");
  auto logs = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {podflow, "logs"});
    args.insert(args.end(), {"--config", pipeline.config()});
    return RunCommand(args, pipeline.dir());
  };
  // -f follows a run until it ends: the lines printed meanwhile, then it returns.
  REQUIRE(pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata: {name: follow}
spec:
  restartPolicy: Never
  containers: [{name: follow, image: busybox:1.28, command: ["sh", "-c", "echo a; sleep 3; echo b; sleep 1"]}]
)yaml")[0].first.empty());
  REQUIRE(pipeline.PodReaches("follow", Pipeline::Running));
  CHECK(logs({"follow", "-f"}) == std::pair<int, std::string>{0, "a\nb\n"});
  // A run that is restarted at once (the first restart has no back-off):
  // its last lines are then the previous log, and -f still prints them.
  REQUIRE(pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata: {name: again}
spec:
  containers: [{name: again, image: busybox:1.28, command: ["sh", "-c", "echo start; sleep 3; echo done"]}]
)yaml")[0].first.empty());
  REQUIRE(pipeline.PodReaches("again", Pipeline::Running));
  CHECK(logs({"again", "-f"}) == std::pair<int, std::string>{0, "start\ndone\n"});
  REQUIRE(pipeline.PodReaches("multi", Pipeline::Running));
  REQUIRE(pipeline.PodReaches("crash", [](const api::Pod& p) {
    const auto* statuses = p.status() ? p.status()->container_statuses() : nullptr;
    return statuses != nullptr && statuses->size() == 1 && statuses->Get(0)->restart_count() >= 1;
  }));
  // "three" comes 2 s after the start.
  for (int i = 0; i < 100 && logs({"logger"}).second != "one\ntwo\nthree\n"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(logs({"logger"}) == std::pair<int, std::string>{0, "one\ntwo\nthree\n"});
  CHECK(logs({"pod/logger", "--tail", "1"}) == std::pair<int, std::string>{0, "three\n"});
  CHECK(logs({"logger", "--limit-bytes", "6"}) == std::pair<int, std::string>{0, "one\ntw"});
  auto [code, stamped] = logs({"logger", "--timestamps"});
  CHECK(code == 0);
  CHECK_THAT(stamped, Catch::Matches("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{9}Z one\n"
                                     "[0-9-]{10}T[0-9:]{8}\\.[0-9]{9}Z two\n[0-9-]{10}T[0-9:]{8}\\.[0-9]{9}Z three\n"));
  CHECK(logs({"logger", "--previous"}) ==
        std::pair<int, std::string>{1, "Error from server (BadRequest): previous terminated container \"logger\" "
                                        "in pod \"logger\" not found\n"});
  CHECK(logs({"crash", "--previous"}) == std::pair<int, std::string>{0, "boom\n"});
  CHECK(logs({"multi"}) ==
        std::pair<int, std::string>{0, "Defaulted container \"a\" out of: a, b, setup (init)\nfrom-a\n"});
  CHECK(logs({"multi", "-c", "setup"}) == std::pair<int, std::string>{0, "set up\n"});
  CHECK(logs({"multi", "-c", "nope"}) ==
        std::pair<int, std::string>{1, "error: container nope is not valid for pod multi\n"});
  CHECK(logs({"nothere"}) ==
        std::pair<int, std::string>{1, "Error from server (NotFound): pods \"nothere\" not found\n"});
  CHECK(logs({"logger", "--tail", "-2"}) ==
        std::pair<int, std::string>{1, "error: --tail must be greater than or equal to -1\n"});
  // A container whose image cannot be pulled has no log yet.
  REQUIRE(pipeline.PodReaches("stuck", [](const api::Pod& p) {
    const auto* statuses = p.status() ? p.status()->container_statuses() : nullptr;
    return statuses != nullptr && statuses->size() == 1 && statuses->Get(0)->state() &&
           statuses->Get(0)->state()->waiting() && statuses->Get(0)->state()->waiting()->reason() &&
           statuses->Get(0)->state()->waiting()->reason()->str() != "ContainerCreating";
  }));
  CHECK_THAT(logs({"stuck"}).second,
             Catch::Matches("Error from server \\(BadRequest\\): container \"stuck\" in pod \"stuck\" is waiting to "
                            "start: (image can't be pulled|trying and failing to pull image)\n"));

  // exec: kubectl's own checks, the apiserver's, and a simulated node's
  // kubelet, which has no process to run a command beside.
  const auto exec = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "exec");
    return pipeline.Podflow(args);
  };
  CHECK(exec({"logger"}) ==
        std::pair<int, std::string>{1, "error: you must specify at least one command for the container\n"});
  // The command before "--": the form kubectl 1.31 dropped.
  const std::pair<int, std::string> old_form{
      1, "error: exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\n"
         "See 'podflow exec -h' for help and examples\n"};
  CHECK(exec({"logger", "ls"}) == old_form);
  CHECK(exec({"-it", "logger", "/bin/bash"}) == old_form);
  CHECK(exec({"nothere", "--", "ls"}) ==
        std::pair<int, std::string>{1, "Error from server (NotFound): pods \"nothere\" not found\n"});
  CHECK(exec({"multi", "-c", "nope", "--", "ls"}) ==
        std::pair<int, std::string>{1, "Error from server (BadRequest): container nope is not valid for pod multi\n"});
  const auto [simulated_code, simulated] = exec({"logger", "--", "ls"});
  CHECK(simulated_code == 1);
  CHECK_THAT(simulated, Catch::Matches("error: unable to upgrade connection: pod \"logger\" runs on node \"[^\"]+\", a "
                                       "simulated node: its containers are not processes to exec in \\(runtime.type: "
                                       "process runs them\\)\n"));
}

TEST_CASE("A Node created with the publisher is adopted; a pod naming it skips scheduling", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  std::ifstream in(std::string(PODFLOW_SOURCE_DIR) + "/config/manifests/node-kwok.yaml");
  std::string node_yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(node_yaml.empty());
  REQUIRE(pipeline.Submit(node_yaml)[0].first.empty());
  std::string node_bytes;
  const api::Node* node = pipeline.WaitFor<api::Node>(
      model::ObjectKey(model::Kind("Node"), "", "kwok-node-0"),
      [](const api::Node& n) { return n.spec() && n.spec()->pod_cidr() && n.spec()->pod_cidr()->size() > 0; },
      &node_bytes);
  INFO(pipeline.Logs());
  REQUIRE(node != nullptr);
  const std::string cidr = node->spec()->pod_cidr()->str();  // the block after the three configured nodes'
  CHECK(cidr == "10.244.3.0/24");

  REQUIRE(pipeline.Submit(R"(apiVersion: v1
kind: Pod
metadata: {name: pinned}
spec:
  nodeName: kwok-node-0
  containers: [{name: app, image: busybox:1.28}]
)")[0].first.empty());
  std::string bytes;
  const api::Pod* pod = pipeline.WaitFor<api::Pod>(PodKey("pinned"), Running, &bytes);
  REQUIRE(pod != nullptr);
  CHECK(pod->status()->pod_ip()->str().rfind("10.244.3.", 0) == 0);
  CHECK(pod->status()->host_ip()->str() == "10.0.0.10");
  // kubelet reports PodScheduled for a pod it runs that no scheduler placed.
  CHECK(model::ConditionIsTrue(*pod, "PodScheduled"));
  // The scheduler never saw it: no Scheduled event, the kubelet's only.
  std::vector<std::string> events = pipeline.EventsFor("default", "pinned");
  REQUIRE_FALSE(events.empty());
  for (const std::string& e : events) CHECK(e.find("Scheduled") == std::string::npos);
  CHECK(events[0].rfind("Normal Pulling", 0) == 0);

  // Every node's agent holds its Lease, owned by the Node, and renews it
  // every quarter of nodeLeaseDurationSeconds (2 s here).
  const std::string adopted_uid = node->metadata()->uid()->str();
  std::string lease_bytes;
  const api::Lease* lease = pipeline.WaitFor<api::Lease>(
      model::ObjectKey(model::Kind("Lease"), "kube-node-lease", "kwok-node-0"),
      [](const api::Lease& l) { return l.spec() && l.spec()->renew_time(); }, &lease_bytes);
  REQUIRE(lease != nullptr);
  CHECK(lease->spec()->holder_identity()->str() == "kwok-node-0");
  CHECK(lease->spec()->lease_duration_seconds() == 2);
  REQUIRE(lease->metadata()->owner_references()->size() == 1);
  CHECK(lease->metadata()->owner_references()->Get(0)->uid()->str() == adopted_uid);
  const std::string node1_lease = model::ObjectKey(model::Kind("Lease"), "kube-node-lease", "node-1");
  std::optional<KeyValue> first = pipeline.Get(node1_lease);
  REQUIRE(first.has_value());
  const std::string first_renewal =
      flatbuffers::GetRoot<api::Lease>(first->value.data())->spec()->renew_time()->str();
  CHECK(pipeline.WaitFor<api::Lease>(
            node1_lease, [&](const api::Lease& l) { return l.spec()->renew_time()->str() > first_renewal; },
            &lease_bytes, std::chrono::seconds(5)) != nullptr);
}

TEST_CASE("A pod published while the runtime is down runs once it is back", "[e2e]") {
  Pipeline pipeline(true);
  pipeline.StartAll();
  pipeline.StopStage("runtime");
  REQUIRE(pipeline.Submit(kNginx)[0].first.empty());
  std::string bytes;
  // Scheduled and bound, but nobody runs it.
  const api::Pod* bound = pipeline.WaitFor<api::Pod>(
      PodKey("nginx-pod"), [](const api::Pod& p) { return p.spec()->node_name() != nullptr; }, &bytes);
  INFO(pipeline.Logs());
  REQUIRE(bound != nullptr);
  CHECK(bound->status()->phase() == api::PodPhase::Pending);
  pipeline.StartStage("runtime");
  const api::Pod* pod = pipeline.WaitFor<api::Pod>(PodKey("nginx-pod"), Running, &bytes);
  REQUIRE(pod != nullptr);
}

TEST_CASE("Restarting on the same data dir resumes; replay shows the timeline", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  REQUIRE(pipeline.Submit(kNginx)[0].first.empty());
  std::string bytes;
  REQUIRE(pipeline.WaitFor<api::Pod>(PodKey("nginx-pod"), Running, &bytes) != nullptr);
  pipeline.StopAll();

  pipeline.StartAll();
  // The pod is still there and still Running, and new pods still run.
  auto kept = pipeline.Get(PodKey("nginx-pod"));
  REQUIRE(kept);
  CHECK(Running(*flatbuffers::GetRoot<api::Pod>(kept->value.data())));
  REQUIRE(pipeline.Submit("apiVersion: v1\nkind: Pod\nmetadata: {name: after-restart}\n"
                          "spec: {containers: [{name: app, image: busybox:1.28}]}\n")[0].first.empty());
  INFO(pipeline.Logs());
  REQUIRE(pipeline.WaitFor<api::Pod>(PodKey("after-restart"), Running, &bytes) != nullptr);
  pipeline.StopAll();

  auto [code, out] = RunCommand({Pipeline::Program("podflow-replay"), "--data-dir", pipeline.data_dir(), "--pod",
                                 "default/nginx-pod"},
                                pipeline.dir());
  INFO(out);
  CHECK(code == 0);
  CHECK(out.find("admission") != std::string::npos);
  CHECK(out.find("binding") != std::string::npos);
  CHECK(out.find("status") != std::string::npos);
  CHECK(out.find("spec.nodeName") != std::string::npos);
}


TEST_CASE("Scheduling decisions are explained and re-run to the same nodes", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  // Three pods that fit (decided in one burst, each assumed before the next)
  // and one that fits nowhere.
  std::string manifest;
  for (const char* name : {"web-1", "web-2", "web-3"}) {
    manifest += std::string("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ") + name +
                "}\nspec: {containers: [{name: app, image: busybox:1.28, "
                "resources: {requests: {cpu: 500m, memory: 1Gi}}}]}\n";
  }
  manifest += "---\napiVersion: v1\nkind: Pod\nmetadata: {name: huge}\n"
              "spec: {containers: [{name: app, image: busybox:1.28, resources: {requests: {cpu: \"64\"}}}]}\n";
  for (const auto& [reason, message] : pipeline.Submit(manifest)) REQUIRE(reason.empty());
  std::map<std::string, std::string> bound;
  for (const char* name : {"web-1", "web-2", "web-3"}) {
    std::string bytes;
    const api::Pod* pod = pipeline.WaitFor<api::Pod>(
        PodKey(name), [](const api::Pod& p) { return p.spec()->node_name() != nullptr; }, &bytes);
    INFO(pipeline.Logs());
    REQUIRE(pod != nullptr);
    bound[name] = pod->spec()->node_name()->str();
  }
  std::string huge_bytes;
  REQUIRE(pipeline.WaitFor<api::Pod>(
              PodKey("huge"),
              [](const api::Pod& p) { return p.status() && p.status()->conditions() && p.status()->conditions()->size() > 0; },
              &huge_bytes) != nullptr);

  // describe pod: the Scheduling section names the node the pod is bound to.
  auto [described_code, described] =
      RunCommand({Pipeline::Program("podflow"), "describe", "pod", "web-1", "--config", pipeline.config()},
                 pipeline.dir());
  INFO(described);
  CHECK(described_code == 0);
  CHECK(described.find("Scheduling:") != std::string::npos);
  CHECK(described.find("Node:     " + bound["web-1"] + " (") != std::string::npos);
  pipeline.StopAll();

  for (const auto& [name, node] : bound) {
    auto [code, out] = RunCommand({Pipeline::Program("podflow-replay"), "--data-dir", pipeline.data_dir(), "--pod",
                                   "default/" + name, "--why", "-o", "json"},
                                  pipeline.dir());
    INFO(out);
    REQUIRE(code == 0);
    YAML::Node why = YAML::Load(out);
    CHECK(why["pod"].as<std::string>() == "default/" + name);
    CHECK(why["selected"].as<std::string>() == node);
    REQUIRE(why["nodes"].size() >= 1);
    CHECK(why["nodes"][0]["name"].as<std::string>() == node);
    CHECK(why["nodes"][0]["passed"].as<bool>());
  }
  auto [huge_code, huge_out] = RunCommand({Pipeline::Program("podflow-replay"), "--data-dir", pipeline.data_dir(),
                                           "--pod", "default/huge", "--why", "-o", "json"},
                                          pipeline.dir());
  INFO(huge_out);
  REQUIRE(huge_code == 0);
  YAML::Node huge = YAML::Load(huge_out);
  CHECK(huge["selected"].IsNull());
  CHECK(huge["filteredOut"][0]["reason"].as<std::string>() == "Insufficient cpu");
  CHECK(huge["filteredOut"][0]["count"].as<int>() == 3);

  auto [code, out] =
      RunCommand({Pipeline::Program("podflow-replay"), "--data-dir", pipeline.data_dir(), "--verify-scheduling"},
                 pipeline.dir());
  INFO(out);
  CHECK(code == 0);
  // Every decision: the three bound pods' and at least one for "huge".
  const size_t summary = out.find(" decisions verified, 0 differ");
  REQUIRE(summary != std::string::npos);
  const size_t line = out.rfind('\n', summary);
  CHECK(std::stoi(out.substr(line == std::string::npos ? 0 : line + 1)) >= 4);
  CHECK(out.find("skipped") == std::string::npos);
}

TEST_CASE("podflow apply, a stale update and a graceful delete, as kubectl and kube-apiserver do them", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  const std::string manifest = pipeline.dir() + "/web.yaml";
  auto write = [&](const std::string& text) { std::ofstream(manifest) << text; };
  auto run = [&](std::vector<std::string> args) { return pipeline.Podflow(std::move(args)); };
  write(std::string(kNginx) + "  - name: side\n    image: nginx:1.14.2\n");
  {
    auto [code, out] = run({"apply", "-f", manifest});
    INFO(out << pipeline.Logs());
    CHECK(code == 0);
    CHECK(out == "pod/nginx-pod created\n");
  }
  REQUIRE(pipeline.PodReaches("nginx-pod", Running));
  {
    auto [code, out] = run({"apply", "-f", manifest});
    INFO(out);
    CHECK(code == 0);
    CHECK(out == "pod/nginx-pod unchanged\n");
  }
  {
    // The publisher applies as podflow apply does.
    auto [code, out] = RunCommand({Pipeline::Program("podflow-publish"), "--apply", "-f", manifest, "--config",
                                   pipeline.config()},
                                  pipeline.dir());
    INFO(out);
    CHECK(code == 0);
    CHECK(out == "pod/nginx-pod unchanged\n");
  }
  // A label set by someone else survives; the image changes; the label the
  // manifest dropped goes.
  {
    auto [code, out] = run({"delete", "pod", "nginx-pod", "--dry-run", "server"});
    INFO(out);
    CHECK(out == "pod \"nginx-pod\" deleted (server dry run)\n");
  }
  REQUIRE(pipeline.Get(PodKey("nginx-pod")).has_value());
  write(std::string(kNginx).replace(std::string(kNginx).find("nginx:1.14.2"), 12, "nginx:1.16.1")
            .replace(std::string(kNginx).find("labels: {app: web}"), 18, "labels: {}") +
        "  - name: side\n    image: nginx:1.14.2\n");
  {
    auto [code, out] = run({"apply", "-f", manifest});
    INFO(out);
    CHECK(code == 0);
    CHECK(out == "pod/nginx-pod configured\n");
  }
  std::optional<KeyValue> stored = pipeline.Get(PodKey("nginx-pod"));
  REQUIRE(stored.has_value());
  auto pod = model::Unpack<api::Pod>(stored->value);
  CHECK(pod->spec->containers[0]->image == "nginx:1.16.1");
  CHECK(pod->metadata->labels.empty());
  CHECK_FALSE(pod->spec->node_name.empty());
  // A field the manifest does not allow to change: kube-apiserver's refusal.
  write(std::string(kNginx).replace(std::string(kNginx).find("containerPort: 80"), 17, "containerPort: 81"));
  {
    auto [code, out] = run({"apply", "-f", manifest});
    INFO(out);
    CHECK(code == 1);
    CHECK(out.find("Error from server (Invalid): Pod \"nginx-pod\" is invalid: spec: Forbidden: pod updates may not "
                   "change fields other than") != std::string::npos);
  }
  // A delete: graceful (the pod runs on a node), the kubelet stops it, then
  // it is gone; --wait returns once it is.
  {
    auto [code, out] = run({"delete", "-f", manifest});
    INFO(out << pipeline.Logs());
    CHECK(code == 0);
    CHECK(out == "pod \"nginx-pod\" deleted\n");
  }
  CHECK_FALSE(pipeline.Get(PodKey("nginx-pod")).has_value());
  std::vector<std::string> events = pipeline.EventsFor("default", "nginx-pod");
  CHECK(std::count(events.begin(), events.end(), "Normal Killing: Stopping container nginx") == 1);
  {
    auto [code, out] = run({"delete", "pod", "nginx-pod"});
    CHECK(code == 1);
    CHECK(out == "Error from server (NotFound): pods \"nginx-pod\" not found\n");
  }
  pipeline.StopAll();
}

TEST_CASE("A gated pod waits for its gates; a deleted namespace takes its objects with it", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  auto run = [&](std::vector<std::string> args) { return pipeline.Podflow(std::move(args)); };
  const std::string manifest = pipeline.dir() + "/objects.yaml";
  std::ofstream(manifest) << R"(apiVersion: v1
kind: Pod
metadata: {name: gated}
spec:
  schedulingGates: [{name: example.com/quota}]
  containers: [{name: c, image: "nginx:1.14.2"}]
---
apiVersion: v1
kind: Namespace
metadata: {name: team-x}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: team-x}
data: {mode: fast}
---
apiVersion: v1
kind: Pod
metadata: {name: worker, namespace: team-x}
spec:
  containers: [{name: c, image: "nginx:1.14.2"}]
)";
  {
    auto [code, out] = run({"apply", "-f", manifest});
    INFO(out << pipeline.Logs());
    REQUIRE(code == 0);
  }
  std::string bytes;
  REQUIRE(pipeline.WaitFor<api::Pod>(model::ObjectKey(model::Kind("Pod"), "team-x", "worker"), Running, &bytes) !=
          nullptr);
  // Still gated: never bound, and kubectl's STATUS says why.
  std::optional<KeyValue> gated = pipeline.Get(PodKey("gated"));
  REQUIRE(gated.has_value());
  CHECK(model::Unpack<api::Pod>(gated->value)->spec->node_name.empty());
  {
    auto [code, out] = run({"get", "pod", "gated"});
    INFO(out);
    CHECK(out.find("SchedulingGated") != std::string::npos);
  }
  // Adding a gate is refused; removing the last one lets it be scheduled.
  {
    auto [code, out] = run({"patch", "pod", "gated", "-p", R"({"spec":{"schedulingGates":[{"name":"b"}]}})"});
    CHECK(code == 1);
    CHECK(out.find("only deletion is allowed, but found new scheduling gate 'b'") != std::string::npos);
  }
  {
    auto [code, out] = run({"patch", "pod", "gated", "--type", "json", "-p",
                            R"([{"op":"remove","path":"/spec/schedulingGates"}])"});
    INFO(out);
    CHECK(code == 0);
    CHECK(out == "pod/gated patched\n");
  }
  CHECK(pipeline.PodReaches("gated", Running));
  // RBAC: the example read-only user may do nothing until the shipped
  // binding gives it the view ClusterRole; then it reads, and still may not
  // delete.
  {
    auto [code, out] = run({"get", "pods", "--token", "viewer-token"});
    CHECK(code == 1);
    CHECK(out == "Error from server (Forbidden): pods is forbidden: User \"viewer\" cannot list resource \"pods\" in "
                 "API group \"\" in the namespace \"default\"\n");
  }
  {
    auto [code, out] = run({"apply", "-f", Manifest("read-only-user.yaml")});
    INFO(out);
    CHECK(out == "clusterrolebinding.rbac.authorization.k8s.io/viewers-read-only created\n");
  }
  {
    int code = 1;
    std::string out;
    for (int i = 0; i < 50 && code != 0; ++i) {  // the binding reaches admission's copy by watch
      std::tie(code, out) = run({"get", "pods", "-o", "name", "--token", "viewer-token"});
      if (code != 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    INFO(out);
    CHECK(code == 0);
    CHECK(out == "pod/gated\n");
  }
  {
    auto [code, out] = run({"delete", "pod", "gated", "--token", "viewer-token"});
    CHECK(code == 1);
    CHECK(out == "Error from server (Forbidden): pods \"gated\" is forbidden: User \"viewer\" cannot delete resource "
                 "\"pods\" in API group \"\" in the namespace \"default\"\n");
  }
  // The namespace goes Terminating, its objects are deleted (the pod
  // gracefully), then it goes; delete waits for that.
  {
    auto [code, out] = run({"delete", "namespace", "team-x"});
    INFO(out << pipeline.Logs());
    CHECK(code == 0);
    CHECK(out == "namespace \"team-x\" deleted\n");
  }
  CHECK_FALSE(pipeline.Get(model::ObjectKey(model::Kind("Pod"), "team-x", "worker")).has_value());
  CHECK_FALSE(pipeline.Get(model::ObjectKey(model::Kind("ConfigMap"), "team-x", "settings")).has_value());
  CHECK_FALSE(pipeline.Get(model::ObjectKey(model::Kind("Namespace"), "", "team-x")).has_value());
  pipeline.StopAll();
}

// The quota's status.used as stored: resource -> amount.
std::map<std::string, std::string> QuotaUsed(Pipeline& pipeline, const std::string& ns, const std::string& name) {
  std::map<std::string, std::string> out;
  std::optional<KeyValue> kv = pipeline.Get(model::ObjectKey(model::Kind("ResourceQuota"), ns, name));
  if (!kv) return out;
  auto quota = model::Unpack<api::ResourceQuota>(kv->value);
  if (!quota->status) return out;
  for (const auto& e : quota->status->used) out[e->key] = e->value;
  return out;
}

TEST_CASE("ResourceQuota: the docs' walkthrough end to end; 8 racing clients get exactly the quota", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  auto run = [&](std::vector<std::string> args) { return pipeline.Podflow(std::move(args)); };
  auto file = [&](const std::string& name, const std::string& text) {
    const std::string path = pipeline.dir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  };
  // "Configure Memory and CPU Quotas for a Namespace", with the docs'
  // manifests (config/manifests).
  REQUIRE(run({"create", "namespace", "quota-mem-cpu-example"}).first == 0);
  {
    auto [code, out] = run({"apply", "-f", Manifest("quota-mem-cpu.yaml"), "--namespace=quota-mem-cpu-example"});
    INFO(out << pipeline.Logs());
    REQUIRE(code == 0);
    CHECK(out == "resourcequota/mem-cpu-demo created\n");
  }
  {
    auto [code, out] = run({"apply", "-f", Manifest("quota-mem-cpu-pod.yaml"), "--namespace=quota-mem-cpu-example"});
    INFO(out << pipeline.Logs());
    REQUIRE(code == 0);
  }
  CHECK(QuotaUsed(pipeline, "quota-mem-cpu-example", "mem-cpu-demo") ==
        std::map<std::string, std::string>{{"limits.cpu", "800m"}, {"limits.memory", "800Mi"},
                                           {"requests.cpu", "400m"}, {"requests.memory", "600Mi"}});
  {
    auto [code, out] = run({"get", "resourcequota", "mem-cpu-demo", "--namespace=quota-mem-cpu-example"});
    INFO(out);
    CHECK(out.find("requests.cpu: 400m/1, requests.memory: 600Mi/1Gi") != std::string::npos);
    CHECK(out.find("limits.cpu: 800m/2, limits.memory: 800Mi/2Gi") != std::string::npos);
  }
  {
    auto [code, out] = run({"apply", "-f", Manifest("quota-mem-cpu-pod-2.yaml"), "--namespace=quota-mem-cpu-example"});
    INFO(out);
    CHECK(code == 1);
    CHECK(out.find("pods \"quota-mem-cpu-demo-2\" is forbidden: exceeded quota: mem-cpu-demo, requested: "
                   "requests.memory=700Mi, used: requests.memory=600Mi, limited: requests.memory=1Gi") !=
          std::string::npos);
  }
  CHECK_FALSE(pipeline.Get(model::ObjectKey(model::Kind("Pod"), "quota-mem-cpu-example", "quota-mem-cpu-demo-2")));

  // 8 clients, 2 pods each, against a quota of 5 pods: exactly 5 are made.
  REQUIRE(run({"create", "namespace", "race"}).first == 0);
  REQUIRE(run({"apply", "-f", file("race-quota.yaml", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: "
                                                       "pod-count, namespace: race}\nspec: {hard: {pods: \"5\"}}\n")})
              .first == 0);
  std::vector<std::string> results(16);
  {
    std::vector<std::thread> clients;
    for (int c = 0; c < 8; ++c) {
      clients.emplace_back([&, c] {
        for (int i = 0; i < 2; ++i) {
          results[c * 2 + i] = pipeline.SubmitFromThread(
              "{apiVersion: v1, kind: Pod, metadata: {name: p" + std::to_string(c * 2 + i) +
              ", namespace: race}, spec: {containers: [{name: c, image: \"nginx:1.14.2\"}]}}");
        }
      });
    }
    for (std::thread& t : clients) t.join();
  }
  INFO(pipeline.Logs());
  CHECK(std::count(results.begin(), results.end(), "") == 5);
  CHECK(std::count(results.begin(), results.end(), "Forbidden") == 11);
  auto stored_pods = pipeline.Api().List(model::KindPrefix(model::Kind("Pod"), "race"));
  REQUIRE(stored_pods.ok());
  CHECK(stored_pods->kvs.size() == 5);
  CHECK(QuotaUsed(pipeline, "race", "pod-count") == std::map<std::string, std::string>{{"pods", "5"}});
  {
    // The five, by name in natural order (p2 before p10), as kubectl's
    // --sort-by and -o jsonpath print them.
    std::vector<int> made;
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].empty()) made.push_back(static_cast<int>(i));
    }
    std::string names;
    for (int i : made) names += (names.empty() ? "p" : " p") + std::to_string(i);
    auto [code, out] = pipeline.Podflow({"get", "pods", "-n", "race", "--sort-by", ".metadata.name", "-o",
                                         "jsonpath={.items[*].metadata.name}"});
    INFO(out);
    CHECK(code == 0);
    CHECK(out == names);
  }

  // A deleted pod is given back by the recount, and the room is taken again.
  std::string gone;
  for (size_t i = 0; i < results.size() && gone.empty(); ++i) {
    if (results[i].empty()) gone = "p" + std::to_string(i);
  }
  {
    auto [code, out] = run({"delete", "pod", gone, "--namespace=race"});
    INFO(out);
    REQUIRE(code == 0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (QuotaUsed(pipeline, "race", "pod-count")["pods"] != "4" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(QuotaUsed(pipeline, "race", "pod-count")["pods"] == "4");
  CHECK(pipeline.SubmitFromThread(
            "{apiVersion: v1, kind: Pod, metadata: {name: again, namespace: race}, spec: {containers: [{name: c, "
            "image: \"nginx:1.14.2\"}]}}") == "");
  CHECK(pipeline.SubmitFromThread(
            "{apiVersion: v1, kind: Pod, metadata: {name: over, namespace: race}, spec: {containers: [{name: c, "
            "image: \"nginx:1.14.2\"}]}}") == "Forbidden");

  // An update is charged what it adds, in its own write: one Service may
  // become a NodePort, the second may not.
  REQUIRE(run({"apply", "-f", file("ports-quota.yaml", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: "
                                                        "ports, namespace: race}\nspec: {hard: {services.nodeports: "
                                                        "\"1\"}}\n")})
              .first == 0);
  for (const char* name : {"a", "b"}) {
    CHECK(pipeline.SubmitFromThread(std::string("{apiVersion: v1, kind: Service, metadata: {name: ") + name +
                                    ", namespace: race}, spec: {selector: {app: x}, ports: [{port: 80}]}}") == "");
  }
  {
    auto [code, out] = run({"patch", "service", "a", "-n", "race", "-p", R"({"spec":{"type":"NodePort"}})"});
    INFO(out);
    CHECK(code == 0);
    CHECK(out == "service/a patched\n");
  }
  CHECK(QuotaUsed(pipeline, "race", "ports") == std::map<std::string, std::string>{{"services.nodeports", "1"}});
  {
    auto [code, out] = run({"patch", "service", "b", "-n", "race", "-p", R"({"spec":{"type":"NodePort"}})"});
    INFO(out);
    CHECK(code == 1);
    CHECK(out == "Error from server (Forbidden): services \"b\" is forbidden: exceeded quota: ports, requested: "
                 "services.nodeports=1, used: services.nodeports=1, limited: services.nodeports=1\n");
  }
  pipeline.StopAll();
}

TEST_CASE("PodSecurity: a namespace's warn level prints kubectl's warning; its enforce level refuses", "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  auto file = [&](const std::string& name, const std::string& text) {
    const std::string path = pipeline.dir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  };
  const std::string pod = file("pod.yaml", R"(apiVersion: v1
kind: Pod
metadata: {name: nginx}
spec:
  hostNetwork: true
  containers: [{name: nginx, image: "nginx:1.14.2"}]
)");
  REQUIRE(pipeline.Podflow({"apply", "-f", file("ns.yaml", R"(apiVersion: v1
kind: Namespace
metadata:
  name: example
  labels: {pod-security.kubernetes.io/warn: baseline, pod-security.kubernetes.io/warn-version: latest}
---
apiVersion: v1
kind: Namespace
metadata:
  name: locked
  labels: {pod-security.kubernetes.io/enforce: baseline}
)")}).first == 0);
  {
    auto [code, out] = pipeline.Podflow({"apply", "-f", pod, "-n", "example"});
    INFO(out << pipeline.Logs());
    CHECK(code == 0);
    CHECK(out == "Warning: would violate PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)\n"
                 "pod/nginx created\n");
  }
  {
    auto [code, out] = pipeline.Podflow({"apply", "-f", pod, "-n", "locked"});
    INFO(out);
    CHECK(code == 1);
    CHECK(out.find("pods \"nginx\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces "
                   "(hostNetwork=true)") != std::string::npos);
  }
  CHECK(pipeline.Get(model::ObjectKey(model::Kind("Pod"), "example", "nginx")).has_value());
  CHECK_FALSE(pipeline.Get(model::ObjectKey(model::Kind("Pod"), "locked", "nginx")).has_value());
  pipeline.StopAll();
}

TEST_CASE("Every manifest of the bad-manifest table is refused with its Status, and nothing of it is written",
          "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  const std::vector<admission::testing::BadManifest> table = admission::testing::BadManifests();
  REQUIRE(table.size() >= 60);
  for (const admission::testing::BadManifest& c : table) {
    INFO(c.name);
    auto results = pipeline.Submit(c.manifest);
    REQUIRE(results.size() == 1);
    CHECK(results[0].first == c.reason);
    CHECK(results[0].second == c.message);
    // Nothing was written: the object's key holds nothing.
    Result<std::vector<model::Decoded>> docs = model::DecodeManifests(c.manifest);
    REQUIRE(docs.ok());
    const model::Object& o = (*docs)[0].object;
    if (o.kind != nullptr && !o.name.empty()) {
      CHECK_FALSE(pipeline.Get(model::ObjectKey(*o.kind, o.namespace_, o.name)).has_value());
    }
  }
  pipeline.StopAll();
}

}  // namespace
}  // namespace podflow::e2e

namespace podflow::e2e {
namespace {

TEST_CASE("A pod gets its account's token volume; every namespace holds the cluster's CA in kube-root-ca.crt",
          "[e2e]") {
  Pipeline pipeline(false);
  pipeline.StartAll();
  REQUIRE(pipeline.Podflow({"create", "namespace", "team"}).first == 0);
  auto results = pipeline.Submit(
      "{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: team}, spec: {containers: [{name: c, image: "
      "\"nginx:1.14.2\"}]}}");
  REQUIRE(results.size() == 1);
  CHECK(results[0].first.empty());
  {
    auto [code, out] = pipeline.Podflow({"get", "pod", "web", "-n", "team", "-o",
                                         "jsonpath={.spec.volumes[0].name} {.spec.containers[0].volumeMounts[0]}"});
    INFO(out);
    CHECK(code == 0);
    CHECK(out.starts_with("kube-api-access-"));
    CHECK(out.find(R"({"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount","name":"kube-api-access-)") !=
          std::string::npos);
    CHECK(out.ends_with(R"(","readOnly":true})"));
  }
  Result<std::string> ca = pipeline::ReadRootCa(pipeline.data_dir());
  REQUIRE(ca.ok());
  for (const char* ns : {"default", "kube-system", "team"}) {
    auto [code, out] = pipeline.Podflow({"get", "configmap", "kube-root-ca.crt", "-n", ns, "-o",
                                         "jsonpath={.data.ca\\.crt}"});
    INFO(ns << ": " << out);
    CHECK(code == 0);
    CHECK(out == *ca);
  }
  std::string bytes;
  CHECK(pipeline.WaitFor<api::Pod>(model::ObjectKey(model::Kind("Pod"), "team", "web"), Running, &bytes) != nullptr);
  pipeline.StopAll();
}


bool HasTaint(const api::Node& node, const std::string& key, api::TaintEffect effect) {
  if (node.spec() == nullptr || node.spec()->taints() == nullptr) return false;
  for (const api::Taint* t : *node.spec()->taints()) {
    if (t->key() && t->key()->str() == key && t->effect() == effect) return true;
  }
  return false;
}

bool Contains(const std::vector<std::string>& lines, const std::string& line) {
  return std::find(lines.begin(), lines.end(), line) != lines.end();
}

TEST_CASE("A node whose agent stops: Unknown, tainted unreachable, its pods not Ready and evicted after their tolerationSeconds",
          "[e2e]") {
  Pipeline pipeline(true, "", "controllers: {nodeMonitorPeriod: 500ms, nodeMonitorGracePeriod: 3s}\n");
  pipeline.StartAll();
  // One pod tolerates an unreachable node for 2 s; the other gets
  // DefaultTolerationSeconds' 300 s.
  REQUIRE(pipeline.Submit(R"(apiVersion: v1
kind: Pod
metadata: {name: brief}
spec:
  nodeName: node-1
  containers: [{name: app, image: "nginx:1.14.2"}]
  tolerations:
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: patient}
spec:
  nodeName: node-1
  containers: [{name: app, image: "nginx:1.14.2"}]
)")[0].first.empty());
  const auto ready = [](const api::Pod& p) { return model::ConditionStatusOf(p, "Ready") == api::ConditionStatus::True; };
  INFO(pipeline.Logs());
  REQUIRE(pipeline.PodReaches("brief", ready));
  REQUIRE(pipeline.PodReaches("patient", ready));
  std::optional<KeyValue> before = pipeline.Get(PodKey("patient"));
  REQUIRE(before.has_value());
  const api::Pod* patient_before = flatbuffers::GetRoot<api::Pod>(before->value.data());
  const std::string patient_ip = patient_before->status()->pod_ip()->str();
  REQUIRE(patient_before->status()->container_statuses()->size() == 1);
  const std::string patient_started =
      patient_before->status()->container_statuses()->Get(0)->state()->running()->started_at()->str();

  pipeline.KillStage("runtime");  // every node's agent dies at once
  const std::string node_key = model::ObjectKey(model::Kind("Node"), "", "node-1");
  std::string node_bytes;
  const api::Node* node = pipeline.WaitFor<api::Node>(
      node_key,
      [](const api::Node& n) {
        return HasTaint(n, "node.kubernetes.io/unreachable", api::TaintEffect::NoExecute) &&
               HasTaint(n, "node.kubernetes.io/unreachable", api::TaintEffect::NoSchedule);
      },
      &node_bytes);
  REQUIRE(node != nullptr);
  const api::NodeCondition* unknown = model::FindCondition(*node, "Ready");
  REQUIRE(unknown != nullptr);
  CHECK(unknown->status() == api::ConditionStatus::Unknown);
  CHECK(unknown->reason()->str() == "NodeStatusUnknown");
  CHECK(unknown->message()->str() == "Kubelet stopped posting node status.");
  CHECK(model::FindCondition(*node, "MemoryPressure")->status() == api::ConditionStatus::Unknown);
  CHECK(Contains(pipeline.EventsFor("default", "node-1"),
                 "Normal NodeNotReady: Node node-1 status is now: NodeNotReady"));
  // kubectl describe node shows the taints, the Unknown conditions and the
  // lease its agent last renewed.
  auto [described, text] = pipeline.Podflow({"describe", "node", "node-1"});
  INFO(text);
  CHECK(described == 0);
  CHECK(text.find("node.kubernetes.io/unreachable:NoExecute") != std::string::npos);
  CHECK(text.find("NodeStatusUnknown") != std::string::npos);
  CHECK(text.find("Lease:\n  HolderIdentity:  node-1\n  AcquireTime:     <unset>\n  RenewTime:") != std::string::npos);

  // Its pods are no longer Ready; the one tolerating 2 s is evicted then.
  REQUIRE(pipeline.PodReaches(
      "patient", [](const api::Pod& p) { return model::ConditionStatusOf(p, "Ready") == api::ConditionStatus::False; }));
  CHECK(Contains(pipeline.EventsFor("default", "patient"), "Warning NodeNotReady: Node is not ready"));
  std::string brief_bytes;
  const api::Pod* evicted = pipeline.WaitFor<api::Pod>(
      PodKey("brief"),
      [](const api::Pod& p) { return p.metadata()->deletion_timestamp() != nullptr; }, &brief_bytes,
      std::chrono::seconds(10));
  REQUIRE(evicted != nullptr);
  CHECK(model::ConditionStatusOf(*evicted, "DisruptionTarget") == api::ConditionStatus::True);
  CHECK(Contains(pipeline.EventsFor("default", "brief"),
                 "Normal TaintManagerEviction: Marking for deletion Pod default/brief"));
  std::optional<KeyValue> patient = pipeline.Get(PodKey("patient"));
  REQUIRE(patient.has_value());
  CHECK(flatbuffers::GetRoot<api::Pod>(patient->value.data())->metadata()->deletion_timestamp() == nullptr);

  // The agent comes back: the node is Ready again, its taints go, and the
  // evicted pod is stopped and removed.
  pipeline.StartStage("runtime");
  node = pipeline.WaitFor<api::Node>(
      node_key,
      [](const api::Node& n) {
        const api::NodeCondition* r = model::FindCondition(n, "Ready");
        return r != nullptr && r->status() == api::ConditionStatus::True &&
               !HasTaint(n, "node.kubernetes.io/unreachable", api::TaintEffect::NoExecute) &&
               !HasTaint(n, "node.kubernetes.io/unreachable", api::TaintEffect::NoSchedule);
      },
      &node_bytes);
  REQUIRE(node != nullptr);
  CHECK(model::FindCondition(*node, "Ready")->reason()->str() == "KubeletReady");
  bool removed = false;
  for (int i = 0; i < 200 && !removed; ++i) {
    removed = !pipeline.Get(PodKey("brief")).has_value();
    if (!removed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(removed);
  // The pod that stayed was running all along: Ready again, same IP, its
  // container not restarted.
  std::string patient_bytes;
  const api::Pod* back = pipeline.WaitFor<api::Pod>(PodKey("patient"), ready, &patient_bytes);
  REQUIRE(back != nullptr);
  CHECK(back->status()->pod_ip()->str() == patient_ip);
  REQUIRE(back->status()->container_statuses()->size() == 1);
  const api::ContainerStatus* app = back->status()->container_statuses()->Get(0);
  CHECK(app->restart_count() == 0);
  REQUIRE(app->state()->running() != nullptr);
  CHECK(app->state()->running()->started_at()->str() == patient_started);  // not started again
}

}  // namespace
TEST_CASE("process runtime: a container's command really runs — its output is its log, its exit its status; "
          "a crash restarts it; a delete sends SIGTERM",
          "[e2e]") {
  char tmpl[] = "/tmp/podflow-process-e2e-XXXXXX";
  const std::string scratch = ::mkdtemp(tmpl);
  Pipeline pipeline(false, "", "", "  type: process\n  backOffMillis: 1000\n");
  pipeline.StartAll();
  REQUIRE(pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata: {name: hello}
spec:
  restartPolicy: Never
  containers:
  - name: hello
    image: busybox:1.28
    command: ["sh", "-c", "echo hello from $(hostname) in $PWD with $(GREETING); echo to stderr >&2; exit 3"]
    workingDir: /tmp
    env: [{name: GREETING, value: hi}]
---
apiVersion: v1
kind: Pod
metadata: {name: crash}
spec:
  containers: [{name: app, image: busybox:1.28, command: ["sh", "-c", "echo run; exit 1"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: missing}
spec:
  restartPolicy: Never
  containers: [{name: app, image: busybox:1.28, command: ["no-such-command-podflow"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: server}
spec:
  containers:
  - name: server
    image: busybox:1.28
    command: ["sh", "-c", "trap 'echo stopped > )yaml" + scratch + R"yaml(/stopped; exit 0' TERM; echo up; while true; do sleep 0.1; done"]
    volumeMounts: [{name: scratch, mountPath: )yaml" + scratch + R"yaml(}, {name: config, mountPath: /etc/config}]
  volumes:
  - {name: scratch, hostPath: {path: )yaml" + scratch + R"yaml(, type: Directory}}
  - {name: config, configMap: {name: handoff-config}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: handoff-config}
data: {greeting: hello from the config}
---
apiVersion: v1
kind: Pod
metadata: {name: handoff, labels: {app: handoff}}
spec:
  restartPolicy: Never
  initContainers:
  - name: init
    image: busybox:1.28
    command: ["sh", "-c", "echo written by init > /work-dir/shared"]
    volumeMounts: [{name: workdir, mountPath: /work-dir}]
  containers:
  - name: main
    image: busybox:1.28
    command: ["sh", "-c", "cat /work-dir/shared /etc/config/greeting; echo; cat /etc/podinfo/labels; echo; ls /var/run/secrets/kubernetes.io/serviceaccount"]
    volumeMounts:
    - {name: workdir, mountPath: /work-dir}
    - {name: config, mountPath: /etc/config}
    - {name: podinfo, mountPath: /etc/podinfo}
  volumes:
  - {name: workdir, emptyDir: {}}
  - {name: config, configMap: {name: handoff-config}}
  - {name: podinfo, downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: hungry}
spec:
  restartPolicy: Never
  containers:
  - name: hungry
    image: busybox:1.28
    command: ["python3", "-c", "b = bytearray(256 * 1024 * 1024); print(len(b))"]
    resources: {limits: {memory: 64Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: etc-files}
spec:
  restartPolicy: Never
  hostAliases: [{ip: "10.1.2.3", hostnames: [foo.remote, bar.remote]}]
  dnsPolicy: None
  dnsConfig: {nameservers: [192.0.2.1], searches: [my.dns.search.suffix], options: [{name: ndots, value: "2"}]}
  containers: [{name: cat, image: busybox:1.28, command: ["sh", "-c", "tail -n 3 /etc/hosts; cat /etc/resolv.conf"]}]
)yaml").size() == 8);
  INFO(pipeline.Logs());
  // Its own exit code, as the process ended.
  std::string bytes;
  const api::Pod* hello = pipeline.WaitFor<api::Pod>(PodKey("hello"), [](const api::Pod& p) {
    return p.status() && p.status()->phase() == api::PodPhase::Failed;
  }, &bytes);
  REQUIRE(hello != nullptr);
  const api::ContainerStateTerminated* ended = hello->status()->container_statuses()->Get(0)->state()->terminated();
  REQUIRE(ended != nullptr);
  CHECK(ended->exit_code() == 3);
  CHECK(ended->reason()->str() == "Error");
  CHECK(hello->status()->container_statuses()->Get(0)->container_id()->str().rfind("podflow-process://", 0) == 0);
  // Its output, both streams, in the order printed; $(GREETING) expanded by
  // kubelet's rules, $(hostname) left to the shell: the pod's name (its UTS
  // namespace) when running as root.
  const auto [code, text] = pipeline.Podflow({"logs", "hello"});
  CHECK(code == 0);
  // With namespaces (the runtime warns at start when it has none) $(hostname) is the pod's.
  if (!pipeline.LogsContain("containers run without their own PID, mount and UTS namespaces")) {
    CHECK(text == "hello from hello in /tmp with hi\nto stderr\n");
  }
  CHECK(text.find("in /tmp with hi\n") != std::string::npos);

  // A crash loop: restarted, then in back-off, its previous log kept.
  REQUIRE(pipeline.PodReaches("crash", [](const api::Pod& p) {
    const auto* s = p.status() && p.status()->container_statuses() ? p.status()->container_statuses()->Get(0) : nullptr;
    return s && s->restart_count() >= 1 && s->last_state() && s->last_state()->terminated() &&
           s->last_state()->terminated()->exit_code() == 1;
  }));
  CHECK(pipeline.Podflow({"logs", "crash", "--previous"}) == std::pair<int, std::string>{0, "run\n"});

  // A command that is not there: StartError, in the runtime's words.
  const api::Pod* missing = pipeline.WaitFor<api::Pod>(PodKey("missing"), [](const api::Pod& p) {
    return p.status() && p.status()->phase() == api::PodPhase::Failed;
  }, &bytes);
  REQUIRE(missing != nullptr);
  const api::ContainerStateTerminated* failed = missing->status()->container_statuses()->Get(0)->state()->terminated();
  REQUIRE(failed != nullptr);
  CHECK(failed->exit_code() == 128);
  CHECK(failed->reason()->str() == "StartError");
  CHECK(failed->message()->str().find("exec: \"no-such-command-podflow\": executable file not found in $PATH") !=
        std::string::npos);

  // An init container writes a file into an emptyDir the main container
  // then reads, beside a ConfigMap's key, the downward API's labels and the
  // service account's projected volume (no token: podflow issues none).
  if (pipeline.LogsContain("containers have no root of their own")) {
    WARN("volumes are not checked: the runtime cannot mount them here (see its log)");
  } else {
    REQUIRE(pipeline.PodReaches("handoff", [](const api::Pod& p) {
      return p.status() && p.status()->phase() == api::PodPhase::Succeeded;
    }));
    CHECK(pipeline.Podflow({"logs", "handoff", "-c", "main"}) ==
          std::pair<int, std::string>{0, "written by init\nhello from the config\napp=\"handoff\"\nca.crt\nnamespace\n"});
    CHECK_FALSE(std::filesystem::exists("/work-dir"));  // the machine's own root is left alone
    // kubelet's /etc/hosts (the node's, then the hostAliases) and the
    // resolv.conf its dnsPolicy makes, over the container's own.
    REQUIRE(pipeline.PodReaches("etc-files", [](const api::Pod& p) {
      return p.status() && p.status()->phase() == api::PodPhase::Succeeded;
    }));
    CHECK(pipeline.Podflow({"logs", "etc-files"}) ==
          std::pair<int, std::string>{0, "\n# Entries added by HostAliases.\n10.1.2.3\tfoo.remote\tbar.remote\n"
                                         "search my.dns.search.suffix\nnameserver 192.0.2.1\noptions ndots:2\n"});
  }

  // Over its memory limit: the kernel's OOM killer ends it, as OOMKilled.
  const api::Pod* hungry = pipeline.WaitFor<api::Pod>(PodKey("hungry"), [](const api::Pod& p) {
    return p.status() && (p.status()->phase() == api::PodPhase::Failed || p.status()->phase() == api::PodPhase::Succeeded);
  }, &bytes);
  REQUIRE(hungry != nullptr);
  // The runtime says at start what it cannot do here.
  const bool oom_kills = !pipeline.LogsContain("process runtime: memory limits");
  if (oom_kills) {
    const api::ContainerStateTerminated* oom = hungry->status()->container_statuses()->Get(0)->state()->terminated();
    REQUIRE(oom != nullptr);
    CHECK(oom->reason()->str() == "OOMKilled");
    CHECK(hungry->status()->phase() == api::PodPhase::Failed);
  } else {
    WARN("the memory limit is not checked: the runtime cannot enforce it here (see its log)");
  }

  // A delete: the process takes SIGTERM (its trap runs) and the pod goes.
  REQUIRE(pipeline.PodReaches("server", Pipeline::Running));
  for (int i = 0; i < 100 && pipeline.Podflow({"logs", "server"}).second != "up\n"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  CHECK(pipeline.Podflow({"logs", "server"}).second == "up\n");

  // exec: a command beside the running container, in its environment; its
  // output and exit code passed through; stdin with -i.
  const auto [exec_code, exec_out] =
      pipeline.Podflow({"exec", "server", "--", "sh", "-c", "echo in $(hostname); echo to stderr >&2; exit 4"});
  CHECK(exec_code == 4);
  if (!pipeline.LogsContain("containers run without their own PID, mount and UTS namespaces")) {
    CHECK(exec_out == "in server\nto stderr\ncommand terminated with exit code 4\n");
  }
  CHECK(exec_out.ends_with("to stderr\ncommand terminated with exit code 4\n"));
  CHECK(pipeline.Podflow({"exec", "-i", "pod/server", "--", "sh", "-c", "cat; echo end"}, "piped in\n") ==
        std::pair<int, std::string>{0, "piped in\nend\n"});
  const auto [missing_code, missing_out] = pipeline.Podflow({"exec", "server", "--", "no-such-command-podflow"});
  CHECK(missing_code == 1);
  CHECK_THAT(missing_out,
             Catch::Matches("error: Internal error occurred: error executing command in container: failed to exec in "
                            "container: failed to start exec \"[0-9a-f]{64}\": OCI runtime exec failed: exec failed: "
                            "unable to start container process: exec: \"no-such-command-podflow\": executable file "
                            "not found in \\$PATH: unknown\n"));
  CHECK(pipeline.Podflow({"exec", "hello", "--", "ls"}) ==
        std::pair<int, std::string>{
            1, "error: cannot exec into a container in a completed pod; current phase is Failed\n"});
  // A ConfigMap's change reaches the files of a running container's volume.
  if (!pipeline.LogsContain("containers have no root of their own")) {
    const std::vector<std::string> cat_greeting = {"exec", "server", "--", "cat", "/etc/config/greeting"};
    CHECK(pipeline.Podflow(cat_greeting) == std::pair<int, std::string>{0, "hello from the config"});
    REQUIRE(pipeline.Podflow({"patch", "configmap", "handoff-config", "-p", R"({"data":{"greeting":"updated"}})"})
                .first == 0);
    for (int i = 0; i < 100 && pipeline.Podflow(cat_greeting).second != "updated"; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(pipeline.Podflow(cat_greeting) == std::pair<int, std::string>{0, "updated"});
  }
  CHECK(pipeline.Podflow({"delete", "pod", "server"}).first == 0);
  CHECK(pipeline.WaitForGone(PodKey("server")));
  std::ifstream stopped(scratch + "/stopped");
  std::string line;
  std::getline(stopped, line);
  CHECK(line == "stopped");
  pipeline.StopAll();
  std::filesystem::remove_all(scratch);
}

TEST_CASE("process runtime: an exec liveness probe restarts the container; an httpGet readiness probe on python3's "
          "http.server makes the pod Ready",
          "[e2e]") {
  char tmpl[] = "/tmp/podflow-probe-e2e-XXXXXX";
  const std::string scratch = ::mkdtemp(tmpl);
  const auto free_port = [] { return std::to_string(podflow::testing::FreePort()); };
  const std::string port = free_port();
  const std::string nginx_port = free_port();
  Pipeline pipeline(false, "", "", "  type: process\n  backOffMillis: 1000\n");
  pipeline.StartAll();
  REQUIRE(pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata: {name: liveness-exec}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: liveness
    image: busybox:1.28
    args: ["/bin/sh", "-c", "touch )yaml" + scratch + R"yaml(/healthy; sleep 2; rm -f )yaml" + scratch +
                          R"yaml(/healthy; sleep 600"]
    livenessProbe:
      exec: {command: [cat, )yaml" + scratch + R"yaml(/healthy]}
      initialDelaySeconds: 1
      periodSeconds: 1
      failureThreshold: 1
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: web
    image: busybox:1.28
    command: ["python3", "-m", "http.server", ")yaml" + port + R"yaml(", "--directory", ")yaml" +
                          scratch + R"yaml("]
    ports: [{containerPort: )yaml" + port + R"yaml(}]
    readinessProbe: {httpGet: {path: /, port: )yaml" + port + R"yaml(}, periodSeconds: 1}
)yaml").size() == 2);
  INFO(pipeline.Logs());
  // The docs' lifecycle-demo (its port one of the test's): its exec hooks run
  // in the container, its postStart writing into the container's own root.
  const bool own_root = !pipeline.LogsContain("containers have no root of their own");
  if (own_root) {
    REQUIRE(pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata:
  name: lifecycle-demo
spec:
  containers:
  - name: lifecycle-demo-container
    image: nginx
    ports: [{containerPort: )yaml" + nginx_port + R"yaml(}]
    lifecycle:
      postStart:
        exec:
          command: ["/bin/sh", "-c", "echo Hello from the postStart handler > /usr/share/message"]
      preStop:
        exec:
          command: ["/bin/sh","-c","nginx -s quit; while killall -C nginx; do sleep 1; done"]
)yaml").size() == 1);
  } else {
    WARN("exec hooks are not checked: containers have no root of their own here (see the runtime's log)");
  }
  // The file goes after 2 s: the next probe fails, and the container is restarted.
  REQUIRE(pipeline.PodReaches("liveness-exec", [](const api::Pod& p) {
    const auto* s = p.status() && p.status()->container_statuses() ? p.status()->container_statuses()->Get(0) : nullptr;
    return s && s->restart_count() >= 1;
  }, std::chrono::seconds(30)));
  const std::vector<std::string> events = pipeline.EventsFor("default", "liveness-exec");
  bool unhealthy = false, killing = false;
  for (const std::string& e : events) {
    INFO(e);
    unhealthy |= e.rfind("Warning Unhealthy: Liveness probe failed: cat: ", 0) == 0 &&
                 e.find("No such file or directory") != std::string::npos;
    killing |= e == "Normal Killing: Container liveness failed liveness probe, will be restarted";
  }
  CHECK(unhealthy);
  CHECK(killing);
  // Ready once the server answers.
  REQUIRE(pipeline.PodReaches("web", [](const api::Pod& p) { return model::ConditionIsTrue(p, "Ready"); },
                              std::chrono::seconds(30)));
  if (own_root) {
    REQUIRE(pipeline.PodReaches("lifecycle-demo", Pipeline::Running, std::chrono::seconds(30)));
    CHECK(pipeline.Podflow({"exec", "lifecycle-demo", "--", "cat", "/usr/share/message"}) ==
          std::pair<int, std::string>{0, "Hello from the postStart handler\n"});
    CHECK_FALSE(std::filesystem::exists("/usr/share/message"));
    CHECK(pipeline.Podflow({"delete", "pod", "lifecycle-demo"}).first == 0);
    CHECK(pipeline.WaitForGone(PodKey("lifecycle-demo")));
    for (const std::string& e : pipeline.EventsFor("default", "lifecycle-demo")) {
      CHECK(e.find("Hook") == std::string::npos);  // neither hook failed
    }

    // The docs' security-context-demo, unchanged: its processes are user
    // 1000, group 3000 with 2000 and 4000 beside, its emptyDir the fsGroup's.
    REQUIRE(pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata:
  name: security-context-demo
spec:
  securityContext:
    runAsUser: 1000
    runAsGroup: 3000
    fsGroup: 2000
    supplementalGroups: [4000]
  volumes:
  - name: sec-ctx-vol
    emptyDir: {}
  containers:
  - name: sec-ctx-demo
    image: busybox:1.28
    command: [ "sh", "-c", "sleep 1h" ]
    volumeMounts:
    - name: sec-ctx-vol
      mountPath: /data/demo
    securityContext:
      allowPrivilegeEscalation: false
)yaml").size() == 1);
    REQUIRE(pipeline.PodReaches("security-context-demo", Pipeline::Running, std::chrono::seconds(30)));
    const auto in_demo = [&](const std::string& script) {
      return pipeline.Podflow({"exec", "security-context-demo", "--", "sh", "-c", script});
    };
    CHECK(in_demo("id -u; id -g") == std::pair<int, std::string>{0, "1000\n3000\n"});
    const std::string groups = in_demo("grep Groups /proc/self/status").second;
    for (const char* g : {"2000", "3000", "4000"}) CHECK_THAT(groups, Catch::Contains(std::string(" ") + g) ||
                                                                      Catch::Contains(std::string("\t") + g));
    CHECK(in_demo("grep NoNewPrivs /proc/1/status") == std::pair<int, std::string>{0, "NoNewPrivs:\t1\n"});
    CHECK(in_demo("stat -c '%A %u %g' /data/demo") == std::pair<int, std::string>{0, "drwxrwsrwx 0 2000\n"});
    CHECK(in_demo("cd /data/demo && echo hello > testfile && stat -c '%A %u %g' testfile") ==
          std::pair<int, std::string>{0, "-rw-r--r-- 1000 2000\n"});
    // Its sleep is PID 1, the user's.
    CHECK(in_demo("stat -c %u /proc/1") == std::pair<int, std::string>{0, "1000\n"});
  }
  pipeline.StopAll();
  std::filesystem::remove_all(scratch);
}

namespace {

// Requests `url` `n` times from inside the pod `from` (its network, its
// resolv.conf): each answer's body, or "error: ..." for one that failed.
std::vector<std::string> RequestsFrom(const Pipeline& pipeline, const std::string& from, const std::string& url,
                                      int n) {
  constexpr char kScript[] =
      "import sys, urllib.request\n"
      "for i in range(int(sys.argv[2])):\n"
      "    try:\n"
      "        print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode().strip())\n"
      "    except Exception as e:\n"
      "        print('error: %s' % e)\n";
  auto [code, out] = pipeline.Podflow({"exec", from, "--", "python3", "-c", kScript, url, std::to_string(n)});
  std::vector<std::string> answers;
  if (code != 0) return {"error: exec exited " + std::to_string(code) + ": " + out};
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) answers.push_back(line);
  return answers;
}

// Repeats RequestsFrom until the answers are exactly `expected` (as a set)
// or `timeout` passes; the last answers.
std::set<std::string> AnswersBecome(const Pipeline& pipeline, const std::string& from, const std::string& url,
                                    const std::set<std::string>& expected,
                                    std::chrono::seconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::set<std::string> seen;
  do {
    const std::vector<std::string> answers = RequestsFrom(pipeline, from, url, 24);
    seen = std::set<std::string>(answers.begin(), answers.end());
    if (seen == expected) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  } while (std::chrono::steady_clock::now() < deadline);
  return seen;
}

}  // namespace

TEST_CASE("pod network: a Service you can curl — its ClusterIP and its DNS name spread over two python3 -m http.server "
          "backends, one on the client's node and one on another, names outside the cluster are forwarded, a backend that is not ready leaves the "
          "rotation and comes back, its NodePort answers on a node's address; nothing of the network is left after",
          "[e2e]") {
  if (std::optional<std::string> why = netns::Unavailable()) {
    WARN("skipped: no pod network can be made here: " << *why);
    return;
  }
  if (!netns::HasProgram("iptables-restore")) {
    WARN("skipped: no pod network rules here: no iptables-restore (Debian's iptables)");
    return;
  }
  char tmpl[] = "/tmp/podflow-net-e2e-XXXXXX";
  const std::string scratch = ::mkdtemp(tmpl);
  for (const char* backend : {"backend-1", "backend-2"}) {
    std::filesystem::create_directories(scratch + "/" + backend);
    std::ofstream(scratch + "/" + backend + "/ready") << "ready\n";
    std::ofstream(scratch + "/" + backend + "/name") << backend << "\n";  // what its server serves at /name
  }
  // An upstream DNS on this machine for names outside the cluster: the
  // pods' network has no way out, but the cluster DNS forwards from here.
  proxy::dns::ClusterRecords elsewhere("example.test");
  elsewhere.SetNamespace("default", true);
  elsewhere.SetService({"default", "outside", "192.0.2.7", "", {{"http", "tcp", 80}}, {}});
  Result<std::unique_ptr<proxy::dns::DnsServer>> upstream = proxy::dns::DnsServer::Start(
      "127.0.0.1", 0, [&](std::string_view name, proxy::dns::RrType type) { return elsewhere.Resolve(name, type); });
  REQUIRE(upstream.ok());
  // The registry's list goes on with agnhost; then the runtime's keys.
  Pipeline pipeline(false, "",
                    "proxy:\n  dnsForward: [\"127.0.0.1:" + std::to_string((*upstream)->port()) + "\"]\n",
                    "    - {name: registry.k8s.io/e2e-test-images/agnhost, tags: [\"2.39\"], sizeBytes: 1000000, "
                    "pullMillis: 20}\n    - {name: python, tags: [\"3\"], sizeBytes: 1000000, pullMillis: 20}\n"
                    "  type: process\n");
  pipeline.StartAll();
  std::string backends;
  for (const auto& [name, node] : {std::pair{"backend-1", "node-1"}, std::pair{"backend-2", "node-3"}}) {
    backends += std::string(R"yaml(---
apiVersion: v1
kind: Pod
metadata: {name: )yaml") + name + R"yaml(, labels: {app: hostnames}}
spec:
  nodeSelector: {kubernetes.io/hostname: )yaml" + node + R"yaml(}
  terminationGracePeriodSeconds: 1
  containers:
  - name: hostnames
    image: python:3
    command: [python3, -m, http.server, "9376"]
    workingDir: /probe
    ports: [{containerPort: 9376}]
    readinessProbe:
      exec: {command: [cat, /probe/ready]}
      periodSeconds: 1
    volumeMounts: [{name: probe, mountPath: /probe}]
  volumes:
  - {name: probe, hostPath: {path: )yaml" + scratch + "/" + name + R"yaml(, type: Directory}}
)yaml";
  }
  REQUIRE(pipeline.Submit(R"yaml(apiVersion: v1
kind: Pod
metadata: {name: on-host-port}
spec:
  nodeSelector: {kubernetes.io/hostname: node-2}
  terminationGracePeriodSeconds: 1
  containers:
  - name: hostnames
    image: registry.k8s.io/e2e-test-images/agnhost:2.39
    args: [serve-hostname]
    ports: [{containerPort: 9376, hostPort: 8081}]
---
apiVersion: v1
kind: Pod
metadata: {name: node-2-shell}
spec:
  hostNetwork: true
  nodeSelector: {kubernetes.io/hostname: node-2}
  terminationGracePeriodSeconds: 1
  containers: [{name: shell, image: "registry.k8s.io/e2e-test-images/agnhost:2.39", args: [pause]}]
---
apiVersion: v1
kind: Service
metadata: {name: hostnames}
spec:
  type: NodePort
  selector: {app: hostnames}
  ports: [{name: http, port: 80, targetPort: 9376}]
---
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  nodeSelector: {kubernetes.io/hostname: node-3}
  terminationGracePeriodSeconds: 1
  containers: [{name: client, image: "registry.k8s.io/e2e-test-images/agnhost:2.39", args: [pause]}]
)yaml" + backends).size() == 6);
  INFO(pipeline.Logs());
  if (pipeline.LogsContain("pods have no network of their own")) {
    WARN("skipped: the runtime could make no pod network here (see its log)");
    return;
  }
  for (const char* pod : {"backend-1", "backend-2"}) {
    REQUIRE(pipeline.PodReaches(pod, [](const api::Pod& p) { return model::ConditionIsTrue(p, "Ready"); },
                                std::chrono::seconds(30)));
  }
  REQUIRE(pipeline.PodReaches("client", Pipeline::Running, std::chrono::seconds(30)));
  std::string service_bytes;
  const api::Service* service = pipeline.WaitFor<api::Service>(
      model::ObjectKey(model::Kind("Service"), "default", "hostnames"),
      [](const api::Service& s) { return s.spec() && s.spec()->cluster_ip() && s.spec()->ports() && s.spec()->ports()->size() == 1; },
      &service_bytes);
  REQUIRE(service != nullptr);
  const std::string cluster_ip = service->spec()->cluster_ip()->str();
  const int32_t node_port = service->spec()->ports()->Get(0)->node_port();
  REQUIRE(node_port >= 30000);
  const std::set<std::string> both = {"backend-1", "backend-2"};

  // The cluster IP spreads over both backends: one beside the client, one on another node.
  CHECK(AnswersBecome(pipeline, "client", "http://" + cluster_ip + "/name", both) == both);
  // So does the Service's name, through the cluster DNS at the pod's nameserver.
  CHECK(AnswersBecome(pipeline, "client", "http://hostnames.default.svc.cluster.local/name", both) == both);
  CHECK(AnswersBecome(pipeline, "client", "http://hostnames/name", both) == both);  // the pod's search path
  // A name outside the cluster: past the search path's misses, forwarded to the upstream.
  const auto [resolved, address] = pipeline.Podflow(
      {"exec", "client", "--", "python3", "-c", "import socket; print(socket.gethostbyname('outside.default.svc.example.test'))"});
  CHECK(resolved == 0);
  CHECK(address == "192.0.2.7\n");

  // A backend whose readiness fails leaves the rotation; back when it passes again.
  std::filesystem::remove(scratch + "/backend-1/ready");
  REQUIRE(pipeline.PodReaches("backend-1", [](const api::Pod& p) { return !model::ConditionIsTrue(p, "Ready"); },
                              std::chrono::seconds(20)));
  CHECK(AnswersBecome(pipeline, "client", "http://" + cluster_ip + "/name", {"backend-2"}) ==
        std::set<std::string>{"backend-2"});
  std::ofstream(scratch + "/backend-1/ready") << "ready\n";
  REQUIRE(pipeline.PodReaches("backend-1", [](const api::Pod& p) { return model::ConditionIsTrue(p, "Ready"); },
                              std::chrono::seconds(20)));
  CHECK(AnswersBecome(pipeline, "client", "http://" + cluster_ip + "/name", both) == both);

  // The NodePort on node-1's own address (its InternalIP on the node network).
  const auto internal_ip = [&](const std::string& name) {
    std::string node_bytes;
    const api::Node* node = pipeline.WaitFor<api::Node>(
        model::ObjectKey(model::Kind("Node"), "", name),
        [](const api::Node& n) { return n.status() && n.status()->addresses() && n.status()->addresses()->size() > 0; },
        &node_bytes);
    std::string ip;
    if (node == nullptr) return ip;
    for (const api::NodeAddress* a : *node->status()->addresses()) {
      if (a->type() && a->type()->str() == "InternalIP" && a->address()) ip = a->address()->str();
    }
    return ip;
  };
  const std::string node_ip = internal_ip("node-1");
  REQUIRE_FALSE(node_ip.empty());
  CHECK(node_ip != "127.0.0.1");
  CHECK(AnswersBecome(pipeline, "client", "http://" + node_ip + ":" + std::to_string(node_port) + "/name", both) == both);

  // A hostPort answers on its node's address, through the portmap plugin's DNAT.
  REQUIRE(pipeline.PodReaches("on-host-port", Pipeline::Running, std::chrono::seconds(30)));
  const std::string node_2_ip = internal_ip("node-2");
  REQUIRE_FALSE(node_2_ip.empty());
  CHECK(AnswersBecome(pipeline, "client", "http://" + node_2_ip + ":8081/", {"on-host-port"}) ==
        std::set<std::string>{"on-host-port"});
  // And on the node itself, from a hostNetwork pod there: by its address and by localhost.
  REQUIRE(pipeline.PodReaches("node-2-shell", Pipeline::Running, std::chrono::seconds(30)));
  CHECK(AnswersBecome(pipeline, "node-2-shell", "http://" + node_2_ip + ":8081/", {"on-host-port"}) ==
        std::set<std::string>{"on-host-port"});
  CHECK(AnswersBecome(pipeline, "node-2-shell", "http://127.0.0.1:8081/", {"on-host-port"}) ==
        std::set<std::string>{"on-host-port"});

  // Stopped, podflow leaves no namespace of its network behind.
  const std::string prefix = netns::PrefixFor(pipeline.data_dir());
  CHECK(netns::NamespaceExists(netns::NodeNamespaceName(prefix, "node-1")));
  pipeline.StopAll();
  std::vector<std::string> left;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns", ec)) {
    if (entry.path().filename().string().starts_with(prefix + "-")) left.push_back(entry.path().filename().string());
  }
  CHECK(left.empty());
  std::filesystem::remove_all(scratch);
}


namespace replica_sets {

// The docs' pod-rs.yaml: two bare pods the frontend ReplicaSet selects.
const char* kBarePods = R"(apiVersion: v1
kind: Pod
metadata:
  name: pod1
  labels:
    tier: frontend
spec:
  containers:
  - name: hello1
    image: gcr.io/google-samples/hello-app:2.0
---
apiVersion: v1
kind: Pod
metadata:
  name: pod2
  labels:
    tier: frontend
spec:
  containers:
  - name: hello2
    image: gcr.io/google-samples/hello-app:1.0
)";

// The docs' frontend.yaml, unchanged.
const char* kFrontend = R"(apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: frontend
  labels:
    app: guestbook
    tier: frontend
spec:
  # modify replicas according to your case
  replicas: 3
  selector:
    matchLabels:
      tier: frontend
  template:
    metadata:
      labels:
        tier: frontend
    spec:
      containers:
      - name: php-redis
        image: us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5
)";

// The names of the active pods (not finished, not deleting) in default
// whose controller is the ReplicaSet of uid `uid`.
std::set<std::string> ActiveOwned(Pipeline& pipeline, const std::string& uid) {
  std::set<std::string> out;
  auto list = pipeline.Api().List(model::KindPrefix(model::Kind("Pod"), "default"));
  if (!list.ok()) return out;
  for (const KeyValue& kv : list->kvs) {
    const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(kv.value.data());
    if (pod->metadata()->deletion_timestamp() != nullptr) continue;
    if (pod->status() && (pod->status()->phase() == api::PodPhase::Succeeded ||
                          pod->status()->phase() == api::PodPhase::Failed)) {
      continue;
    }
    if (pod->metadata()->owner_references() == nullptr) continue;
    for (const api::OwnerReference* ref : *pod->metadata()->owner_references()) {
      if (ref->uid()->str() == uid && ref->controller().value_or(false)) out.insert(pod->metadata()->name()->str());
    }
  }
  return out;
}

// Waits until `check` holds of the active owned pods; the last seen.
std::set<std::string> WaitForOwned(Pipeline& pipeline, const std::string& uid,
                                   const std::function<bool(const std::set<std::string>&)>& check) {
  std::set<std::string> owned;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    owned = ActiveOwned(pipeline, uid);
    if (check(owned)) break;
  }
  return owned;
}

bool StatusIs(const api::ReplicaSet& rs, int replicas, int64_t generation) {
  const api::ReplicaSetStatus* s = rs.status();
  return s != nullptr && s->replicas() == replicas && s->ready_replicas() == replicas &&
         s->available_replicas() == replicas && s->fully_labeled_replicas() == replicas &&
         s->observed_generation() == generation;
}

int Count(const std::vector<std::string>& events, const std::string& prefix) {
  return static_cast<int>(std::count_if(events.begin(), events.end(),
                                        [&](const std::string& e) { return e.rfind(prefix, 0) == 0; }));
}

}  // namespace replica_sets

TEST_CASE("ReplicaSet: the docs' frontend adopts the bare pods it selects, replaces a deleted pod, releases a relabeled one and scales",
          "[e2e]") {
  using namespace replica_sets;
  // The docs' images, added to the registry (the fixture's list ends the
  // runtime section, so these lines extend it).
  Pipeline pipeline(false, "", "",
                    "    - {name: gcr.io/google-samples/hello-app, pullMillis: 20}\n"
                    "    - {name: us-docker.pkg.dev/google-samples/containers/gke/gb-frontend, pullMillis: 20}\n");
  pipeline.StartAll();
  INFO(pipeline.Logs());
  // The docs' "non-template pod acquisitions": pods that exist first are
  // adopted, and only the rest is created.
  REQUIRE(pipeline.Submit(kBarePods)[0].first.empty());
  REQUIRE(pipeline.PodReaches("pod1", Running));
  REQUIRE(pipeline.PodReaches("pod2", Running));
  REQUIRE(pipeline.Submit(kFrontend)[0].first.empty());
  const std::string rs_key = model::ObjectKey(model::Kind("ReplicaSet"), "default", "frontend");
  std::string bytes;
  const api::ReplicaSet* rs = pipeline.WaitFor<api::ReplicaSet>(
      rs_key, [](const api::ReplicaSet& r) { return StatusIs(r, 3, 1); }, &bytes);
  REQUIRE(rs != nullptr);
  const std::string uid = rs->metadata()->uid()->str();
  std::set<std::string> owned = ActiveOwned(pipeline, uid);
  REQUIRE(owned.size() == 3);
  CHECK(owned.contains("pod1"));
  CHECK(owned.contains("pod2"));
  std::string created;
  for (const std::string& name : owned) {
    if (name != "pod1" && name != "pod2") created = name;
  }
  // NAME-xxxxx, from the template, owned as kube-controller-manager owns it.
  CHECK(created.size() == std::string("frontend-").size() + 5);
  CHECK(created.rfind("frontend-", 0) == 0);
  std::optional<KeyValue> pod_kv = pipeline.Get(PodKey(created));
  REQUIRE(pod_kv.has_value());
  const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(pod_kv->value.data());
  REQUIRE(pod->metadata()->owner_references()->size() == 1);
  const api::OwnerReference* ref = pod->metadata()->owner_references()->Get(0);
  CHECK(ref->api_version()->str() == "apps/v1");
  CHECK(ref->kind()->str() == "ReplicaSet");
  CHECK(ref->name()->str() == "frontend");
  CHECK(ref->block_owner_deletion().value_or(false));
  CHECK(model::LabelsFromEntries(pod->metadata()->labels()) == model::Labels{{"tier", "frontend"}});
  CHECK(pod->spec()->containers()->Get(0)->image()->str() ==
        "us-docker.pkg.dev/google-samples/containers/gke/gb-frontend:v5");
  std::vector<std::string> events = pipeline.EventsFor("default", "frontend");
  CHECK(Count(events, "Normal SuccessfulCreate: Created pod: frontend-") == 1);

  // A deleted pod is replaced.
  CHECK(pipeline.Podflow({"delete", "pod", "pod1", "--wait=false"}).first == 0);
  owned = WaitForOwned(pipeline, uid, [](const auto& o) { return o.size() == 3 && !o.contains("pod1"); });
  CHECK(owned.size() == 3);
  CHECK_FALSE(owned.contains("pod1"));

  // A pod whose labels no longer match is released (its ownerReference
  // removed, the pod left running) and replaced.
  REQUIRE(pipeline.Podflow({"patch", "pod", "pod2", "-p", R"({"metadata":{"labels":{"tier":"debug"}}})"}).first == 0);
  owned = WaitForOwned(pipeline, uid, [](const auto& o) { return o.size() == 3 && !o.contains("pod2"); });
  CHECK(owned.size() == 3);
  std::string pod2_bytes;
  const api::Pod* released = pipeline.WaitFor<api::Pod>(
      PodKey("pod2"),
      [](const api::Pod& p) {
        return p.metadata()->owner_references() == nullptr || p.metadata()->owner_references()->size() == 0;
      },
      &pod2_bytes);
  REQUIRE(released != nullptr);
  CHECK(released->metadata()->deletion_timestamp() == nullptr);

  // Scaled down to 1, then up to 2: status follows, with the generation.
  REQUIRE(pipeline.Podflow({"patch", "replicaset", "frontend", "-p", R"({"spec":{"replicas":1}})"}).first == 0);
  rs = pipeline.WaitFor<api::ReplicaSet>(rs_key, [](const api::ReplicaSet& r) { return StatusIs(r, 1, 2); }, &bytes);
  REQUIRE(rs != nullptr);
  CHECK(WaitForOwned(pipeline, uid, [](const auto& o) { return o.size() == 1; }).size() == 1);
  events = pipeline.EventsFor("default", "frontend");
  CHECK(Count(events, "Normal SuccessfulDelete: Deleted pod: ") == 2);
  REQUIRE(pipeline.Podflow({"patch", "replicaset", "frontend", "-p", R"({"spec":{"replicas":2}})"}).first == 0);
  rs = pipeline.WaitFor<api::ReplicaSet>(rs_key, [](const api::ReplicaSet& r) { return StatusIs(r, 2, 3); }, &bytes);
  REQUIRE(rs != nullptr);
  CHECK(WaitForOwned(pipeline, uid, [](const auto& o) { return o.size() == 2; }).size() == 2);
  // Never more than asked for: four creations in all (1 + pod1's + pod2's + the scale up).
  events = pipeline.EventsFor("default", "frontend");
  CHECK(Count(events, "Normal SuccessfulCreate: Created pod: frontend-") == 4);
  // kubectl's columns for it.
  auto [got, table] = pipeline.Podflow({"get", "rs", "frontend"});
  INFO(table);
  CHECK(got == 0);
  CHECK(table.find("frontend   2         2         2       ") != std::string::npos);
}

namespace deployments {

// The docs' nginx-deployment.yaml, unchanged (config/manifests/ has it
// with a strategy of its own).
const char* kNginxDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: nginx-deployment
  labels:
    app: nginx
spec:
  replicas: 3
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:1.14.2
        ports:
        - containerPort: 80
)";

std::string Annotation(const api::ObjectMeta* meta, const std::string& key) {
  const model::Labels annotations = model::LabelsFromEntries(meta->annotations());
  const std::string* value = model::FindLabel(annotations, key);
  return value != nullptr ? *value : "<none>";
}

const api::DeploymentCondition* Condition(const api::Deployment& d, const std::string& type) {
  if (d.status() == nullptr || d.status()->conditions() == nullptr) return nullptr;
  for (const api::DeploymentCondition* c : *d.status()->conditions()) {
    if (c->type()->str() == type) return c;
  }
  return nullptr;
}

// Rolled out: every replica updated and available at `generation`.
bool RolledOut(const api::Deployment& d, int replicas, int64_t generation) {
  const api::DeploymentStatus* s = d.status();
  const api::DeploymentCondition* progressing = Condition(d, "Progressing");
  return s != nullptr && s->observed_generation() == generation && s->replicas() == replicas &&
         s->updated_replicas() == replicas && s->ready_replicas() == replicas &&
         s->available_replicas() == replicas && s->unavailable_replicas() == 0 && progressing != nullptr &&
         progressing->reason()->str() == "NewReplicaSetAvailable";
}

struct SetView {
  std::string name, revision;
  int32_t replicas, available;
};

// The ReplicaSets in default at revision `at` (0: now), by name.
std::map<std::string, SetView> SetsAt(Pipeline& pipeline, int64_t at) {
  std::map<std::string, SetView> out;
  auto read = pipeline.Api().Read(
      RangeRequest::Prefix(model::KindPrefix(model::Kind("ReplicaSet"), "default"), Revision(at)));
  if (!read.ok()) return out;
  for (const KeyValue& kv : read->kvs) {
    const api::ReplicaSet* rs = flatbuffers::GetRoot<api::ReplicaSet>(kv.value.data());
    SetView view{rs->metadata()->name()->str(), Annotation(rs->metadata(), "deployment.kubernetes.io/revision"),
                 rs->spec()->replicas().value_or(1), rs->status() ? rs->status()->available_replicas() : 0};
    out[view.name] = view;
  }
  return out;
}

int64_t Head(Pipeline& pipeline) {
  auto read = pipeline.Api().Read(RangeRequest::Prefix("/registry/namespaces/"));
  return read.ok() ? read->revision.value() : 0;
}

}  // namespace deployments

TEST_CASE("Deployment: the docs' nginx-deployment rolls out, updates within maxSurge and maxUnavailable at every revision, rolls back and scales",
          "[e2e]") {
  using namespace deployments;
  Pipeline pipeline(false);
  pipeline.StartAll();
  INFO(pipeline.Logs());
  REQUIRE(pipeline.Submit(kNginxDeployment)[0].first.empty());
  const std::string key = model::ObjectKey(model::Kind("Deployment"), "default", "nginx-deployment");
  std::string bytes;
  const api::Deployment* d =
      pipeline.WaitFor<api::Deployment>(key, [](const api::Deployment& x) { return RolledOut(x, 3, 1); }, &bytes);
  REQUIRE(d != nullptr);
  CHECK(Annotation(d->metadata(), "deployment.kubernetes.io/revision") == "1");
  const api::DeploymentCondition* available = Condition(*d, "Available");
  REQUIRE(available != nullptr);
  CHECK(available->status() == api::ConditionStatus::True);
  CHECK(available->reason()->str() == "MinimumReplicasAvailable");
  CHECK(available->message()->str() == "Deployment has minimum availability.");
  std::map<std::string, SetView> sets = SetsAt(pipeline, 0);
  REQUIRE(sets.size() == 1);
  const std::string first = sets.begin()->first;
  CHECK(first.rfind("nginx-deployment-", 0) == 0);
  CHECK(Condition(*d, "Progressing")->message()->str() == "ReplicaSet \"" + first + "\" has successfully progressed.");
  {
    std::optional<KeyValue> rs_kv = pipeline.Get(model::ObjectKey(model::Kind("ReplicaSet"), "default", first));
    REQUIRE(rs_kv.has_value());
    const api::ReplicaSet* rs = flatbuffers::GetRoot<api::ReplicaSet>(rs_kv->value.data());
    const std::string hash = first.substr(std::string("nginx-deployment-").size());
    CHECK(model::LabelsFromEntries(rs->metadata()->labels()) ==
          model::Labels{{"app", "nginx"}, {"pod-template-hash", hash}});
    CHECK(Annotation(rs->metadata(), "deployment.kubernetes.io/desired-replicas") == "3");
    CHECK(Annotation(rs->metadata(), "deployment.kubernetes.io/max-replicas") == "4");
    CHECK(rs->metadata()->owner_references()->Get(0)->kind()->str() == "Deployment");
    CHECK(replica_sets::ActiveOwned(pipeline, rs->metadata()->uid()->str()).size() == 3);
  }
  CHECK(replica_sets::Count(pipeline.EventsFor("default", "nginx-deployment"),
                            "Normal ScalingReplicaSet: Scaled up replica set " + first + " from 0 to 3") == 1);
  auto [got, table] = pipeline.Podflow({"get", "deployments"});
  CHECK(got == 0);
  CHECK(table.find("nginx-deployment   3/3     3            3           ") != std::string::npos);
  CHECK(pipeline.Podflow({"rollout", "status", "deployment/nginx-deployment"}) ==
        std::pair<int, std::string>{0, "deployment \"nginx-deployment\" successfully rolled out\n"});
  {
    auto [described, text] = pipeline.Podflow({"describe", "deployment", "nginx-deployment"});
    INFO(text);
    CHECK(described == 0);
    CHECK(text.find("Replicas:               3 desired | 3 updated | 3 total | 3 available | 0 unavailable\n") !=
          std::string::npos);
    CHECK(text.find("NewReplicaSet:   " + first + " (3/3 replicas created)\n") != std::string::npos);
    CHECK(text.find("  Normal  ScalingReplicaSet  ") != std::string::npos);
  }
  {
    // Several types at once: a table each, names led by their kind.
    auto [got_kinds, kinds_table] = pipeline.Podflow({"get", "deploy,rs"});
    INFO(kinds_table);
    CHECK(got_kinds == 0);
    CHECK(kinds_table.starts_with("NAME                               READY   UP-TO-DATE   AVAILABLE   AGE\n"
                                  "deployment.apps/nginx-deployment   3/3     3            3           "));
    CHECK(kinds_table.find("\n\nNAME" + std::string(("replicaset.apps/" + first).size() - 1, ' ') +
                           "DESIRED   CURRENT   READY   AGE\nreplicaset.apps/" + first + "   3         3         3       ") !=
          std::string::npos);
    auto [got_all, all_table] = pipeline.Podflow({"get", "all"});
    CHECK(got_all == 0);
    CHECK(all_table.find("\npod/" + first + "-") != std::string::npos);
    CHECK(all_table.find("\ndeployment.apps/nginx-deployment   3/3") != std::string::npos);
  }

  // The docs' image update: a new ReplicaSet, at most 4 pods asked for
  // (maxSurge 25% of 3, rounded up) and at least 3 available (maxUnavailable
  // 25%, rounded down) at every revision of the log.
  const int64_t before = Head(pipeline);
  REQUIRE(pipeline.Podflow({"patch", "deployment", "nginx-deployment", "-p",
                            R"({"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.16.1"}]}}}})"})
              .first == 0);
  d = pipeline.WaitFor<api::Deployment>(key, [](const api::Deployment& x) { return RolledOut(x, 3, 2); }, &bytes);
  REQUIRE(d != nullptr);
  CHECK(Annotation(d->metadata(), "deployment.kubernetes.io/revision") == "2");
  const int64_t after = Head(pipeline);
  int violations = 0;
  for (int64_t r = before; r <= after; ++r) {
    int32_t asked = 0, up = 0;
    std::string detail;
    for (const auto& [name, rs] : SetsAt(pipeline, r)) {
      asked += rs.replicas;
      up += rs.available;
      detail += " " + name + "=" + std::to_string(rs.replicas) + "/" + std::to_string(rs.available);
    }
    if (asked > 4 || up < 3) {
      ++violations;
      UNSCOPED_INFO("revision " << r << ": " << asked << " asked for, " << up << " available:" << detail);
    }
  }
  CHECK(violations == 0);
  sets = SetsAt(pipeline, 0);
  REQUIRE(sets.size() == 2);
  CHECK(sets[first].replicas == 0);  // kept as revision history
  CHECK(sets[first].revision == "1");
  std::string second;
  for (const auto& [name, rs] : sets) {
    if (name != first) second = name;
  }
  CHECK(sets[second].replicas == 3);
  CHECK(sets[second].revision == "2");
  const std::vector<std::string> events = pipeline.EventsFor("default", "nginx-deployment");
  CHECK(replica_sets::Count(events, "Normal ScalingReplicaSet: Scaled up replica set " + second + " from 0 to 1") == 1);
  CHECK(replica_sets::Count(events, "Normal ScalingReplicaSet: Scaled down replica set " + first + " from 3 to 2") == 1);
  CHECK(replica_sets::Count(events, "Normal ScalingReplicaSet: Scaled down replica set " + first + " from 1 to 0") == 1);

  // podflow-replay follows the rollout revision by revision: the old
  // ReplicaSet from 3 down to 0 while the new one comes up to 3, never more
  // than 4 asked for in all ...
  {
    auto [code, out] = RunCommand({Pipeline::Program("podflow-replay"), "--data-dir", pipeline.data_dir(),
                                   "--rollout", "default/nginx-deployment", "-o", "json"},
                                  pipeline.dir());
    INFO(out);
    REQUIRE(code == 0);
    const YAML::Node doc = YAML::Load(out);
    const YAML::Node steps = doc["steps"];
    REQUIRE(steps.size() > 2);
    bool both = false;
    for (const YAML::Node& step : steps) {
      int64_t asked = 0, with_pods = 0;
      for (const YAML::Node& set : step["replicaSets"]) {
        asked += set["replicas"].as<int64_t>();
        with_pods += set["replicas"].as<int64_t>() > 0 ? 1 : 0;
      }
      CHECK(asked <= 4);
      both |= with_pods == 2;
    }
    CHECK(both);
    const YAML::Node last = steps[steps.size() - 1];
    CHECK(last["deploymentRevision"].as<std::string>() == "2");
    CHECK(last["available"].as<int64_t>() == 3);
  }
  // ... and names the controller that made each pod and the one that removed it.
  {
    std::string made, removed;
    for (const std::string& e : pipeline.EventsFor("default", second)) {
      const std::string prefix = "Normal SuccessfulCreate: Created pod: ";
      if (e.rfind(prefix, 0) == 0) made = e.substr(prefix.size());
    }
    for (const std::string& e : pipeline.EventsFor("default", first)) {
      const std::string prefix = "Normal SuccessfulDelete: Deleted pod: ";
      if (e.rfind(prefix, 0) == 0) removed = e.substr(prefix.size());
    }
    REQUIRE_FALSE(made.empty());
    REQUIRE_FALSE(removed.empty());
    auto [code, out] = RunCommand(
        {Pipeline::Program("podflow-replay"), "--data-dir", pipeline.data_dir(), "--pod", "default/" + made},
        pipeline.dir());
    INFO(out);
    CHECK(code == 0);
    CHECK(out.find("ReplicaSet/" + second + " (replicaset-controller): Normal SuccessfulCreate: Created pod: " + made) !=
          std::string::npos);
    std::tie(code, out) = RunCommand(
        {Pipeline::Program("podflow-replay"), "--data-dir", pipeline.data_dir(), "--pod", "default/" + removed},
        pipeline.dir());
    CHECK(out.find("ReplicaSet/" + first + " (replicaset-controller): Normal SuccessfulDelete: Deleted pod: " +
                   removed) != std::string::npos);
  }

  CHECK(pipeline.Podflow({"rollout", "history", "deployment/nginx-deployment"}) ==
        std::pair<int, std::string>{0, "deployment.apps/nginx-deployment \nREVISION  CHANGE-CAUSE\n1         <none>\n"
                                       "2         <none>\n\n"});

  // Undone: the first ReplicaSet is the new one again, at revision 3,
  // remembering it was 1.
  CHECK(pipeline.Podflow({"rollout", "undo", "deployment/nginx-deployment"}) ==
        std::pair<int, std::string>{0, "deployment.apps/nginx-deployment rolled back\n"});
  d = pipeline.WaitFor<api::Deployment>(key, [](const api::Deployment& x) { return RolledOut(x, 3, 3); }, &bytes);
  REQUIRE(d != nullptr);
  CHECK(Annotation(d->metadata(), "deployment.kubernetes.io/revision") == "3");
  sets = SetsAt(pipeline, 0);
  REQUIRE(sets.size() == 2);
  CHECK(sets[first].replicas == 3);
  CHECK(sets[first].revision == "3");
  CHECK(sets[second].replicas == 0);
  std::optional<KeyValue> rs_kv = pipeline.Get(model::ObjectKey(model::Kind("ReplicaSet"), "default", first));
  REQUIRE(rs_kv.has_value());
  CHECK(Annotation(flatbuffers::GetRoot<api::ReplicaSet>(rs_kv->value.data())->metadata(),
                   "deployment.kubernetes.io/revision-history") == "1");
  CHECK(pipeline.Podflow({"rollout", "undo", "deployment/nginx-deployment", "--to-revision", "3"}) ==
        std::pair<int, std::string>{
            0, "deployment.apps/nginx-deployment skipped rollback (current template already matches revision 3)\n"});
  CHECK(pipeline.Podflow({"rollout", "undo", "deployment/nginx-deployment", "--to-revision", "9"}) ==
        std::pair<int, std::string>{1, "error: unable to find specified revision 9 in history\n"});

  // Scaled up and down: the one active ReplicaSet follows.
  CHECK(pipeline.Podflow({"scale", "deployment/nginx-deployment", "--replicas", "5"}) ==
        std::pair<int, std::string>{0, "deployment.apps/nginx-deployment scaled\n"});
  d = pipeline.WaitFor<api::Deployment>(key, [](const api::Deployment& x) { return RolledOut(x, 5, 4); }, &bytes);
  REQUIRE(d != nullptr);
  CHECK(pipeline.Podflow({"scale", "deployment", "nginx-deployment", "--replicas", "2", "--current-replicas", "3"}) ==
        std::pair<int, std::string>{1, "error: Expected replicas to be 3, was 5\n"});
  CHECK(pipeline.Podflow({"scale", "deployment", "nginx-deployment", "--replicas", "2", "--current-replicas", "5"})
            .first == 0);
  d = pipeline.WaitFor<api::Deployment>(key, [](const api::Deployment& x) { return RolledOut(x, 2, 5); }, &bytes);
  REQUIRE(d != nullptr);
  sets = SetsAt(pipeline, 0);
  CHECK(sets[first].replicas == 2);
  CHECK(sets[second].replicas == 0);
}

}  // namespace podflow::e2e

namespace podflow::e2e {

TEST_CASE("Deployment: the controllers stage killed mid-rollout and restarted never creates more pods than asked for",
          "[e2e]") {
  using namespace deployments;
  Pipeline pipeline(true);
  pipeline.StartAll();
  INFO(pipeline.Logs());
  std::string manifest = kNginxDeployment;
  manifest.replace(manifest.find("replicas: 3"), 11, "replicas: 24");
  const int64_t start = Head(pipeline);
  REQUIRE(pipeline.Submit(manifest)[0].first.empty());
  const auto pods_at = [&](int64_t at) {
    int active = 0;
    auto read = pipeline.Api().Read(RangeRequest::Prefix(model::KindPrefix(model::Kind("Pod"), "default"), Revision(at)));
    if (!read.ok()) return -1;
    for (const KeyValue& kv : read->kvs) {
      const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(kv.value.data());
      active += pod->metadata()->deletion_timestamp() == nullptr;
    }
    return active;
  };
  // Killed once some of the pods are made, before all are.
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       pods_at(0) < 4 && std::chrono::steady_clock::now() < deadline;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pipeline.KillStage("controllers");
  const int made = pods_at(0);
  CHECK(made >= 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  pipeline.StartStage("controllers");
  const std::string key = model::ObjectKey(model::Kind("Deployment"), "default", "nginx-deployment");
  std::string bytes;
  const api::Deployment* d = pipeline.WaitFor<api::Deployment>(
      key, [](const api::Deployment& x) { return RolledOut(x, 24, 1); }, &bytes, std::chrono::seconds(40));
  REQUIRE(d != nullptr);
  // At no revision of the log were there more than 24 pods.
  const int64_t end = Head(pipeline);
  int most = 0;
  for (int64_t r = start; r <= end; ++r) most = std::max(most, pods_at(r));
  CHECK(most == 24);
  CHECK(pods_at(0) == 24);
  CHECK(SetsAt(pipeline, 0).size() == 1);  // one ReplicaSet, not one per start
}

namespace garbage_collection {

// How many objects are stored under `prefix` at revision `at` (0: now).
size_t CountAt(Pipeline& pipeline, const std::string& prefix, int64_t at) {
  auto read = pipeline.Api().Read(RangeRequest::Prefix(prefix, Revision(at)));
  REQUIRE(read.ok());
  return read->kvs.size();
}

// Owners' uids of the object stored at `key`, when it is of table T.
template <typename T>
std::vector<std::string> OwnerUids(Pipeline& pipeline, const std::string& key) {
  std::vector<std::string> out;
  std::optional<KeyValue> kv = pipeline.Get(key);
  if (!kv) return out;
  const api::ObjectMeta* meta = flatbuffers::GetRoot<T>(kv->value.data())->metadata();
  if (meta->owner_references() == nullptr) return out;
  for (const api::OwnerReference* ref : *meta->owner_references()) out.push_back(ref->uid()->str());
  return out;
}

}  // namespace garbage_collection

TEST_CASE("Garbage collector: the docs' nginx-deployment deleted with --cascade=orphan keeps its ReplicaSet and pods, "
          "in the background takes them, in the foreground outlives them at every revision",
          "[e2e]") {
  using namespace deployments;
  using namespace garbage_collection;
  Pipeline pipeline(false);
  pipeline.StartAll();
  INFO(pipeline.Logs());
  const std::string key = model::ObjectKey(model::Kind("Deployment"), "default", "nginx-deployment");
  const std::string sets_prefix = model::KindPrefix(model::Kind("ReplicaSet"), "default");
  const std::string pods_prefix = model::KindPrefix(model::Kind("Pod"), "default");
  auto roll_out = [&] {
    REQUIRE(pipeline.Submit(kNginxDeployment)[0].first.empty());
    std::string bytes;
    REQUIRE(pipeline.WaitFor<api::Deployment>(key, [](const api::Deployment& x) { return RolledOut(x, 3, 1); },
                                              &bytes) != nullptr);
    std::map<std::string, SetView> sets = SetsAt(pipeline, 0);
    REQUIRE(sets.size() == 1);
    REQUIRE(CountAt(pipeline, pods_prefix, 0) == 3);
    return sets.begin()->first;
  };
  auto wait_until = [](const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return done();
  };

  // Orphan: the Deployment goes (kubectl waits for it), its ReplicaSet
  // stays without an owner, and keeps its pods.
  std::string set = roll_out();
  const std::string set_key = model::ObjectKey(model::Kind("ReplicaSet"), "default", set);
  auto [code, out] = pipeline.Podflow({"delete", "deployment", "nginx-deployment", "--cascade=orphan"});
  CHECK(code == 0);
  CHECK(out == "deployment.apps \"nginx-deployment\" deleted\n");
  CHECK_FALSE(pipeline.Get(key).has_value());
  CHECK(OwnerUids<api::ReplicaSet>(pipeline, set_key).empty());
  CHECK(CountAt(pipeline, pods_prefix, 0) == 3);
  const std::string set_uid = [&] {
    std::optional<KeyValue> kv = pipeline.Get(set_key);
    REQUIRE(kv.has_value());
    return flatbuffers::GetRoot<api::ReplicaSet>(kv->value.data())->metadata()->uid()->str();
  }();
  auto read = pipeline.Api().Read(RangeRequest::Prefix(pods_prefix));
  REQUIRE(read.ok());
  for (const KeyValue& kv : read->kvs) CHECK(OwnerUids<api::Pod>(pipeline, kv.key) == std::vector<std::string>{set_uid});

  // Background (kubectl's default): the ReplicaSet goes at once, then the
  // collector deletes its pods.
  std::tie(code, out) = pipeline.Podflow({"delete", "rs", set});
  CHECK(code == 0);
  CHECK(wait_until([&] { return CountAt(pipeline, pods_prefix, 0) == 0; }));

  // Foreground: the Deployment waits, deleting, for its ReplicaSet, which
  // waits for its pods; at no revision is an owner gone before them.
  set = roll_out();
  const int64_t from = Head(pipeline);
  std::tie(code, out) =
      pipeline.Podflow({"delete", "deployment", "nginx-deployment", "--cascade=foreground", "--wait=false"});
  CHECK(code == 0);
  std::string bytes;
  const api::Deployment* deleting = pipeline.WaitFor<api::Deployment>(
      key, [](const api::Deployment& d) { return d.metadata()->deletion_timestamp() != nullptr; }, &bytes);
  REQUIRE(deleting != nullptr);
  REQUIRE(deleting->metadata()->finalizers() != nullptr);
  CHECK(deleting->metadata()->finalizers()->Get(0)->str() == "foregroundDeletion");
  CHECK(pipeline.WaitForGone(key, std::chrono::seconds(60)));
  CHECK(CountAt(pipeline, sets_prefix, 0) == 0);
  CHECK(CountAt(pipeline, pods_prefix, 0) == 0);
  const int64_t to = Head(pipeline);
  for (int64_t at = from; at <= to; ++at) {
    const size_t deployments = CountAt(pipeline, model::KindPrefix(model::Kind("Deployment"), "default"), at);
    const size_t sets = CountAt(pipeline, sets_prefix, at);
    const size_t pods = CountAt(pipeline, pods_prefix, at);
    INFO("at revision " << at << ": " << deployments << " deployment(s), " << sets << " replica set(s), " << pods
                        << " pod(s)");
    if (deployments == 0) CHECK(sets == 0);
    if (sets == 0) CHECK(pods == 0);
  }
}

namespace jobs {

// The docs' pi Job, unchanged.
const char* kPi = R"yaml(apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl",  "-Mbignum=bpi", "-wle", "print bpi(2000)"]
      restartPolicy: Never
  backoffLimit: 4
)yaml";

const api::JobCondition* JobCondition(const api::Job& job, const std::string& type) {
  if (job.status() == nullptr || job.status()->conditions() == nullptr) return nullptr;
  for (const api::JobCondition* c : *job.status()->conditions()) {
    if (c->type()->str() == type && c->status() == api::ConditionStatus::True) return c;
  }
  return nullptr;
}

// The pods in default whose controller is the Job of `uid`.
std::vector<const api::Pod*> PodsOf(Pipeline& pipeline, const std::string& uid, std::vector<KeyValue>& keep) {
  auto read = pipeline.Api().Read(RangeRequest::Prefix(model::KindPrefix(model::Kind("Pod"), "default")));
  REQUIRE(read.ok());
  keep = std::move(read->kvs);
  std::vector<const api::Pod*> out;
  for (const KeyValue& kv : keep) {
    const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(kv.value.data());
    const auto* refs = pod->metadata()->owner_references();
    if (refs != nullptr && refs->size() == 1 && refs->Get(0)->uid()->str() == uid) out.push_back(pod);
  }
  return out;
}

bool Tracked(const api::Pod& pod) {
  const auto* finalizers = pod.metadata()->finalizers();
  if (finalizers == nullptr) return false;
  return std::any_of(finalizers->begin(), finalizers->end(),
                     [](const flatbuffers::String* f) { return f->str() == "batch.kubernetes.io/job-tracking"; });
}

}  // namespace jobs

TEST_CASE("Job: the docs' pi runs to Complete, a failing Job stops at its backoffLimit, an Indexed Job runs each "
          "index once, and ttlSecondsAfterFinished deletes a finished one",
          "[e2e]") {
  using namespace jobs;
  using replica_sets::Count;
  // perl runs its one-liner for a second and exits 0.
  Pipeline pipeline(false, "", "", "    - {name: perl, tags: [\"5.34.0\"], pullMillis: 20, behavior: {exitAfter: 1s}}\n");
  pipeline.StartAll();
  INFO(pipeline.Logs());
  REQUIRE(pipeline.Submit(kPi)[0].first.empty());
  const std::string pi_key = model::ObjectKey(model::Kind("Job"), "default", "pi");
  std::string bytes;
  const api::Job* pi = pipeline.WaitFor<api::Job>(
      pi_key, [](const api::Job& j) { return JobCondition(j, "Complete") != nullptr; }, &bytes,
      std::chrono::seconds(60));
  REQUIRE(pi != nullptr);
  const api::JobStatus& status = *pi->status();
  CHECK(status.succeeded() == 1);
  CHECK(status.failed() == 0);
  CHECK(status.active() == 0);
  CHECK(status.terminating().value_or(-1) == 0);
  CHECK_FALSE(status.completion_time()->str().empty());
  CHECK(JobCondition(*pi, "Complete")->reason()->str() == "CompletionsReached");
  CHECK(JobCondition(*pi, "Complete")->message()->str() == "Reached expected number of succeeded pods");
  CHECK(JobCondition(*pi, "SuccessCriteriaMet") != nullptr);
  REQUIRE(status.uncounted_terminated_pods() != nullptr);
  CHECK((status.uncounted_terminated_pods()->succeeded() == nullptr ||
         status.uncounted_terminated_pods()->succeeded()->size() == 0));
  const std::string uid = pi->metadata()->uid()->str();
  std::vector<KeyValue> keep;
  std::vector<const api::Pod*> pods = PodsOf(pipeline, uid, keep);
  REQUIRE(pods.size() == 1);
  const api::Pod& pod = *pods[0];
  CHECK(pod.metadata()->name()->str().rfind("pi-", 0) == 0);
  CHECK(pod.status()->phase() == api::PodPhase::Succeeded);
  CHECK_FALSE(Tracked(pod));  // counted, let go
  const model::Labels labels = model::LabelsFromEntries(pod.metadata()->labels());
  CHECK(*model::FindLabel(labels, "job-name") == "pi");
  CHECK(*model::FindLabel(labels, "batch.kubernetes.io/controller-uid") == uid);
  // The Event follows the status it tells of (written with the round's others).
  const auto events_reach = [&](const std::string& job, const std::string& prefix, int count) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::vector<std::string> events = pipeline.EventsFor("default", job);
    while (Count(events, prefix) < count && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      events = pipeline.EventsFor("default", job);
    }
    return events;
  };
  std::vector<std::string> events = events_reach("pi", "Normal Completed: Job completed", 1);
  CHECK(Count(events, "Normal SuccessfulCreate: Created pod: pi-") == 1);
  CHECK(Count(events, "Normal Completed: Job completed") == 1);
  auto [got, table] = pipeline.Podflow({"get", "jobs"});
  INFO(table);
  CHECK(got == 0);
  CHECK(table.starts_with("NAME   STATUS     COMPLETIONS   DURATION   AGE\npi     Complete   1/1   "));

  // A pod that fails every time: backoffLimit 1 allows one more after the
  // first (10 s of back-off between), then the Job fails.
  REQUIRE(pipeline.Submit(R"(apiVersion: batch/v1
kind: Job
metadata: {name: fails}
spec:
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers: [{name: app, image: "busybox:1.28", command: ["sh", "-c", "exit 3"]}]
)")[0].first.empty());
  const api::Job* fails = pipeline.WaitFor<api::Job>(
      model::ObjectKey(model::Kind("Job"), "default", "fails"),
      [](const api::Job& j) { return JobCondition(j, "Failed") != nullptr; }, &bytes, std::chrono::seconds(60));
  REQUIRE(fails != nullptr);
  CHECK(fails->status()->failed() == 2);
  CHECK(fails->status()->succeeded() == 0);
  CHECK(JobCondition(*fails, "Failed")->reason()->str() == "BackoffLimitExceeded");
  CHECK(JobCondition(*fails, "Failed")->message()->str() == "Job has reached the specified backoff limit");
  CHECK(JobCondition(*fails, "FailureTarget") != nullptr);
  CHECK(fails->status()->completion_time() == nullptr);
  CHECK(PodsOf(pipeline, fails->metadata()->uid()->str(), keep).size() == 2);
  events = events_reach("fails", "Warning BackoffLimitExceeded: ", 1);
  CHECK(Count(events, "Normal SuccessfulCreate: Created pod: fails-") == 2);
  CHECK(Count(events, "Warning BackoffLimitExceeded: Job has reached the specified backoff limit") == 1);

  // Indexed: three completions, two at a time, each index once; each pod
  // knows its index. Deleted 3 s after it finishes.
  REQUIRE(pipeline.Submit(R"(apiVersion: batch/v1
kind: Job
metadata: {name: indexed}
spec:
  completions: 3
  parallelism: 2
  completionMode: Indexed
  ttlSecondsAfterFinished: 3
  template:
    spec:
      restartPolicy: Never
      containers: [{name: app, image: "busybox:1.28", command: ["sh", "-c", "echo $JOB_COMPLETION_INDEX; sleep 1"]}]
)")[0].first.empty());
  const std::string indexed_key = model::ObjectKey(model::Kind("Job"), "default", "indexed");
  const api::Job* indexed = pipeline.WaitFor<api::Job>(
      indexed_key, [](const api::Job& j) { return j.status() != nullptr && j.status()->succeeded() == 3; }, &bytes,
      std::chrono::seconds(60));
  REQUIRE(indexed != nullptr);
  CHECK(indexed->status()->completed_indexes()->str() == "0-2");
  const std::string indexed_uid = indexed->metadata()->uid()->str();
  pods = PodsOf(pipeline, indexed_uid, keep);
  std::set<std::string> hostnames;
  for (const api::Pod* p : pods) hostnames.insert(p->spec()->hostname()->str());
  CHECK(hostnames == std::set<std::string>{"indexed-0", "indexed-1", "indexed-2"});
  CHECK(pods.size() == 3);
  // The TTL-after-finished controller deletes it; the collector its pods.
  CHECK(pipeline.WaitForGone(indexed_key, std::chrono::seconds(30)));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!PodsOf(pipeline, indexed_uid, keep).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  CHECK(PodsOf(pipeline, indexed_uid, keep).empty());
}

}  // namespace podflow::e2e

namespace podflow::e2e {
namespace daemon_sets {

// The docs' DaemonSet ("DaemonSet", Create a DaemonSet), unchanged.
const char* kFluentd = R"(apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: fluentd-elasticsearch
  namespace: kube-system
  labels:
    k8s-app: fluentd-logging
spec:
  selector:
    matchLabels:
      name: fluentd-elasticsearch
  template:
    metadata:
      labels:
        name: fluentd-elasticsearch
    spec:
      tolerations:
      # these tolerations are to have the daemonset runnable on control plane nodes
      # remove them if your control plane nodes should not run pods
      - key: node-role.kubernetes.io/control-plane
        operator: Exists
        effect: NoSchedule
      - key: node-role.kubernetes.io/master
        operator: Exists
        effect: NoSchedule
      containers:
      - name: fluentd-elasticsearch
        image: quay.io/fluentd_elasticsearch/fluentd:v2.5.2
        resources:
          limits:
            memory: 200Mi
          requests:
            cpu: 100m
            memory: 200Mi
        volumeMounts:
        - name: varlog
          mountPath: /var/log
      # it may be desirable to set a high enough value for the terminationGracePeriodSeconds
      terminationGracePeriodSeconds: 30
      volumes:
      - name: varlog
        hostPath:
          path: /var/log
)";

// What the test reads of one of the DaemonSet's pods.
struct DaemonPod {
  std::string name, node, hash;
  bool ready = false, deleting = false;
};

// The pods in kube-system whose controller is the DaemonSet of `uid`, at
// revision `at` (0: now).
std::vector<DaemonPod> DaemonPodsAt(Pipeline& pipeline, const std::string& uid, int64_t at = 0) {
  std::vector<DaemonPod> out;
  auto read = pipeline.Api().Read(
      RangeRequest::Prefix(model::KindPrefix(model::Kind("Pod"), "kube-system"), Revision(at)));
  if (!read.ok()) return out;
  for (const KeyValue& kv : read->kvs) {
    const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(kv.value.data());
    const auto* refs = pod->metadata()->owner_references();
    if (refs == nullptr || refs->size() != 1 || refs->Get(0)->uid()->str() != uid) continue;
    const model::Labels labels = model::LabelsFromEntries(pod->metadata()->labels());
    const std::string* hash = model::FindLabel(labels, "controller-revision-hash");
    out.push_back({pod->metadata()->name()->str(), pod->spec()->node_name() ? pod->spec()->node_name()->str() : "",
                   hash != nullptr ? *hash : "", model::ConditionIsTrue(*pod, "Ready"),
                   pod->metadata()->deletion_timestamp() != nullptr});
  }
  return out;
}

// Every count at `nodes`, nothing misscheduled or unavailable, the generation seen.
bool Settled(const api::DaemonSet& ds, int nodes, int64_t generation) {
  const api::DaemonSetStatus* s = ds.status();
  return s != nullptr && s->desired_number_scheduled() == nodes && s->current_number_scheduled() == nodes &&
         s->number_ready() == nodes && s->updated_number_scheduled() == nodes && s->number_available() == nodes &&
         s->number_misscheduled() == 0 && s->number_unavailable() == 0 && s->observed_generation() == generation;
}

}  // namespace daemon_sets

TEST_CASE("DaemonSet: the docs' fluentd-elasticsearch runs one pod on every node, gets one on a node added later and "
          "none on a tainted one, replaces a deleted pod, and rolls out an update within maxUnavailable at every revision",
          "[e2e]") {
  using namespace daemon_sets;
  using replica_sets::Count;
  Pipeline pipeline(false, "", "",
                    "    - {name: quay.io/fluentd_elasticsearch/fluentd, tags: [\"v2.5.2\", \"v2.6.0\"], pullMillis: 20}\n");
  pipeline.StartAll();
  INFO(pipeline.Logs());
  REQUIRE(pipeline.Submit(kFluentd)[0].first.empty());
  const std::string key = model::ObjectKey(model::Kind("DaemonSet"), "kube-system", "fluentd-elasticsearch");
  std::string bytes;
  const api::DaemonSet* ds = pipeline.WaitFor<api::DaemonSet>(
      key, [](const api::DaemonSet& d) { return Settled(d, 3, 1); }, &bytes, std::chrono::seconds(30));
  REQUIRE(ds != nullptr);
  const std::string uid = ds->metadata()->uid()->str();
  std::vector<DaemonPod> pods = DaemonPodsAt(pipeline, uid);
  std::set<std::string> nodes;
  for (const DaemonPod& p : pods) nodes.insert(p.node);
  CHECK(pods.size() == 3);
  CHECK(nodes == std::set<std::string>{"node-1", "node-2", "node-3"});
  const std::string first_hash = pods.at(0).hash;
  CHECK_FALSE(first_hash.empty());
  for (const DaemonPod& p : pods) {
    CHECK(p.name.rfind("fluentd-elasticsearch-", 0) == 0);
    CHECK(p.hash == first_hash);
  }
  {
    // Bound by the scheduler through the node affinity the controller
    // writes, tolerating what every DaemonSet pod tolerates.
    std::optional<KeyValue> kv = pipeline.Get(model::ObjectKey(model::Kind("Pod"), "kube-system", pods[0].name));
    REQUIRE(kv.has_value());
    auto pod = model::Unpack<api::Pod>(kv->value);
    const auto& terms = pod->spec->affinity->node_affinity->required_during_scheduling_ignored_during_execution
                            ->node_selector_terms;
    REQUIRE(terms.size() == 1);
    REQUIRE(terms[0]->match_fields.size() == 1);
    CHECK(terms[0]->match_fields[0]->key == "metadata.name");
    CHECK(terms[0]->match_fields[0]->values == std::vector<std::string>{pods[0].node});
    std::set<std::string> tolerated;
    for (const auto& t : pod->spec->tolerations) {
      tolerated.insert(t->key + ":" + api::EnumNameTaintEffect(t->effect) +
                       (t->toleration_seconds.has_value() ? "+seconds" : ""));
    }
    CHECK(tolerated == std::set<std::string>{"node-role.kubernetes.io/control-plane:NoSchedule",
                                             "node-role.kubernetes.io/master:NoSchedule",
                                             "node.kubernetes.io/not-ready:NoExecute",
                                             "node.kubernetes.io/unreachable:NoExecute",
                                             "node.kubernetes.io/disk-pressure:NoSchedule",
                                             "node.kubernetes.io/memory-pressure:NoSchedule",
                                             "node.kubernetes.io/pid-pressure:NoSchedule",
                                             "node.kubernetes.io/unschedulable:NoSchedule"});
  }
  auto [got, table] = pipeline.Podflow({"get", "daemonsets", "-n", "kube-system"});
  CHECK(got == 0);
  CHECK(table.starts_with("NAME                    DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE\n"
                          "fluentd-elasticsearch   3         3         3       3            3           <none>          "));

  // Two nodes join: KWOK's, tainted NoSchedule (not tolerated), and one untainted.
  std::ifstream in(std::string(PODFLOW_SOURCE_DIR) + "/config/manifests/node-kwok.yaml");
  const std::string kwok((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE_FALSE(kwok.empty());
  std::string late = kwok;
  for (size_t at = late.find("kwok-node-0"); at != std::string::npos; at = late.find("kwok-node-0")) {
    late.replace(at, 11, "late-node");
  }
  late.replace(late.find("  taints:"), late.find("status:") - late.find("  taints:"), "  unschedulable: false\n");
  late.replace(late.find("10.0.0.10"), 9, "10.0.0.11");
  REQUIRE(pipeline.Submit(kwok)[0].first.empty());
  REQUIRE(pipeline.Submit(late)[0].first.empty());
  ds = pipeline.WaitFor<api::DaemonSet>(
      key, [](const api::DaemonSet& d) { return Settled(d, 4, 1); }, &bytes, std::chrono::seconds(30));
  REQUIRE(ds != nullptr);
  pods = DaemonPodsAt(pipeline, uid);
  nodes.clear();
  for (const DaemonPod& p : pods) nodes.insert(p.node);
  CHECK(nodes == std::set<std::string>{"late-node", "node-1", "node-2", "node-3"});

  // A deleted pod is replaced on its node.
  const DaemonPod victim = pods.at(0);
  REQUIRE(pipeline.Podflow({"delete", "pod", victim.name, "-n", "kube-system", "--grace-period=0"}).first == 0);
  std::vector<DaemonPod> after;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       std::chrono::steady_clock::now() < deadline; std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    after = DaemonPodsAt(pipeline, uid);
    const bool replaced = std::ranges::any_of(after, [&](const DaemonPod& p) {
      return p.node == victim.node && p.name != victim.name && p.ready && !p.deleting;
    });
    if (replaced && after.size() == 4) break;
  }
  CHECK(after.size() == 4);
  CHECK(std::ranges::none_of(after, [&](const DaemonPod& p) { return p.name == victim.name; }));

  // The image changes: each node's pod is replaced, at most one node
  // (maxUnavailable 1) without a ready pod at any revision of the log.
  ds = pipeline.WaitFor<api::DaemonSet>(
      key, [](const api::DaemonSet& d) { return Settled(d, 4, 1); }, &bytes, std::chrono::seconds(30));
  REQUIRE(ds != nullptr);
  const int64_t before = deployments::Head(pipeline);
  REQUIRE(pipeline.Podflow({"patch", "daemonset", "fluentd-elasticsearch", "-n", "kube-system", "-p",
                            R"({"spec":{"template":{"spec":{"containers":[{"name":"fluentd-elasticsearch",)"
                            R"("image":"quay.io/fluentd_elasticsearch/fluentd:v2.6.0"}]}}}})"})
              .first == 0);
  ds = pipeline.WaitFor<api::DaemonSet>(
      key, [](const api::DaemonSet& d) { return Settled(d, 4, 2); }, &bytes, std::chrono::seconds(60));
  REQUIRE(ds != nullptr);
  const int64_t end = deployments::Head(pipeline);
  int fewest = 4;
  for (int64_t r = before; r <= end; ++r) {
    std::set<std::string> ready_nodes;
    for (const DaemonPod& p : DaemonPodsAt(pipeline, uid, r)) {
      if (p.ready && !p.deleting) ready_nodes.insert(p.node);
    }
    fewest = std::min(fewest, static_cast<int>(ready_nodes.size()));
  }
  CHECK(fewest == 3);  // one node at a time
  pods = DaemonPodsAt(pipeline, uid);
  CHECK(pods.size() == 4);
  for (const DaemonPod& p : pods) {
    CHECK(p.hash != first_hash);
    CHECK(p.ready);
  }
  std::vector<std::string> events = pipeline.EventsFor("kube-system", "fluentd-elasticsearch");
  CHECK(Count(events, "Normal SuccessfulCreate: Created pod: fluentd-elasticsearch-") >= 9);  // 3 + 1 + 1 + 4
  CHECK(Count(events, "Normal SuccessfulDelete: Deleted pod: fluentd-elasticsearch-") >= 4);
}

}  // namespace podflow::e2e

namespace podflow::e2e {
namespace {

// The docs' CronJob ("Running Automated Tasks with a CronJob"), unchanged.
const char* kHelloCronJob = R"(apiVersion: batch/v1
kind: CronJob
metadata:
  name: hello
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: hello
            image: busybox:1.28
            imagePullPolicy: IfNotPresent
            command:
            - /bin/sh
            - -c
            - date; echo Hello from the Kubernetes cluster
          restartPolicy: OnFailure
)";

}  // namespace

TEST_CASE("CronJob: the docs' hello makes a Job at the next minute, named for it, that runs to Complete and leaves "
          "the active list",
          "[e2e]") {
  using jobs::JobCondition;
  using replica_sets::Count;
  Pipeline pipeline(false);
  pipeline.StartAll();
  INFO(pipeline.Logs());
  REQUIRE(pipeline.Submit(kHelloCronJob)[0].first.empty());
  const std::string key = model::ObjectKey(model::Kind("CronJob"), "default", "hello");
  std::string bytes;
  // The first minute boundary after its creation, at most a minute away.
  const api::CronJob* cj = pipeline.WaitFor<api::CronJob>(
      key,
      [](const api::CronJob& c) {
        return c.status() != nullptr && c.status()->last_successful_time() != nullptr &&
               (c.status()->active() == nullptr || c.status()->active()->size() == 0);
      },
      &bytes, std::chrono::seconds(90));
  REQUIRE(cj != nullptr);
  const std::string scheduled = cj->status()->last_schedule_time()->str();
  std::optional<std::chrono::system_clock::time_point> at = ParseRfc3339(scheduled);
  REQUIRE(at.has_value());
  CHECK(scheduled.substr(17) == "00Z");  // a minute boundary
  const int64_t minutes = std::chrono::floor<std::chrono::minutes>(*at).time_since_epoch().count();
  const std::string job_name = "hello-" + std::to_string(minutes);
  std::optional<KeyValue> job_kv = pipeline.Get(model::ObjectKey(model::Kind("Job"), "default", job_name));
  REQUIRE(job_kv.has_value());
  const api::Job* job = flatbuffers::GetRoot<api::Job>(job_kv->value.data());
  CHECK(JobCondition(*job, "Complete") != nullptr);
  REQUIRE(job->metadata()->owner_references() != nullptr);
  CHECK(job->metadata()->owner_references()->Get(0)->kind()->str() == "CronJob");
  CHECK(job->metadata()->owner_references()->Get(0)->uid()->str() == cj->metadata()->uid()->str());
  CHECK(deployments::Annotation(job->metadata(), "batch.kubernetes.io/cronjob-scheduled-timestamp") == scheduled);
  CHECK(cj->status()->last_successful_time()->str() == job->status()->completion_time()->str());

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::vector<std::string> events = pipeline.EventsFor("default", "hello");
  while (Count(events, "Normal SawCompletedJob: ") < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    events = pipeline.EventsFor("default", "hello");
  }
  CHECK(Count(events, "Normal SuccessfulCreate: Created job " + job_name) == 1);
  CHECK(Count(events, "Normal SawCompletedJob: Saw completed job: " + job_name + ", condition: Complete") >= 1);
  auto [got, table] = pipeline.Podflow({"get", "cronjobs"});
  CHECK(got == 0);
  CHECK(table.starts_with("NAME    SCHEDULE    TIMEZONE   SUSPEND   ACTIVE   LAST SCHEDULE   AGE\n"
                          "hello   * * * * *   <none>     False     0        "));
}

}  // namespace podflow::e2e
