// ResourceQuota: the Kubernetes docs' memory and CPU quota walkthrough, the
// compatibility rule on cpu and memory, scopes, object counts, the recount
// and the quota's own validation.
#include "admission_fixture.h"
#include "stages/admission/quota.h"

namespace podflow::admission {
namespace {

// A quota as the log holds it once counted: admitted (validated), then its
// status counted over `objects` as the quota controller does.
api::ResourceQuotaT Counted(const std::string& manifest, const std::vector<QuotaObject>& objects = {}) {
  AdmissionOutcome admitted = testing::AdmitOne(manifest);
  INFO(admitted.status.message);
  REQUIRE(admitted.admitted());
  api::ResourceQuotaT quota = std::move(*model::Unpack<api::ResourceQuota>(admitted.bytes));
  CHECK(quota.status == nullptr);  // the controller's, never the submitter's
  RecountQuota(quota, objects);
  return quota;
}

// A lister over quotas kept by the test (which it may charge between requests).
ResourceQuotaLister Lister(std::vector<api::ResourceQuotaT>& quotas) {
  return [&quotas](const std::string& ns) -> Result<std::vector<api::ResourceQuotaT>> {
    std::vector<api::ResourceQuotaT> out;
    for (const api::ResourceQuotaT& q : quotas) {
      if (q.metadata->namespace_ == ns) {
        auto copy = model::Unpack<api::ResourceQuota>(model::Pack(q));
        out.push_back(std::move(*copy));
      }
    }
    return out;
  };
}

std::map<std::string, std::string> List(const std::vector<std::unique_ptr<api::QuantityEntryT>>& list) {
  std::map<std::string, std::string> out;
  for (const auto& e : list) out[e->key] = e->value;
  return out;
}

std::vector<AdmissionOutcome> Admit(const std::string& manifest, std::vector<api::ResourceQuotaT>& quotas) {
  Admission admission = testing::TestAdmission();
  AdmitReply reply = admission.Admit(testing::kAdminToken, manifest, {.quotas = Lister(quotas)});
  INFO((reply.failure ? reply.failure->message : ""));
  REQUIRE_FALSE(reply.failure.has_value());
  return std::move(reply.results);
}

// The docs' "Configure Memory and CPU Quotas for a Namespace".
std::string MemCpuQuota() { return testing::ReadManifest("quota-mem-cpu.yaml"); }
std::string DemoPod() { return testing::ReadManifest("quota-mem-cpu-pod.yaml"); }
std::string DemoPod2() { return testing::ReadManifest("quota-mem-cpu-pod-2.yaml"); }

TEST_CASE("ResourceQuota: the docs' memory and CPU quota walkthrough", "[admission][quota]") {
  std::vector<api::ResourceQuotaT> quotas;
  quotas.push_back(Counted(MemCpuQuota()));
  CHECK(List(quotas[0].status->hard) == std::map<std::string, std::string>{
                                            {"limits.cpu", "2"}, {"limits.memory", "2Gi"},
                                            {"requests.cpu", "1"}, {"requests.memory", "1Gi"}});
  CHECK(List(quotas[0].status->used) == std::map<std::string, std::string>{
                                            {"limits.cpu", "0"}, {"limits.memory", "0"},
                                            {"requests.cpu", "0"}, {"requests.memory", "0"}});

  std::vector<AdmissionOutcome> first = Admit(DemoPod(), quotas);
  REQUIRE(first.size() == 1);
  REQUIRE(first[0].admitted());
  CHECK(first[0].quota_keys == std::vector<std::string>{model::ObjectKey(model::Kind("ResourceQuota"), "default",
                                                                         "mem-cpu-demo")});
  // What the stage adds to the stored quota in the pod's write.
  bool charged = false;
  REQUIRE_FALSE(ChargeQuota(quotas[0], model::Kind("Pod"), first[0].quota_usage, &charged).has_value());
  CHECK(charged);
  CHECK(List(quotas[0].status->used) == std::map<std::string, std::string>{
                                            {"limits.cpu", "800m"}, {"limits.memory", "800Mi"},
                                            {"requests.cpu", "400m"}, {"requests.memory", "600Mi"}});

  std::vector<AdmissionOutcome> second = Admit(DemoPod2(), quotas);
  REQUIRE(second.size() == 1);
  CHECK(second[0].status.code == 403);
  CHECK(second[0].status.reason == "Forbidden");
  CHECK(second[0].status.message ==
        "pods \"quota-mem-cpu-demo-2\" is forbidden: exceeded quota: mem-cpu-demo, requested: "
        "requests.memory=700Mi, used: requests.memory=600Mi, limited: requests.memory=1Gi");
  CHECK(second[0].quota_keys.empty());

  // In one request the second pod sees the first one's charge.
  std::vector<api::ResourceQuotaT> fresh;
  fresh.push_back(Counted(MemCpuQuota()));
  std::vector<AdmissionOutcome> both = Admit(DemoPod() + "---\n" + DemoPod2(), fresh);
  REQUIRE(both.size() == 2);
  CHECK(both[0].admitted());
  CHECK(both[1].status.message.find("exceeded quota: mem-cpu-demo, requested: requests.memory=700Mi, used: "
                                    "requests.memory=600Mi") != std::string::npos);
}

TEST_CASE("ResourceQuota: with cpu or memory under quota every container must name them", "[admission][quota]") {
  std::vector<api::ResourceQuotaT> quotas;
  quotas.push_back(Counted(MemCpuQuota()));
  std::vector<AdmissionOutcome> out = Admit(R"(apiVersion: v1
kind: Pod
metadata: {name: bare}
spec:
  initContainers: [{name: setup, image: busybox, resources: {limits: {cpu: 100m, memory: 64Mi}}}]
  containers:
  - {name: web, image: nginx}
  - {name: log, image: busybox, resources: {requests: {cpu: 100m}}}
)",
                                            quotas);
  REQUIRE(out.size() == 1);
  CHECK(out[0].status.code == 403);
  CHECK(out[0].status.message ==
        "pods \"bare\" is forbidden: failed quota: mem-cpu-demo: must specify limits.cpu for: log,web; "
        "limits.memory for: log,web; requests.cpu for: web; requests.memory for: log,web");
  // A quota on the pod count alone asks nothing of the containers.
  std::vector<api::ResourceQuotaT> count_only;
  count_only.push_back(Counted("{apiVersion: v1, kind: ResourceQuota, metadata: {name: count-only}, spec: {hard: {pods: \"1\"}}}"));
  std::vector<AdmissionOutcome> two = Admit("{apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: "
                                            "[{name: c, image: nginx}]}}\n---\n{apiVersion: v1, kind: Pod, metadata: "
                                            "{name: b}, spec: {containers: [{name: c, image: nginx}]}}",
                                            count_only);
  REQUIRE(two.size() == 2);
  CHECK(two[0].admitted());
  CHECK(two[1].status.message ==
        "pods \"b\" is forbidden: exceeded quota: count-only, requested: pods=1, used: pods=1, limited: pods=1");
}

TEST_CASE("ResourceQuota: scopes select the pods a quota tracks", "[admission][quota]") {
  std::vector<api::ResourceQuotaT> quotas;
  quotas.push_back(Counted(R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: best-effort}
spec:
  hard: {pods: "1"}
  scopes: [BestEffort]
)"));
  quotas.push_back(Counted(R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: pods-high}
spec:
  hard: {cpu: "1", pods: "1"}
  scopeSelector:
    matchExpressions:
    - {operator: In, scopeName: PriorityClass, values: [high]}
)"));
  quotas[0].status->used = WriteResourceList({{"pods", model::Quantity::FromUnits(1)}});
  // A best-effort pod counts against the first; a burstable one does not.
  std::vector<AdmissionOutcome> out = Admit(R"(apiVersion: v1
kind: Pod
metadata: {name: idle}
spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: v1
kind: Pod
metadata: {name: sized}
spec: {containers: [{name: c, image: nginx, resources: {requests: {cpu: 100m, memory: 10Mi}}}]}
)",
                                            quotas);
  REQUIRE(out.size() == 2);
  CHECK(out[0].status.message ==
        "pods \"idle\" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1");
  CHECK(out[1].admitted());
  CHECK(out[1].quota_keys.empty());

  // The PriorityClass scope: only pods of class "high" (no class, no quota).
  api::PodT high;
  high.spec = std::make_unique<api::PodSpecT>();
  high.spec->priority_class_name = "high";
  api::PodT none;
  none.spec = std::make_unique<api::PodSpecT>();
  CHECK(QuotaMatches(quotas[1], QuotaObject{model::Kind("Pod"), &high}));
  CHECK_FALSE(QuotaMatches(quotas[1], QuotaObject{model::Kind("Pod"), &none}));
  // Scopes select pods only: a scoped quota never tracks a Service.
  CHECK_FALSE(QuotaMatches(quotas[1], QuotaObject{model::Kind("Service")}));
  // Terminating: an activeDeadlineSeconds.
  api::ResourceQuotaT terminating = Counted(
      "{apiVersion: v1, kind: ResourceQuota, metadata: {name: t}, spec: {hard: {pods: \"5\"}, scopes: [Terminating]}}");
  none.spec->active_deadline_seconds = int64_t{60};
  CHECK(QuotaMatches(terminating, QuotaObject{model::Kind("Pod"), &none}));
  CHECK_FALSE(QuotaMatches(terminating, QuotaObject{model::Kind("Pod"), &high}));
}

TEST_CASE("ResourceQuota: object counts, services and what a pod that ended counts for", "[admission][quota]") {
  std::vector<api::ResourceQuotaT> quotas;
  quotas.push_back(Counted(R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: object-counts}
spec:
  hard: {configmaps: "1", count/secrets: "0", services.nodeports: "1", services: "5"}
)"));
  std::vector<AdmissionOutcome> out = Admit(R"(apiVersion: v1
kind: ConfigMap
metadata: {name: a}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b}
---
apiVersion: v1
kind: Secret
metadata: {name: s}
---
apiVersion: v1
kind: Service
metadata: {name: np}
spec: {type: NodePort, selector: {app: x}, ports: [{port: 80, name: a}, {port: 81, name: b}]}
)",
                                            quotas);
  REQUIRE(out.size() == 4);
  CHECK(out[0].admitted());
  CHECK(out[0].quota_usage.at("count/configmaps") == model::Quantity::FromUnits(1));
  CHECK(out[1].status.message ==
        "configmaps \"b\" is forbidden: exceeded quota: object-counts, requested: configmaps=1, used: configmaps=1, "
        "limited: configmaps=1");
  CHECK(out[2].status.message ==
        "secrets \"s\" is forbidden: exceeded quota: object-counts, requested: count/secrets=1, used: "
        "count/secrets=0, limited: count/secrets=0");
  CHECK(out[3].status.message ==
        "services \"np\" is forbidden: exceeded quota: object-counts, requested: services.nodeports=2, used: "
        "services.nodeports=0, limited: services.nodeports=1");

  // A pod that has ended holds nothing but its place in storage.
  api::PodT done;
  done.spec = std::make_unique<api::PodSpecT>();
  done.status = std::make_unique<api::PodStatusT>();
  done.status->phase = api::PodPhase::Succeeded;
  CHECK(UsageOf(QuotaObject{model::Kind("Pod"), &done}) ==
        ResourceUsage{{"count/pods", model::Quantity::FromUnits(1)}});
}

TEST_CASE("ResourceQuota: the recount sums what the quota tracks, giving back what ended", "[admission][quota]") {
  auto pod = [](std::string cpu, api::PodPhase phase) {
    auto p = std::make_unique<api::PodT>();
    p->spec = std::make_unique<api::PodSpecT>();
    auto c = std::make_unique<api::ContainerT>();
    c->name = "c";
    c->resources = std::make_unique<api::ResourceRequirementsT>();
    auto e = std::make_unique<api::QuantityEntryT>();
    e->key = "cpu";
    e->value = cpu;
    c->resources->requests.push_back(std::move(e));
    p->spec->containers.push_back(std::move(c));
    p->status = std::make_unique<api::PodStatusT>();
    p->status->phase = phase;
    return p;
  };
  auto running = pod("250m", api::PodPhase::Running);
  auto pending = pod("500m", api::PodPhase::Pending);
  auto failed = pod("2", api::PodPhase::Failed);
  api::ResourceQuotaT quota = Counted(
      "{apiVersion: v1, kind: ResourceQuota, metadata: {name: q}, spec: {hard: {requests.cpu: \"2\", pods: \"10\", "
      "count/pods: \"10\"}}}",
      {QuotaObject{model::Kind("Pod"), running.get()}, QuotaObject{model::Kind("Pod"), pending.get()},
       QuotaObject{model::Kind("Pod"), failed.get()}});
  CHECK(List(quota.status->used) ==
        std::map<std::string, std::string>{{"count/pods", "3"}, {"pods", "2"}, {"requests.cpu", "750m"}});
  CHECK(KindsCounted(quota) == std::vector<const model::KindInfo*>{&model::Kind("Pod")});
}

TEST_CASE("ResourceQuota: a quota's own validation", "[admission][quota]") {
  auto refused = [](const std::string& spec) {
    AdmissionOutcome out =
        testing::AdmitOne("{apiVersion: v1, kind: ResourceQuota, metadata: {name: q}, spec: " + spec + "}");
    return out.status.message;
  };
  CHECK(refused("{hard: {services: \"1\"}, scopes: [BestEffort]}") ==
        "ResourceQuota \"q\" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{\"BestEffort\"}: "
        "unsupported scope applied to resource");
  CHECK(refused("{hard: {pods: \"1\"}, scopes: [Terminating, NotTerminating]}") ==
        "ResourceQuota \"q\" is invalid: spec.scopes: Invalid value: []core.ResourceQuotaScope{\"Terminating\", "
        "\"NotTerminating\"}: conflicting scopes");
  CHECK(refused("{hard: {pods: \"-1\", cpu: \"-500m\"}}") ==
        "ResourceQuota \"q\" is invalid: [spec.hard[cpu]: Invalid value: \"-500m\": must be greater than or equal "
        "to 0, spec.hard[pods]: Invalid value: \"-1\": must be greater than or equal to 0]");
  CHECK(refused("{hard: {pods: 1500m}}") ==
        "ResourceQuota \"q\" is invalid: spec.hard[pods]: Invalid value: \"1500m\": must be an integer");
  CHECK(refused("{hard: {pods: \"1\"}, scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In}]}}") ==
        "ResourceQuota \"q\" is invalid: spec.scopeSelector.matchExpressions.values: Required value: must be at "
        "least one value when `operator` is 'In' or 'NotIn' for scope selector");
  CHECK(refused("{hard: {pods: \"1\"}, scopeSelector: {matchExpressions: [{scopeName: CrossNamespacePodAffinity, "
                "operator: DoesNotExist}]}}") ==
        "ResourceQuota \"q\" is invalid: spec.scopeSelector.matchExpressions.operator: Invalid value: "
        "\"DoesNotExist\": must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
        "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
        "ResourceQuotaScopeCrossNamespacePodAffinity");
  CHECK(refused("{hard: {secrets: \"1\"}, scopeSelector: {matchExpressions: [{scopeName: BestEffort, operator: "
                "Exists}]}}") ==
        "ResourceQuota \"q\" is invalid: spec.scopeSelector.matchExpressions: Invalid value: "
        "core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core."
        "ScopedResourceSelectorRequirement{ScopeName:\"BestEffort\", Operator:\"Exists\", Values:[]string(nil)}}}: "
        "unsupported scope applied to resource");
  // A name kube-apiserver does not know for quota is refused, not ignored.
  CHECK(refused("{hard: {cpus: \"1\"}}") ==
        "ResourceQuota \"q\" is invalid: [spec.hard[cpus]: Invalid value: \"cpus\": must be a standard resource type "
        "or fully qualified, spec.hard[cpus]: Invalid value: \"cpus\": must be a standard resource for quota]");
  // Scopes bound the standard resources only: extended and object-count
  // names go with any scope.
  CHECK(testing::AdmitOne("{apiVersion: v1, kind: ResourceQuota, metadata: {name: q}, spec: {hard: {count/pods: \"2\", "
                          "requests.nvidia.com/gpu: \"1\"}, scopes: [BestEffort]}}")
            .admitted());
}

}  // namespace
}  // namespace podflow::admission

namespace podflow::admission {
namespace {

TEST_CASE("ResourceQuota on updates: a Service made NodePort and a claim grown are charged what they add",
          "[admission][quota]") {
  std::vector<api::ResourceQuotaT> quotas;
  quotas.push_back(Counted(R"(apiVersion: v1
kind: ResourceQuota
metadata: {name: storage-and-ports}
spec:
  hard: {services.nodeports: "1", requests.storage: 10Gi, persistentvolumeclaims: "5"}
)"));
  std::vector<AdmissionOutcome> created = Admit(R"(apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80, name: a}, {port: 81, name: b}]}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 4Gi}}
)",
                                                quotas);
  REQUIRE(created.size() == 2);
  REQUIRE(created[0].admitted());
  REQUIRE(created[1].admitted());
  for (const AdmissionOutcome& o : created) {
    bool charged = false;
    REQUIRE_FALSE(ChargeQuota(quotas[0], *o.kind, o.quota_usage, &charged).has_value());
  }
  CHECK(List(quotas[0].status->used).at("requests.storage") == "4Gi");
  Admission admission = testing::TestAdmission();
  ChangeContext context;
  context.cluster.quotas = Lister(quotas);
  auto patch = [&](const AdmissionOutcome& o, const std::string& body) {
    return admission.Patch(*o.kind, "default", o.name, "", model::PatchType::kMerge, body,
                           StoredObject{o.key, o.bytes, 7}, context);
  };

  // Two node ports where the quota has room for one.
  ChangeOutcome nodeport = patch(created[0], R"({"spec":{"type":"NodePort"}})");
  CHECK(nodeport.status.message ==
        "services \"web\" is forbidden: exceeded quota: storage-and-ports, requested: services.nodeports=2, used: "
        "services.nodeports=0, limited: services.nodeports=1");
  // A label adds nothing: nothing to charge.
  ChangeOutcome labelled = patch(created[0], R"({"metadata":{"labels":{"a":"b"}}})");
  CHECK(labelled.ok());
  CHECK(labelled.quota_keys.empty());
  // An unbound claim may not grow; a bound one may, and is charged 4Gi
  // for 4Gi -> 8Gi; 12Gi would add 8Gi over the 6Gi left; less is refused.
  ChangeOutcome unbound = patch(created[1], R"({"spec":{"resources":{"requests":{"storage":"8Gi"}}}})");
  CHECK(unbound.status.message ==
        "PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after creation except "
        "resources.requests and volumeAttributesClassName for bound claims");
  ChangeOutcome bound = admission.Patch(*created[1].kind, "default", "data", "status", model::PatchType::kMerge,
                                        R"({"status":{"phase":"Bound"}})",
                                        StoredObject{created[1].key, created[1].bytes, 7}, context);
  REQUIRE(bound.ok());
  AdmissionOutcome claim = created[1];
  claim.bytes = bound.bytes;
  ChangeOutcome grown = patch(claim, R"({"spec":{"resources":{"requests":{"storage":"8Gi"}}}})");
  INFO(grown.status.message);
  REQUIRE(grown.ok());
  CHECK(grown.quota_keys == std::vector<std::string>{model::ObjectKey(model::Kind("ResourceQuota"), "default",
                                                                      "storage-and-ports")});
  CHECK(grown.quota_usage == ResourceUsage{{"requests.storage", *model::Quantity::Parse("4Gi")}});
  ChangeOutcome too_big = patch(claim, R"({"spec":{"resources":{"requests":{"storage":"12Gi"}}}})");
  CHECK(too_big.status.message ==
        "persistentvolumeclaims \"data\" is forbidden: exceeded quota: storage-and-ports, requested: "
        "requests.storage=8Gi, used: requests.storage=4Gi, limited: requests.storage=10Gi");
  ChangeOutcome shrunk = patch(claim, R"({"spec":{"resources":{"requests":{"storage":"1Gi"}}}})");
  CHECK(shrunk.status.message ==
        "PersistentVolumeClaim \"data\" is invalid: spec.resources.requests.storage: Forbidden: field can not be "
        "less than previous value");
}

}  // namespace
}  // namespace podflow::admission
