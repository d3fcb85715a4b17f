#include "stages/runtime/config.h"

#include <set>

#include "model/quantity.h"

namespace podflow::runtime {
namespace {

Status ValidateShape(const NodeShape& shape, const std::string& path,
                     std::map<std::string, std::string>* capacity) {
  for (size_t i = 0; i < shape.taints.size(); ++i) {
    const TaintDef& t = shape.taints[i];
    const std::string at = path + ".taints[" + std::to_string(i) + "]";
    if (t.key.empty()) return Status::Invalid(at + ".key: Required value");
    if (t.effect != "NoSchedule" && t.effect != "PreferNoSchedule" && t.effect != "NoExecute") {
      return Status::Invalid(at + ".effect: Unsupported value: \"" + t.effect +
                             "\": supported values: \"NoSchedule\", \"PreferNoSchedule\", "
                             "\"NoExecute\"");
    }
  }
  *capacity = CapacityDefaults();
  for (const auto& [name, text] : shape.capacity) {
    Result<model::Quantity> q = model::Quantity::Parse(text);
    if (!q.ok()) {
      return Status::Invalid(path + ".capacity." + name + ": " + q.status().message());
    }
    (*capacity)[name] = q->ToString();
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<SimNode>> ResolveNodes(const RuntimeConfig& config) {
  Result<Cidr> cluster = ParseCidr(config.cluster_cidr);
  if (!cluster.ok()) return Status::Invalid("runtime.clusterCIDR: " + cluster.status().message());
  Result<Cidr> node_range = ParseCidr(config.node_ip_range);
  if (!node_range.ok()) {
    return Status::Invalid("runtime.nodeIPRange: " + node_range.status().message());
  }

  const ImageCatalog catalog(config.registry);
  // (definition, path) in registration order.
  std::vector<std::pair<NodeDef, std::string>> defs;
  for (size_t i = 0; i < config.nodes.size(); ++i) {
    defs.emplace_back(config.nodes[i], "runtime.nodes[" + std::to_string(i) + "]");
  }
  if (config.node_template) {
    const NodeTemplate& t = *config.node_template;
    if (t.count < 0) return Status::Invalid("runtime.nodeTemplate.count: must be >= 0");
    for (int64_t i = 1; i <= t.count; ++i) {
      defs.emplace_back(NodeDef{t.name_prefix + std::to_string(i), t.shape, "", ""},
                        "runtime.nodeTemplate");
    }
  }

  std::set<std::string> names;
  std::set<Ipv4> claimed_blocks;
  std::set<Ipv4> claimed_ips;
  std::vector<SimNode> out;
  out.reserve(defs.size());
  for (const auto& [def, path] : defs) {
    SimNode node;
    node.name = def.name;
    if (node.name.empty()) return Status::Invalid(path + ".name: Required value");
    if (!names.insert(node.name).second) {
      return Status::Invalid(path + ".name: Duplicate value: \"" + node.name + "\"");
    }
    node.labels = def.shape.labels;
    node.taints = def.shape.taints;
    node.images = def.shape.images;
    node.type = def.shape.type.empty() ? config.type
                : def.shape.type == "process" ? RuntimeType::kProcess
                                              : RuntimeType::kSimulated;
    for (size_t j = 0; j < node.images.size(); ++j) {
      if (!catalog.Resolve(node.images[j])) {
        return Status::Invalid(path + ".images[" + std::to_string(j) + "]: image \"" +
                               node.images[j] + "\" is not in runtime.registry");
      }
    }
    PODFLOW_RETURN_IF_ERROR(ValidateShape(def.shape, path, &node.capacity));
    if (!def.pod_cidr.empty()) {
      Result<Cidr> c = ParseCidr(def.pod_cidr);
      if (!c.ok()) return Status::Invalid(path + ".podCIDR: " + c.status().message());
      if (!claimed_blocks.insert(c->base).second) {
        return Status::Invalid(path + ".podCIDR: " + def.pod_cidr + " is already assigned");
      }
      node.pod_cidr = *c;
    }
    if (!def.internal_ip.empty()) {
      Result<Ipv4> ip = ParseIpv4(def.internal_ip);
      if (!ip.ok()) return Status::Invalid(path + ".internalIP: " + ip.status().message());
      node.internal_ip = *ip;
      node.internal_ip_given = true;
      claimed_ips.insert(*ip);
    }
    out.push_back(std::move(node));
  }

  // Second pass: hand out blocks and addresses in node order.
  uint64_t next_block = 0;
  uint64_t next_ip = 2;  // .0 is the network, .1 the gateway
  for (size_t i = 0; i < out.size(); ++i) {
    SimNode& node = out[i];
    const std::string& path = defs[i].second;
    if (node.pod_cidr.prefix == 0) {
      for (;; ++next_block) {
        Result<Cidr> block = Subnet(*cluster, config.node_cidr_mask_size, next_block);
        if (!block.ok()) {
          return Status::Invalid(path + ": no podCIDR left for node \"" + node.name +
                                 "\": runtime.clusterCIDR " + block.status().message());
        }
        if (claimed_blocks.insert(block->base).second) {
          node.pod_cidr = *block;
          break;
        }
      }
    }
    node.node_network = *node_range;
    // A process node's too: on a pod network it is that node's address
    // there (the runtime gives it this machine's loopback when its pods
    // are on this machine's network).
    if (node.internal_ip == 0) {
      // Skip addresses a node names for itself.
      while (next_ip + 1 < node_range->size() &&
             claimed_ips.contains(static_cast<Ipv4>(node_range->base + next_ip))) {
        ++next_ip;
      }
      if (next_ip + 1 >= node_range->size()) {
        return Status::Invalid(path + ": no InternalIP left in runtime.nodeIPRange " +
                               node_range->ToString());
      }
      node.internal_ip = static_cast<Ipv4>(node_range->base + next_ip++);
    }
  }
  return out;
}

}  // namespace podflow::runtime
