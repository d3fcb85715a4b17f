#include "stages/runtime/adopt.h"

#include <algorithm>
#include <set>

#include "model/conditions.h"
#include "stages/runtime/node_object.h"

namespace podflow::runtime {

NodeDef NodeDefFromNode(const api::Node& node) {
  NodeDef def;
  if (node.metadata() && node.metadata()->name()) def.name = node.metadata()->name()->str();
  if (node.metadata() && node.metadata()->labels()) {
    for (const api::StringEntry* e : *node.metadata()->labels()) {
      if (e->key()) def.shape.labels[e->key()->str()] = e->value() ? e->value()->str() : "";
    }
  }
  if (node.spec()) {
    if (node.spec()->taints()) {
      for (const api::Taint* t : *node.spec()->taints()) {
        def.shape.taints.push_back(TaintDef{t->key() ? t->key()->str() : "", t->value() ? t->value()->str() : "",
                                            api::EnumNameTaintEffect(t->effect())});
      }
    }
    if (node.spec()->pod_cidr()) def.pod_cidr = node.spec()->pod_cidr()->str();
  }
  if (node.status()) {
    if (node.status()->capacity()) {
      for (const api::QuantityEntry* q : *node.status()->capacity()) {
        if (q->key() && q->value()) def.shape.capacity[q->key()->str()] = q->value()->str();
      }
    }
    // A resource given only as allocatable has at least that capacity.
    if (node.status()->allocatable()) {
      for (const api::QuantityEntry* q : *node.status()->allocatable()) {
        if (q->key() && q->value()) def.shape.capacity.try_emplace(q->key()->str(), q->value()->str());
      }
    }
    def.internal_ip = InternalIpOf(node);
  }
  return def;
}

NodeDef NodeDefFromSim(const SimNode& node) {
  return NodeDef{node.name, NodeShape{node.labels, node.taints, node.capacity, node.images}, node.pod_cidr.ToString(),
                 FormatIpv4(node.internal_ip)};
}

Result<SimNode> ResolveAdopted(const RuntimeConfig& config, const std::vector<NodeDef>& hosted, const NodeDef& def) {
  RuntimeConfig with = config;
  with.node_template.reset();
  with.nodes = hosted;
  with.nodes.push_back(def);
  Result<std::vector<SimNode>> resolved = ResolveNodes(with);
  if (!resolved.ok()) {
    return Status::Invalid("node \"" + def.name + "\" cannot be adopted: " + resolved.status().message());
  }
  return std::move(resolved->back());
}

namespace {

using Quantities = std::vector<std::unique_ptr<api::QuantityEntryT>>;

// Adds to `into` a copy of each of `from`'s entries whose key it lacks,
// keeping the list in key order.
void AddMissing(Quantities& into, const Quantities& from) {
  for (const auto& q : from) {
    if (std::ranges::none_of(into, [&q](const auto& have) { return have->key == q->key; })) {
      into.push_back(std::make_unique<api::QuantityEntryT>(*q));
    }
  }
  std::ranges::sort(into, {}, [](const auto& q) { return q->key; });
}

bool KubeletOwned(const std::string& type) {
  return std::ranges::find(model::kKubeletNodeConditions, type) != model::kKubeletNodeConditions.end();
}

// The manifest's conditions with the simulated kubelet's. A node the
// manifest says is Ready keeps every condition it gave, and gets the
// kubelet's it lacks; otherwise (as KWOK initializes a node that is not
// Ready) the kubelet's own types are replaced by its values, and the
// others (NetworkUnavailable, custom types) stay. The heartbeat is the
// kubelet's either way.
void MergeConditions(std::vector<std::unique_ptr<api::NodeConditionT>>& given,
                     std::vector<std::unique_ptr<api::NodeConditionT>> sim, SimTime now) {
  const bool ready = std::ranges::any_of(
      given, [](const auto& c) { return c->type == "Ready" && c->status == api::ConditionStatus::True; });
  if (!ready) std::erase_if(given, [](const auto& c) { return KubeletOwned(c->type); });
  const std::string time = FormatRfc3339(now);
  for (auto& c : given) {
    c->last_heartbeat_time = time;
    if (c->last_transition_time.empty()) c->last_transition_time = time;
  }
  for (auto& c : sim) {
    if (std::ranges::none_of(given, [&c](const auto& have) { return have->type == c->type; })) {
      given.push_back(std::move(c));
    }
  }
}

}  // namespace

api::NodeT AdoptedNode(const api::Node& stored, const SimNode& node, const ImageCatalog& catalog, SimTime now) {
  api::NodeT built = BuildNode(node, catalog, now);
  std::unique_ptr<api::NodeT> out(stored.UnPack());
  if (!out->spec) out->spec = std::make_unique<api::NodeSpecT>();
  if (out->spec->pod_cidr.empty()) {
    out->spec->pod_cidr = node.pod_cidr.ToString();
    out->spec->pod_cidrs = {out->spec->pod_cidr};
  }
  // What the manifest says of the machine stays, as a KWOK node's does; the
  // simulated kubelet fills in only what it left out, and owns the heartbeat.
  if (!out->status) out->status = std::make_unique<api::NodeStatusT>();
  api::NodeStatusT& status = *out->status;
  api::NodeStatusT& sim = *built.status;
  // Resources the manifest names keep its amounts; the others get the
  // simulated node's defaults (allocatable: the capacity).
  AddMissing(status.capacity, status.allocatable);
  AddMissing(status.capacity, sim.capacity);
  AddMissing(status.allocatable, status.capacity);
  MergeConditions(status.conditions, std::move(sim.conditions), now);
  const bool has_internal_ip = std::ranges::any_of(
      status.addresses, [](const auto& a) { return a->type == "InternalIP"; });
  if (status.addresses.empty()) {
    status.addresses = std::move(sim.addresses);
  } else if (!has_internal_ip) {
    // The address the simulated kubelet gives its pods as hostIP.
    status.addresses.insert(status.addresses.begin(), std::move(sim.addresses.front()));
  }
  if (!status.daemon_endpoints) status.daemon_endpoints = std::move(sim.daemon_endpoints);
  if (!status.node_info) status.node_info = std::move(sim.node_info);
  return std::move(*out);
}

std::vector<std::string> CachedImages(const api::Node& node, const ImageCatalog& catalog) {
  std::vector<std::string> out;
  std::set<std::string> canonicals;
  if (node.status() == nullptr || node.status()->images() == nullptr) return out;
  for (const api::ContainerImage* image : *node.status()->images()) {
    if (image->names() == nullptr) continue;
    // Every name: a digest and each tag are distinct references a pod may use.
    for (const flatbuffers::String* name : *image->names()) {
      std::optional<ResolvedImage> resolved = catalog.Resolve(name->str());
      if (!resolved || !canonicals.insert(resolved->canonical).second) continue;
      out.push_back(name->str());
    }
  }
  return out;
}

}  // namespace podflow::runtime
