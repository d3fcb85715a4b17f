// Builders for scheduler tests: pods and nodes as the FlatBuffers bytes the
// log stores (object API + model::Pack), and as the PodInfo / NodeInfo the
// scheduler reads. MakePod().Name("a").Cpu("500m").Obj().
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "model/objects.h"
#include "node_generated.h"
#include "pod_generated.h"
#include "scheduler/scheduler.h"

namespace podflow::scheduler::testing {

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

class PodBuilder {
 public:
  PodBuilder() {
    pod_.api_version = "v1";
    pod_.kind = "Pod";
    pod_.metadata = std::make_unique<api::ObjectMetaT>();
    pod_.metadata->namespace_ = "default";
    pod_.spec = std::make_unique<api::PodSpecT>();
    Name("pod");
  }

  PodBuilder& Name(const std::string& name) {
    pod_.metadata->name = name;
    pod_.metadata->uid = "uid-" + name;
    return *this;
  }
  PodBuilder& Uid(const std::string& uid) { pod_.metadata->uid = uid; return *this; }
  PodBuilder& Namespace(const std::string& ns) { pod_.metadata->namespace_ = ns; return *this; }
  PodBuilder& Label(const std::string& k, const std::string& v) {
    PutString(pod_.metadata->labels, k, v);
    return *this;
  }
  PodBuilder& Node(const std::string& node) { pod_.spec->node_name = node; return *this; }
  PodBuilder& SchedulerName(const std::string& s) { pod_.spec->scheduler_name = s; return *this; }
  PodBuilder& Priority(int32_t p) { pod_.spec->priority = p; return *this; }
  PodBuilder& PreemptNever() {
    pod_.spec->preemption_policy = api::PreemptionPolicy::Never;
    return *this;
  }
  PodBuilder& StartTime(const std::string& t) { Status().start_time = t; return *this; }
  PodBuilder& NominatedNode(const std::string& n) { Status().nominated_node_name = n; return *this; }

  // A new regular container with these requests ({} = names none).
  PodBuilder& Container(std::vector<std::pair<std::string, std::string>> requests = {}) {
    pod_.spec->containers.push_back(MakeContainer(requests));
    return *this;
  }
  PodBuilder& InitContainer(std::vector<std::pair<std::string, std::string>> requests,
                            bool sidecar = false) {
    auto c = MakeContainer(requests);
    if (sidecar) c->restart_policy = "Always";
    pod_.spec->init_containers.push_back(std::move(c));
    return *this;
  }
  // A request on the first regular container (created when there is none).
  PodBuilder& Request(const std::string& resource, const std::string& quantity) {
    if (pod_.spec->containers.empty()) Container();
    PutQuantity(First().resources->requests, resource, quantity);
    return *this;
  }
  PodBuilder& Cpu(const std::string& q) { return Request("cpu", q); }
  PodBuilder& Memory(const std::string& q) { return Request("memory", q); }
  PodBuilder& Overhead(const std::string& resource, const std::string& q) {
    PutQuantity(pod_.spec->overhead, resource, q);
    return *this;
  }
  PodBuilder& HostPort(int32_t port, api::Protocol protocol = api::Protocol::Unset,
                       const std::string& host_ip = "") {
    if (pod_.spec->containers.empty()) Container();
    auto p = std::make_unique<api::ContainerPortT>();
    p->container_port = port;
    p->host_port = port;
    p->protocol = protocol;
    p->host_ip = host_ip;
    First().ports.push_back(std::move(p));
    return *this;
  }
  // Adds an entry to spec.topologySpreadConstraints.
  PodBuilder& SpreadConstraint(std::unique_ptr<api::TopologySpreadConstraintT> c) {
    pod_.spec->topology_spread_constraints.push_back(std::move(c));
    return *this;
  }
  // Sets metadata.deletionTimestamp: the pod is being deleted.
  PodBuilder& Deleting() {
    pod_.metadata->deletion_timestamp = "2026-01-01T00:00:00Z";
    return *this;
  }
  // Adds a volume (any source) to spec.volumes.
  PodBuilder& Volume(std::unique_ptr<api::VolumeT> volume) {
    pod_.spec->volumes.push_back(std::move(volume));
    return *this;
  }
  PodBuilder& NodeSelector(const std::string& k, const std::string& v) {
    PutString(pod_.spec->node_selector, k, v);
    return *this;
  }
  PodBuilder& Toleration(const std::string& key, api::TolerationOperator op,
                         const std::string& value, api::TaintEffect effect) {
    auto t = std::make_unique<api::TolerationT>();
    t->key = key;
    t->operator_ = op;
    t->value = value;
    t->effect = effect;
    pod_.spec->tolerations.push_back(std::move(t));
    return *this;
  }
  // The first regular container's image (created when there is none).
  PodBuilder& Image(const std::string& image) {
    if (pod_.spec->containers.empty()) Container();
    First().image = image;
    return *this;
  }
  // A new init container with this image and no requests.
  PodBuilder& InitImage(const std::string& image) {
    auto c = MakeContainer({});
    c->image = image;
    pod_.spec->init_containers.push_back(std::move(c));
    return *this;
  }
  // A limit on the first regular container (created when there is none).
  PodBuilder& Limit(const std::string& resource, const std::string& quantity) {
    if (pod_.spec->containers.empty()) Container();
    PutQuantity(First().resources->limits, resource, quantity);
    return *this;
  }
  PodBuilder& Owner(const std::string& kind, const std::string& uid, bool controller = true) {
    auto o = std::make_unique<api::OwnerReferenceT>();
    o->api_version = kind == "ReplicationController" ? "v1" : "apps/v1";
    o->kind = kind;
    o->name = "owner";
    o->uid = uid;
    o->controller = controller;
    pod_.metadata->owner_references.push_back(std::move(o));
    return *this;
  }
  // Adds a preferred node affinity term.
  PodBuilder& PreferredTerm(int32_t weight, std::vector<Req> expressions, std::vector<Req> fields = {}) {
    auto& spec = *pod_.spec;
    if (!spec.affinity) spec.affinity = std::make_unique<api::AffinityT>();
    if (!spec.affinity->node_affinity) {
      spec.affinity->node_affinity = std::make_unique<api::NodeAffinityT>();
    }
    auto term = std::make_unique<api::PreferredSchedulingTermT>();
    term->weight = weight;
    term->preference = std::make_unique<api::NodeSelectorTermT>();
    for (auto& r : expressions) term->preference->match_expressions.push_back(Requirement(r));
    for (auto& r : fields) term->preference->match_fields.push_back(Requirement(r));
    spec.affinity->node_affinity->preferred_during_scheduling_ignored_during_execution.push_back(
        std::move(term));
    return *this;
  }
  // Adds a required node affinity term (ORed with the others).
  PodBuilder& AffinityTerm(std::vector<Req> expressions, std::vector<Req> fields = {}) {
    auto& required = Required();
    auto term = std::make_unique<api::NodeSelectorTermT>();
    for (auto& r : expressions) term->match_expressions.push_back(Requirement(r));
    for (auto& r : fields) term->match_fields.push_back(Requirement(r));
    required.node_selector_terms.push_back(std::move(term));
    return *this;
  }
  // A required node affinity with no terms at all.
  PodBuilder& EmptyRequiredAffinity() {
    Required();
    return *this;
  }

  // Edits spec.affinity (created when absent): pod affinity terms.
  template <typename F>
  PodBuilder& EditAffinity(F&& edit) {
    if (!pod_.spec->affinity) pod_.spec->affinity = std::make_unique<api::AffinityT>();
    edit(*pod_.spec->affinity);
    return *this;
  }

  std::string Obj() const { return model::Pack(pod_); }
  PodInfo Info() const {
    std::string bytes = Obj();
    auto info = PodInfoFromPod(*flatbuffers::GetRoot<api::Pod>(bytes.data()));
    REQUIRE(info.ok());
    return std::move(info).value();
  }

 private:
  static std::unique_ptr<api::ContainerT> MakeContainer(
      const std::vector<std::pair<std::string, std::string>>& requests) {
    auto c = std::make_unique<api::ContainerT>();
    c->name = "c";
    c->image = "busybox";
    c->resources = std::make_unique<api::ResourceRequirementsT>();
    for (const auto& [k, v] : requests) PutQuantity(c->resources->requests, k, v);
    return c;
  }
  static std::unique_ptr<api::NodeSelectorRequirementT> Requirement(const Req& r) {
    auto out = std::make_unique<api::NodeSelectorRequirementT>();
    out->key = r.key;
    out->operator_ = r.op;
    out->values = r.values;
    return out;
  }
  api::ContainerT& First() { return *pod_.spec->containers.front(); }
  api::PodStatusT& Status() {
    if (!pod_.status) pod_.status = std::make_unique<api::PodStatusT>();
    return *pod_.status;
  }
  api::NodeSelectorT& Required() {
    auto& spec = *pod_.spec;
    if (!spec.affinity) spec.affinity = std::make_unique<api::AffinityT>();
    if (!spec.affinity->node_affinity) {
      spec.affinity->node_affinity = std::make_unique<api::NodeAffinityT>();
    }
    auto& na = *spec.affinity->node_affinity;
    if (!na.required_during_scheduling_ignored_during_execution) {
      na.required_during_scheduling_ignored_during_execution = std::make_unique<api::NodeSelectorT>();
    }
    return *na.required_during_scheduling_ignored_during_execution;
  }

  api::PodT pod_;
};

inline PodBuilder MakePod() { return PodBuilder(); }

class NodeBuilder {
 public:
  NodeBuilder() {
    node_.api_version = "v1";
    node_.kind = "Node";
    node_.metadata = std::make_unique<api::ObjectMetaT>();
    node_.spec = std::make_unique<api::NodeSpecT>();
    node_.status = std::make_unique<api::NodeStatusT>();
    Name("node");
    Allocatable("pods", "110");
  }

  NodeBuilder& Name(const std::string& name) { node_.metadata->name = name; return *this; }
  NodeBuilder& Label(const std::string& k, const std::string& v) {
    PutString(node_.metadata->labels, k, v);
    return *this;
  }
  NodeBuilder& Unschedulable() { node_.spec->unschedulable = true; return *this; }
  NodeBuilder& Taint(const std::string& key, const std::string& value, api::TaintEffect effect) {
    auto t = std::make_unique<api::TaintT>();
    t->key = key;
    t->value = value;
    t->effect = effect;
    node_.spec->taints.push_back(std::move(t));
    return *this;
  }
  NodeBuilder& Allocatable(const std::string& resource, const std::string& q) {
    PutQuantity(node_.status->allocatable, resource, q);
    PutQuantity(node_.status->capacity, resource, q);
    return *this;
  }
  NodeBuilder& Annotation(const std::string& k, const std::string& v) {
    PutString(node_.metadata->annotations, k, v);
    return *this;
  }
  // An entry of status.images.
  NodeBuilder& Image(std::vector<std::string> names, int64_t size_bytes) {
    auto image = std::make_unique<api::ContainerImageT>();
    image->names = std::move(names);
    image->size_bytes = size_bytes;
    node_.status->images.push_back(std::move(image));
    return *this;
  }
  // An entry of status.conditions, e.g. Condition("MemoryPressure", True).
  NodeBuilder& Condition(const std::string& type, api::ConditionStatus status) {
    auto c = std::make_unique<api::NodeConditionT>();
    c->type = type;
    c->status = status;
    node_.status->conditions.push_back(std::move(c));
    return *this;
  }
  NodeBuilder& Cpu(const std::string& q) { return Allocatable("cpu", q); }
  NodeBuilder& Memory(const std::string& q) { return Allocatable("memory", q); }
  NodeBuilder& Pods(const std::string& q) { return Allocatable("pods", q); }

  std::string Obj() const { return model::Pack(node_); }
  NodeInfo Info() const {
    std::string bytes = Obj();
    auto info = NodeInfoFromNode(*flatbuffers::GetRoot<api::Node>(bytes.data()));
    REQUIRE(info.ok());
    return std::move(info).value();
  }

 private:
  api::NodeT node_;
};

inline NodeBuilder MakeNode() { return NodeBuilder(); }

// A node with `pods` already counted on it (their nodeName set to the node).
inline NodeInfo WithPods(NodeInfo node, std::vector<PodInfo> pods) {
  for (auto& p : pods) {
    p.node_name = node.name;
    node.AddPod(std::make_shared<const PodInfo>(std::move(p)));
  }
  return node;
}

inline const CycleState& NoState() {
  static const CycleState state;
  return state;
}

}  // namespace podflow::scheduler::testing
