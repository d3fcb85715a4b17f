// `describe node` and `describe service`: kubectl's describeNode and
// describeService.
#include <algorithm>
#include <map>

#include "cli/describe.h"
#include "cli/describe_util.h"
#include "model/objects.h"
#include "model/quantity.h"

namespace podflow::cli {
namespace {

using ResourceList = std::map<std::string, model::Quantity>;

ResourceList ToList(const std::vector<std::unique_ptr<api::QuantityEntryT>>& entries) {
  ResourceList out;
  for (const auto& e : entries) {
    auto q = model::Quantity::Parse(e->value);
    if (q.ok()) out[e->key] = *q;
  }
  return out;
}

// Sums keep the format of the first quantity, as resource.Quantity.Add does.
void AddTo(ResourceList& into, const std::string& name, const model::Quantity& q) {
  auto it = into.find(name);
  if (it == into.end()) {
    into[name] = q;
    return;
  }
  const int64_t milli = it->second.MilliValue() + q.MilliValue();
  into[name] = milli % 1000 == 0 ? model::Quantity::FromUnits(milli / 1000, it->second.format())
                                 : model::Quantity::FromMilli(milli);
}

// resourcehelper.PodRequestsAndLimits: containers summed, each init
// container taken as a floor, overhead added.
void PodRequestsAndLimits(const api::PodT& pod, ResourceList* reqs, ResourceList* limits) {
  if (!pod.spec) return;
  for (const auto& c : pod.spec->containers) {
    if (!c->resources) continue;
    for (const auto& [k, v] : ToList(c->resources->requests)) AddTo(*reqs, k, v);
    for (const auto& [k, v] : ToList(c->resources->limits)) AddTo(*limits, k, v);
  }
  for (const auto& c : pod.spec->init_containers) {
    if (!c->resources) continue;
    for (const auto& [k, v] : ToList(c->resources->requests)) {
      if (!reqs->contains(k) || (*reqs)[k] < v) (*reqs)[k] = v;
    }
    for (const auto& [k, v] : ToList(c->resources->limits)) {
      if (!limits->contains(k) || (*limits)[k] < v) (*limits)[k] = v;
    }
  }
  for (const auto& [k, v] : ToList(pod.spec->overhead)) {
    AddTo(*reqs, k, v);
    if (limits->contains(k)) AddTo(*limits, k, v);
  }
}

std::string Quantity(const ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? "0" : it->second.ToString();
}

int64_t Percent(const ResourceList& list, const std::string& name, const ResourceList& alloc) {
  auto it = list.find(name);
  auto a = alloc.find(name);
  if (it == list.end() || a == alloc.end() || a->second.MilliValue() == 0) return 0;
  return static_cast<int64_t>(static_cast<double>(it->second.MilliValue()) /
                              static_cast<double>(a->second.MilliValue()) * 100);
}

std::string WithPercent(const ResourceList& list, const std::string& name, const ResourceList& alloc) {
  return Quantity(list, name) + " (" + std::to_string(Percent(list, name, alloc)) + "%)";
}

void DescribeNodeResource(DescribeWriter& w, const api::NodeT& node,
                          const std::vector<std::unique_ptr<api::PodT>>& pods, TimePoint now) {
  w.Write(0, "Non-terminated Pods:\t(" + std::to_string(pods.size()) + " in total)\n");
  w.Write(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n");
  w.Write(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n");
  ResourceList allocatable = ToList(node.status->capacity);
  if (!node.status->allocatable.empty()) allocatable = ToList(node.status->allocatable);
  ResourceList total_reqs, total_limits;
  for (const auto& pod : pods) {
    ResourceList reqs, limits;
    PodRequestsAndLimits(*pod, &reqs, &limits);
    for (const auto& [k, v] : reqs) AddTo(total_reqs, k, v);
    for (const auto& [k, v] : limits) AddTo(total_limits, k, v);
    w.Write(1, pod->metadata->namespace_ + "\t" + pod->metadata->name + "\t\t" +
                   WithPercent(reqs, "cpu", allocatable) + "\t" + WithPercent(limits, "cpu", allocatable) +
                   "\t" + WithPercent(reqs, "memory", allocatable) + "\t" +
                   WithPercent(limits, "memory", allocatable) + "\t" +
                   TimestampSince(pod->metadata->creation_timestamp, now) + "\n");
  }
  w.Write(0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n");
  w.Write(1, "Resource\tRequests\tLimits\n");
  w.Write(1, "--------\t--------\t------\n");
  for (const char* r : {"cpu", "memory", "ephemeral-storage"}) {
    w.Write(1, std::string(r) + "\t" + WithPercent(total_reqs, r, allocatable) + "\t" +
                   WithPercent(total_limits, r, allocatable) + "\n");
  }
  std::vector<std::string> huge, ext;
  for (const auto& [name, q] : allocatable) {
    if (name.starts_with("hugepages-")) {
      huge.push_back(name);
    } else if (name != "cpu" && name != "memory" && name != "ephemeral-storage" && name != "pods") {
      ext.push_back(name);
    }
  }
  for (const std::string& r : huge) {
    w.Write(1, r + "\t" + WithPercent(total_reqs, r, allocatable) + "\t" +
                   WithPercent(total_limits, r, allocatable) + "\n");
  }
  for (const std::string& r : ext) {
    w.Write(1, r + "\t" + Quantity(total_reqs, r) + "\t" + Quantity(total_limits, r) + "\n");
  }
}

}  // namespace

std::string DescribeNode(std::string_view node_bytes, std::span<const std::string> pods,
                         std::span<const std::string> events, TimePoint now, std::string_view lease_bytes) {
  std::unique_ptr<api::NodeT> node = model::Unpack<api::Node>(node_bytes);
  if (!node->metadata) node->metadata = std::make_unique<api::ObjectMetaT>();
  if (!node->spec) node->spec = std::make_unique<api::NodeSpecT>();
  if (!node->status) node->status = std::make_unique<api::NodeStatusT>();
  if (!node->status->node_info) node->status->node_info = std::make_unique<api::NodeSystemInfoT>();
  const api::ObjectMetaT& meta = *node->metadata;
  const api::NodeStatusT& status = *node->status;

  DescribeWriter w;
  w.Write(0, "Name:\t" + meta.name + "\n");
  std::string roles = Join(NodeRoles(*node), ",");
  w.Write(0, "Roles:\t" + (roles.empty() ? std::string("<none>") : roles) + "\n");
  PrintLabelsMultiline(w, "Labels", meta.labels);
  PrintAnnotationsMultiline(w, "Annotations", meta.annotations);
  w.Write(0, "CreationTimestamp:\t" + FormatRfc1123Z(meta.creation_timestamp) + "\n");
  PrintTaintsMultiline(w, "Taints", node->spec->taints);
  w.Write(0, std::string("Unschedulable:\t") + (node->spec->unschedulable ? "true" : "false") + "\n");
  if (!lease_bytes.empty()) {
    std::unique_ptr<api::LeaseT> lease = model::Unpack<api::Lease>(lease_bytes);
    const api::LeaseSpecT empty;
    const api::LeaseSpecT& spec = lease->spec ? *lease->spec : empty;
    const auto time_or_unset = [](const std::string& t) { return t.empty() ? std::string("<unset>") : FormatRfc1123Z(t); };
    w.Write(0, "Lease:\n");
    w.Write(1, "HolderIdentity:\t" + (spec.holder_identity.empty() ? std::string("<unset>") : spec.holder_identity) + "\n");
    w.Write(1, "AcquireTime:\t" + time_or_unset(spec.acquire_time) + "\n");
    w.Write(1, "RenewTime:\t" + time_or_unset(spec.renew_time) + "\n");
  }
  if (!status.conditions.empty()) {
    w.Write(0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n");
    w.Write(1, "----\t------\t-----------------\t------------------\t------\t-------\n");
    for (const auto& c : status.conditions) {
      w.Write(1, c->type + " \t" + ConditionStatusName(c->status) + " \t" +
                     FormatRfc1123Z(c->last_heartbeat_time) + " \t" +
                     FormatRfc1123Z(c->last_transition_time) + " \t" + c->reason + " \t" +
                     c->message + "\n");
    }
  }
  w.Write(0, "Addresses:\n");
  for (const auto& a : status.addresses) w.Write(1, a->type + ":\t" + a->address + "\n");
  for (const auto& [title, list] : {std::pair{"Capacity", &status.capacity},
                                    std::pair{"Allocatable", &status.allocatable}}) {
    if (list->empty()) continue;
    w.Write(0, std::string(title) + ":\n");
    std::vector<const api::QuantityEntryT*> sorted;
    for (const auto& e : *list) sorted.push_back(e.get());
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->key < b->key; });
    for (const auto* e : sorted) w.Write(1, e->key + ":\t" + e->value + "\n");
  }
  const api::NodeSystemInfoT& info = *status.node_info;
  w.Write(0, "System Info:\n");
  w.Write(0, "  Machine ID:\t" + info.machine_id + "\n");
  w.Write(0, "  System UUID:\t" + info.system_uuid + "\n");
  w.Write(0, "  Boot ID:\t" + info.boot_id + "\n");
  w.Write(0, "  Kernel Version:\t" + info.kernel_version + "\n");
  w.Write(0, "  OS Image:\t" + info.os_image + "\n");
  w.Write(0, "  Operating System:\t" + info.operating_system + "\n");
  w.Write(0, "  Architecture:\t" + info.architecture + "\n");
  w.Write(0, "  Container Runtime Version:\t" + info.container_runtime_version + "\n");
  w.Write(0, "  Kubelet Version:\t" + info.kubelet_version + "\n");
  w.Write(0, "  Kube-Proxy Version:\t" + info.kube_proxy_version + "\n");
  if (!node->spec->pod_cidr.empty()) w.Write(0, "PodCIDR:\t" + node->spec->pod_cidr + "\n");
  if (!node->spec->pod_cidrs.empty()) w.Write(0, "PodCIDRs:\t" + Join(node->spec->pod_cidrs, ",") + "\n");
  if (!node->spec->provider_id.empty()) w.Write(0, "ProviderID:\t" + node->spec->provider_id + "\n");

  std::vector<std::unique_ptr<api::PodT>> on_node;
  for (const std::string& bytes : pods) {
    auto pod = model::Unpack<api::Pod>(bytes);
    if (!pod->spec || pod->spec->node_name != meta.name) continue;
    if (pod->status && (pod->status->phase == api::PodPhase::Succeeded ||
                        pod->status->phase == api::PodPhase::Failed)) {
      continue;
    }
    if (!pod->metadata) pod->metadata = std::make_unique<api::ObjectMetaT>();
    on_node.push_back(std::move(pod));
  }
  DescribeNodeResource(w, *node, on_node, now);
  // Node events are recorded in the default namespace, so any namespace matches.
  DescribeEvents(w, EventsFor(events, "Node", "", meta.name, meta.uid), now);
  return w.String();
}

std::string DescribeService(std::string_view service_bytes, std::string_view endpoints_bytes,
                            std::span<const std::string> events, TimePoint now) {
  std::unique_ptr<api::ServiceT> svc = model::Unpack<api::Service>(service_bytes);
  if (!svc->metadata) svc->metadata = std::make_unique<api::ObjectMetaT>();
  if (!svc->spec) svc->spec = std::make_unique<api::ServiceSpecT>();
  std::unique_ptr<api::EndpointsT> endpoints;
  if (!endpoints_bytes.empty()) endpoints = model::Unpack<api::Endpoints>(endpoints_bytes);
  const api::ObjectMetaT& meta = *svc->metadata;
  const api::ServiceSpecT& spec = *svc->spec;
  const std::string ns = meta.namespace_.empty() ? "default" : meta.namespace_;

  DescribeWriter w;
  w.Write(0, "Name:\t" + meta.name + "\n");
  w.Write(0, "Namespace:\t" + ns + "\n");
  PrintLabelsMultiline(w, "Labels", meta.labels);
  PrintAnnotationsMultiline(w, "Annotations", meta.annotations);
  w.Write(0, "Selector:\t" + (spec.selector.empty() ? std::string() : FormatLabels(spec.selector)) + "\n");
  const std::string type = spec.type == api::ServiceType::Unset ? "ClusterIP" : api::EnumNameServiceType(spec.type);
  w.Write(0, "Type:\t" + type + "\n");
  if (spec.ip_family_policy != api::IPFamilyPolicy::Unset) {
    w.Write(0, std::string("IP Family Policy:\t") + api::EnumNameIPFamilyPolicy(spec.ip_family_policy) + "\n");
  }
  std::vector<std::string> families;
  for (api::IPFamily f : spec.ip_families) families.push_back(api::EnumNameIPFamily(f));
  w.Write(0, "IP Families:\t" + (families.empty() ? std::string("<none>") : Join(families, ",")) + "\n");
  w.Write(0, "IP:\t" + spec.cluster_ip + "\n");
  w.Write(0, "IPs:\t" + (spec.cluster_ips.empty() ? std::string("<none>") : Join(spec.cluster_ips, ",")) + "\n");
  if (!spec.external_ips.empty()) w.Write(0, "External IPs:\t" + Join(spec.external_ips, ",") + "\n");
  if (!spec.load_balancer_ip.empty()) w.Write(0, "IP:\t" + spec.load_balancer_ip + "\n");
  if (!spec.load_balancer_class.empty()) w.Write(0, "LoadBalancer Class:\t" + spec.load_balancer_class + "\n");
  if (svc->status && svc->status->load_balancer && !svc->status->load_balancer->ingress.empty()) {
    std::vector<std::string> ingress;
    for (const auto& i : svc->status->load_balancer->ingress) ingress.push_back(!i->ip.empty() ? i->ip : i->hostname);
    w.Write(0, "LoadBalancer Ingress:\t" + Join(ingress, ", ") + "\n");
  }
  for (const auto& p : spec.ports) {
    const std::string name = p->name.empty() ? "<unset>" : p->name;
    const std::string proto = ProtocolName(p->protocol);
    w.Write(0, "Port:\t" + name + "\t" + std::to_string(p->port) + "/" + proto + "\n");
    std::string target = p->target_port ? IntOrStringText(p->target_port.get()) : std::to_string(p->port);
    w.Write(0, "TargetPort:\t" + target + "/" + proto + "\n");
    if (p->node_port != 0) {
      w.Write(0, "NodePort:\t" + name + "\t" + std::to_string(p->node_port) + "/" + proto + "\n");
    }
    w.Write(0, "Endpoints:\t" + (endpoints ? FormatEndpoints(*endpoints, &p->name) : std::string("<none>")) + "\n");
  }
  const std::string affinity = spec.session_affinity == api::ServiceAffinity::Unset
                                   ? "None"
                                   : api::EnumNameServiceAffinity(spec.session_affinity);
  w.Write(0, "Session Affinity:\t" + affinity + "\n");
  if (spec.external_traffic_policy != api::ServiceExternalTrafficPolicy::Unset) {
    w.Write(0, std::string("External Traffic Policy:\t") +
                   api::EnumNameServiceExternalTrafficPolicy(spec.external_traffic_policy) + "\n");
  }
  if (spec.internal_traffic_policy != api::ServiceInternalTrafficPolicy::Unset) {
    w.Write(0, std::string("Internal Traffic Policy:\t") +
                   api::EnumNameServiceInternalTrafficPolicy(spec.internal_traffic_policy) + "\n");
  }
  if (spec.health_check_node_port != 0) {
    w.Write(0, "HealthCheck NodePort:\t" + std::to_string(spec.health_check_node_port) + "\n");
  }
  if (!spec.load_balancer_source_ranges.empty()) {
    w.Write(0, "LoadBalancer Source Ranges:\t" + Join(spec.load_balancer_source_ranges, ",") + "\n");
  }
  DescribeEvents(w, EventsFor(events, "Service", ns, meta.name, meta.uid), now);
  return w.String();
}

}  // namespace podflow::cli
