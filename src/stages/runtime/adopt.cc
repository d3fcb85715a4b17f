#include "stages/runtime/adopt.h"

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
    if (node.status()->addresses()) {
      for (const api::NodeAddress* a : *node.status()->addresses()) {
        if (a->type() && a->type()->str() == "InternalIP" && a->address()) {
          def.internal_ip = a->address()->str();
          break;
        }
      }
    }
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

api::NodeT AdoptedNode(const api::Node& stored, const SimNode& node, const ImageCatalog& catalog, SimTime now) {
  api::NodeT built = BuildNode(node, catalog, now);
  std::unique_ptr<api::NodeT> out(stored.UnPack());
  if (!out->spec) out->spec = std::make_unique<api::NodeSpecT>();
  if (out->spec->pod_cidr.empty()) {
    out->spec->pod_cidr = node.pod_cidr.ToString();
    out->spec->pod_cidrs = {out->spec->pod_cidr};
  }
  // The simulated kubelet's view, except what the object says of its own
  // machine: allocatable (capacity minus reservations) and nodeInfo.
  std::unique_ptr<api::NodeStatusT> status = std::move(built.status);
  if (out->status && !out->status->allocatable.empty()) status->allocatable = std::move(out->status->allocatable);
  if (out->status && out->status->node_info) status->node_info = std::move(out->status->node_info);
  out->status = std::move(status);
  return std::move(*out);
}

}  // namespace podflow::runtime
