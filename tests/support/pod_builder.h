// The pod builder every test suite shares, and a fake clock for tests that
// need plain times (model, runtime, status):
//   PodBuilder("nginx").Node("node-1").Container("nginx", "nginx:1.14.2").Obj()
//   PodBuilder().Name("a").Cpu("500m").Label("app", "web").Bytes()
// The building steps live once, in BasicPodBuilder; a suite that reads pods
// in a form of its own (the scheduler's PodInfo) derives a builder that adds
// that one view (tests/unit/scheduler/builders.h).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "model/objects.h"
#include "pod_generated.h"

namespace podflow::testing {

// The clock is a value the test moves.
struct FakeClock {
  SimTime now = FromUnixMillis(1'714'564'800'000);  // 2024-05-01T12:00:00Z
  SimTime Advance(int64_t ms) { return now += SimDuration(ms); }
};

// Sets `key` in a key-sorted quantity list (replacing its value if present).
inline void PutQuantity(std::vector<std::unique_ptr<api::QuantityEntryT>>& list,
                        const std::string& key, const std::string& value) {
  for (auto& e : list) {
    if (e->key == key) {
      e->value = value;
      return;
    }
  }
  auto e = std::make_unique<api::QuantityEntryT>();
  e->key = key;
  e->value = value;
  auto at = list.begin();
  while (at != list.end() && (*at)->key < key) ++at;
  list.insert(at, std::move(e));
}

// Adds `key` to a key-sorted string map (labels, annotations, selectors).
inline void PutString(std::vector<std::unique_ptr<api::StringEntryT>>& list, const std::string& key,
                      const std::string& value) {
  auto e = std::make_unique<api::StringEntryT>();
  e->key = key;
  e->value = value;
  auto at = list.begin();
  while (at != list.end() && (*at)->key < key) ++at;
  list.insert(at, std::move(e));
}

// A requirement for node affinity terms: Req("disktype", In, {"ssd"}).
struct Req {
  std::string key;
  api::NodeSelectorOperator op;
  std::vector<std::string> values;
};

// The requirement as the object API holds it (pod or PersistentVolume terms).
inline std::unique_ptr<api::NodeSelectorRequirementT> NodeRequirement(const Req& r) {
  auto out = std::make_unique<api::NodeSelectorRequirementT>();
  out->key = r.key;
  out->operator_ = r.op;
  out->values = r.values;
  return out;
}

// A v1 Pod in namespace "default" with uid "uid-<name>" and no containers
// until a step adds one. Steps return the derived builder so that a suite's
// own view stays at the end of the chain.
template <typename Self>
class BasicPodBuilder {
 public:
  explicit BasicPodBuilder(const std::string& name = "pod") {
    pod_.api_version = "v1";
    pod_.kind = "Pod";
    pod_.metadata = std::make_unique<api::ObjectMetaT>();
    pod_.metadata->namespace_ = "default";
    pod_.spec = std::make_unique<api::PodSpecT>();
    Name(name);
  }

  // metadata
  Self& Name(const std::string& name) {
    pod_.metadata->name = name;
    pod_.metadata->uid = "uid-" + name;
    return self();
  }
  Self& Uid(const std::string& uid) {
    pod_.metadata->uid = uid;
    return self();
  }
  Self& Namespace(const std::string& ns) {
    pod_.metadata->namespace_ = ns;
    return self();
  }
  Self& Label(const std::string& k, const std::string& v) {
    PutString(pod_.metadata->labels, k, v);
    return self();
  }
  // Sets metadata.deletionTimestamp: the pod is being deleted.
  Self& Deleting() {
    pod_.metadata->deletion_timestamp = "2026-01-01T00:00:00Z";
    return self();
  }
  Self& Owner(const std::string& kind, const std::string& uid, bool controller = true) {
    auto o = std::make_unique<api::OwnerReferenceT>();
    o->api_version = kind == "ReplicationController" ? "v1" : "apps/v1";
    o->kind = kind;
    o->name = "owner";
    o->uid = uid;
    o->controller = controller;
    pod_.metadata->owner_references.push_back(std::move(o));
    return self();
  }

  // containers
  // A new app container named `name` running `image`, no requests.
  Self& Container(const std::string& name, const std::string& image) {
    pod_.spec->containers.push_back(MakeContainer(name, image, {}));
    return self();
  }
  // A new app container "c" (busybox) with these requests ({} = names none).
  Self& Container(const std::vector<std::pair<std::string, std::string>>& requests = {}) {
    pod_.spec->containers.push_back(MakeContainer("c", "busybox", requests));
    return self();
  }
  // A new init container named `name` running `image`.
  Self& Init(const std::string& name, const std::string& image) {
    pod_.spec->init_containers.push_back(MakeContainer(name, image, {}));
    return self();
  }
  // A new sidecar: an init container with restartPolicy Always.
  Self& Sidecar(const std::string& name, const std::string& image) {
    Init(name, image);
    pod_.spec->init_containers.back()->restart_policy = "Always";
    return self();
  }
  // A new init container "c" (busybox) with these requests, a sidecar or not.
  Self& InitContainer(const std::vector<std::pair<std::string, std::string>>& requests,
                      bool sidecar = false) {
    pod_.spec->init_containers.push_back(MakeContainer("c", "busybox", requests));
    if (sidecar) pod_.spec->init_containers.back()->restart_policy = "Always";
    return self();
  }
  // A new init container "c" with this image and no requests.
  Self& InitImage(const std::string& image) { return Init("c", image); }
  // The first app container's image (created when there is none).
  Self& Image(const std::string& image) {
    First().image = image;
    return self();
  }
  // A request on the first app container (created when there is none).
  Self& Request(const std::string& resource, const std::string& quantity) {
    PutQuantity(First().resources->requests, resource, quantity);
    return self();
  }
  Self& Cpu(const std::string& q) { return Request("cpu", q); }
  Self& Memory(const std::string& q) { return Request("memory", q); }
  // A limit on the first app container (created when there is none).
  Self& Limit(const std::string& resource, const std::string& quantity) {
    PutQuantity(First().resources->limits, resource, quantity);
    return self();
  }
  // A hostPort equal to the containerPort on the first app container.
  Self& HostPort(int32_t port, api::Protocol protocol = api::Protocol::Unset,
                 const std::string& host_ip = "") {
    auto p = std::make_unique<api::ContainerPortT>();
    p->container_port = port;
    p->host_port = port;
    p->protocol = protocol;
    p->host_ip = host_ip;
    First().ports.push_back(std::move(p));
    return self();
  }
  // A hostPort equal to the containerPort on the last init container.
  Self& InitHostPort(int32_t port) {
    auto p = std::make_unique<api::ContainerPortT>();
    p->container_port = port;
    p->host_port = port;
    pod_.spec->init_containers.back()->ports.push_back(std::move(p));
    return self();
  }
  // A readiness probe with this initial delay on the last app container.
  Self& ReadinessDelay(int seconds) {
    auto& c = pod_.spec->containers.back();
    c->readiness_probe = std::make_unique<api::ProbeT>();
    c->readiness_probe->initial_delay_seconds = seconds;
    return self();
  }

  // spec
  Self& Node(const std::string& node) {
    pod_.spec->node_name = node;
    return self();
  }
  Self& SchedulerName(const std::string& s) {
    pod_.spec->scheduler_name = s;
    return self();
  }
  Self& Priority(int32_t p) {
    pod_.spec->priority = p;
    return self();
  }
  Self& PreemptNever() {
    pod_.spec->preemption_policy = api::PreemptionPolicy::Never;
    return self();
  }
  Self& Overhead(const std::string& resource, const std::string& q) {
    PutQuantity(pod_.spec->overhead, resource, q);
    return self();
  }
  Self& NodeSelector(const std::string& k, const std::string& v) {
    PutString(pod_.spec->node_selector, k, v);
    return self();
  }
  Self& Toleration(const std::string& key, api::TolerationOperator op, const std::string& value,
                   api::TaintEffect effect) {
    auto t = std::make_unique<api::TolerationT>();
    t->key = key;
    t->operator_ = op;
    t->value = value;
    t->effect = effect;
    pod_.spec->tolerations.push_back(std::move(t));
    return self();
  }
  // Adds an entry to spec.topologySpreadConstraints.
  Self& SpreadConstraint(std::unique_ptr<api::TopologySpreadConstraintT> c) {
    pod_.spec->topology_spread_constraints.push_back(std::move(c));
    return self();
  }
  // Adds a volume (any source) to spec.volumes.
  Self& Volume(std::unique_ptr<api::VolumeT> volume) {
    pod_.spec->volumes.push_back(std::move(volume));
    return self();
  }
  // Adds a preferred node affinity term.
  Self& PreferredTerm(int32_t weight, std::vector<Req> expressions, std::vector<Req> fields = {}) {
    auto term = std::make_unique<api::PreferredSchedulingTermT>();
    term->weight = weight;
    term->preference = std::make_unique<api::NodeSelectorTermT>();
    for (auto& r : expressions) term->preference->match_expressions.push_back(NodeRequirement(r));
    for (auto& r : fields) term->preference->match_fields.push_back(NodeRequirement(r));
    NodeAffinity().preferred_during_scheduling_ignored_during_execution.push_back(std::move(term));
    return self();
  }
  // Adds a required node affinity term (ORed with the others).
  Self& AffinityTerm(std::vector<Req> expressions, std::vector<Req> fields = {}) {
    auto term = std::make_unique<api::NodeSelectorTermT>();
    for (auto& r : expressions) term->match_expressions.push_back(NodeRequirement(r));
    for (auto& r : fields) term->match_fields.push_back(NodeRequirement(r));
    Required().node_selector_terms.push_back(std::move(term));
    return self();
  }
  // A required node affinity with no terms at all.
  Self& EmptyRequiredAffinity() {
    Required();
    return self();
  }
  // Edits spec.affinity (created when absent): pod affinity terms.
  template <typename F>
  Self& EditAffinity(F&& edit) {
    edit(Affinity());
    return self();
  }

  // status
  Self& StartTime(const std::string& t) {
    Status().start_time = t;
    return self();
  }
  Self& NominatedNode(const std::string& n) {
    Status().nominated_node_name = n;
    return self();
  }

  // The pod as the object API's value, shared, or the bytes the log stores.
  api::PodT Obj() const { return pod_; }
  std::shared_ptr<const api::PodT> Shared() const { return std::make_shared<api::PodT>(pod_); }
  std::string Bytes() const { return model::Pack(pod_); }

 private:
  Self& self() { return static_cast<Self&>(*this); }

  static std::unique_ptr<api::ContainerT> MakeContainer(
      const std::string& name, const std::string& image,
      const std::vector<std::pair<std::string, std::string>>& requests) {
    auto c = std::make_unique<api::ContainerT>();
    c->name = name;
    c->image = image;
    c->resources = std::make_unique<api::ResourceRequirementsT>();
    for (const auto& [k, v] : requests) PutQuantity(c->resources->requests, k, v);
    return c;
  }
  api::ContainerT& First() {
    if (pod_.spec->containers.empty()) Container();
    return *pod_.spec->containers.front();
  }
  api::PodStatusT& Status() {
    if (!pod_.status) pod_.status = std::make_unique<api::PodStatusT>();
    return *pod_.status;
  }
  api::AffinityT& Affinity() {
    if (!pod_.spec->affinity) pod_.spec->affinity = std::make_unique<api::AffinityT>();
    return *pod_.spec->affinity;
  }
  api::NodeAffinityT& NodeAffinity() {
    auto& affinity = Affinity();
    if (!affinity.node_affinity) affinity.node_affinity = std::make_unique<api::NodeAffinityT>();
    return *affinity.node_affinity;
  }
  api::NodeSelectorT& Required() {
    auto& na = NodeAffinity();
    if (!na.required_during_scheduling_ignored_during_execution) {
      na.required_during_scheduling_ignored_during_execution = std::make_unique<api::NodeSelectorT>();
    }
    return *na.required_during_scheduling_ignored_during_execution;
  }

  api::PodT pod_;
};

class PodBuilder final : public BasicPodBuilder<PodBuilder> {
 public:
  using BasicPodBuilder::BasicPodBuilder;
};

}  // namespace podflow::testing
