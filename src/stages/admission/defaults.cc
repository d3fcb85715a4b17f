// Defaulting on create, as kube-apiserver's SetDefaults_* and mutating
// plugins do it.
#include "stages/admission/defaults.h"

#include "model/conditions.h"

#include <algorithm>
#include <map>

#include "model/quantity.h"

namespace podflow::admission {
namespace {

// SetDefaults_Probe and SetDefaults_HTTPGetAction.
void DefaultHttpGet(std::unique_ptr<api::HTTPGetActionT>& action) {
  if (!action) return;
  if (action->path.empty()) action->path = "/";
  if (action->scheme == api::URIScheme::Unset) action->scheme = api::URIScheme::HTTP;
}

void DefaultProbe(std::unique_ptr<api::ProbeT>& probe) {
  if (!probe) return;
  if (probe->timeout_seconds == 0) probe->timeout_seconds = 1;
  if (probe->period_seconds == 0) probe->period_seconds = 10;
  if (probe->success_threshold == 0) probe->success_threshold = 1;
  if (probe->failure_threshold == 0) probe->failure_threshold = 3;
  DefaultHttpGet(probe->http_get);
}

// SetDefaults_Pod: a resource with a limit and no request requests its limit.
void DefaultRequestsFromLimits(api::ContainerT& c) {
  if (!c.resources || c.resources->limits.empty()) return;
  AddMissing(c.resources->requests, c.resources->limits);
}

void DefaultContainer(api::ContainerT& c, bool host_network) {
  if (c.image_pull_policy == api::PullPolicy::Unset)
    c.image_pull_policy = DefaultPullPolicy(c.image);
  if (c.termination_message_path.empty()) c.termination_message_path = "/dev/termination-log";
  if (c.termination_message_policy == api::TerminationMessagePolicy::Unset) {
    c.termination_message_policy = api::TerminationMessagePolicy::File;
  }
  for (auto& port : c.ports) {
    if (port->protocol == api::Protocol::Unset) port->protocol = api::Protocol::TCP;
    if (host_network && port->host_port == 0) port->host_port = port->container_port;
  }
  DefaultProbe(c.liveness_probe);
  DefaultProbe(c.readiness_probe);
  DefaultProbe(c.startup_probe);
  if (c.lifecycle) {
    if (c.lifecycle->post_start) DefaultHttpGet(c.lifecycle->post_start->http_get);
    if (c.lifecycle->pre_stop) DefaultHttpGet(c.lifecycle->pre_stop->http_get);
  }
}

// Milli-units of cpu and memory with a positive quantity, summed per name.
using Totals = std::map<std::string, int64_t>;
bool IsQosResource(const std::string& name) { return name == "cpu" || name == "memory"; }

void AddPositive(const std::vector<std::unique_ptr<api::QuantityEntryT>>& list, Totals& totals,
                 std::vector<std::string>* found) {
  for (const auto& e : list) {
    if (!IsQosResource(e->key)) continue;
    Result<model::Quantity> q = model::Quantity::Parse(e->value);
    if (!q.ok() || *q <= model::Quantity()) continue;
    totals[e->key] += q->MilliValue();
    if (found) found->push_back(e->key);
  }
}

}  // namespace

void SetEntry(std::vector<std::unique_ptr<api::StringEntryT>>& entries, const std::string& key, std::string value) {
  auto at = std::lower_bound(entries.begin(), entries.end(), key,
                             [](const auto& e, const std::string& k) { return e->key < k; });
  if (at != entries.end() && (*at)->key == key) {
    (*at)->value = std::move(value);
    return;
  }
  auto e = std::make_unique<api::StringEntryT>();
  e->key = key;
  e->value = std::move(value);
  entries.insert(at, std::move(e));
}

std::vector<std::string> AddMissing(std::vector<std::unique_ptr<api::QuantityEntryT>>& list,
                                    const std::vector<std::unique_ptr<api::QuantityEntryT>>& from) {
  std::vector<std::string> added;
  for (const auto& e : from) {
    bool has = std::any_of(list.begin(), list.end(), [&](const auto& x) { return x->key == e->key; });
    if (has) continue;
    list.push_back(std::make_unique<api::QuantityEntryT>(*e));
    added.push_back(e->key);
  }
  // ResourceList is a vector sorted by key (the schema's `key` attribute).
  std::sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a->key < b->key; });
  return added;
}

void DefaultMeta(const model::KindInfo& kind, api::ObjectMetaT& meta, const CreateStamp& stamp,
                 std::mt19937_64& rng) {
  if (meta.name.empty() && !meta.generate_name.empty()) {
    meta.name = GenerateName(meta.generate_name, rng);
  }
  if (kind.namespaced) {
    if (meta.namespace_.empty()) meta.namespace_ = "default";
  } else {
    meta.namespace_.clear();
  }
  // Fields the server owns: whatever the manifest said is replaced.
  meta.uid = stamp.uid;
  meta.creation_timestamp = stamp.creation_timestamp;
  meta.resource_version.clear();
  meta.deletion_timestamp.clear();
  meta.deletion_grace_period_seconds = flatbuffers::nullopt;
}

api::PullPolicy DefaultPullPolicy(std::string_view image) {
  std::string_view name = image;
  bool has_digest = false;
  if (size_t at = name.find('@'); at != std::string_view::npos) {
    has_digest = true;
    name = name.substr(0, at);
  }
  std::string_view tag;
  size_t slash = name.rfind('/');
  size_t colon = name.rfind(':');
  // A colon before the last slash is a registry port, not a tag.
  if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    tag = name.substr(colon + 1);
  }
  if (tag.empty() && !has_digest) tag = "latest";
  return tag == "latest" ? api::PullPolicy::Always : api::PullPolicy::IfNotPresent;
}

std::map<std::string, model::Quantity> PodResources(const api::PodSpecT& spec, bool limits) {
  using Totals = std::map<std::string, model::Quantity>;
  auto add = [limits](Totals& to, const api::ContainerT& c) {
    if (!c.resources) return;
    for (const auto& e : limits ? c.resources->limits : c.resources->requests) {
      if (Result<model::Quantity> q = model::Quantity::Parse(e->value); q.ok()) to[e->key] += *q;
    }
  };
  Totals total;
  Totals sidecars;
  Totals init_peak;
  for (const auto& c : spec.init_containers) {
    if (c->restart_policy == "Always") {
      add(sidecars, *c);
      continue;
    }
    Totals with = sidecars;
    add(with, *c);
    for (const auto& [name, q] : with) {
      if (auto it = init_peak.find(name); it == init_peak.end() || it->second < q) init_peak[name] = q;
    }
  }
  for (const auto& c : spec.containers) add(total, *c);
  for (const auto& [name, q] : sidecars) total[name] += q;
  for (const auto& [name, q] : init_peak) {
    if (auto it = total.find(name); it == total.end() || it->second < q) total[name] = q;
  }
  return total;
}

api::PodQOSClass QosClass(const api::PodSpecT& spec) {
  Totals requests;
  Totals limits;
  bool guaranteed = true;
  auto visit = [&](const std::vector<std::unique_ptr<api::ContainerT>>& containers) {
    for (const auto& c : containers) {
      std::vector<std::string> limits_found;
      if (c->resources) {
        AddPositive(c->resources->requests, requests, nullptr);
        AddPositive(c->resources->limits, limits, &limits_found);
      }
      auto found = [&](std::string_view n) {
        return std::find(limits_found.begin(), limits_found.end(), n) != limits_found.end();
      };
      if (!found("cpu") || !found("memory")) guaranteed = false;
    }
  };
  visit(spec.containers);
  visit(spec.init_containers);
  if (requests.empty() && limits.empty()) return api::PodQOSClass::BestEffort;
  if (guaranteed) {
    for (const auto& [name, value] : requests) {
      auto it = limits.find(name);
      if (it == limits.end() || it->second != value) {
        guaranteed = false;
        break;
      }
    }
  }
  if (guaranteed && requests.size() == limits.size()) return api::PodQOSClass::Guaranteed;
  return api::PodQOSClass::Burstable;
}

void DefaultPodSpec(api::PodSpecT& spec) {
  if (spec.restart_policy == api::RestartPolicy::Unset)
    spec.restart_policy = api::RestartPolicy::Always;
  if (spec.dns_policy == api::DNSPolicy::Unset) spec.dns_policy = api::DNSPolicy::ClusterFirst;
  if (!spec.termination_grace_period_seconds.has_value()) {
    spec.termination_grace_period_seconds = int64_t{30};
  }
  Ensure(spec.security_context);
  if (spec.scheduler_name.empty()) spec.scheduler_name = "default-scheduler";
  for (auto& c : spec.init_containers) DefaultContainer(*c, spec.host_network);
  for (auto& c : spec.containers) DefaultContainer(*c, spec.host_network);
}

void DefaultPodTemplate(std::unique_ptr<api::PodTemplateSpecT>& tmpl) {
  DefaultPodSpec(Ensure(Ensure(tmpl).spec));
}

void DefaultPod(api::PodT& pod) {
  api::PodSpecT& spec = Ensure(pod.spec);
  DefaultPodSpec(spec);
  if (!spec.enable_service_links.has_value()) spec.enable_service_links = true;
  for (auto& c : spec.init_containers) DefaultRequestsFromLimits(*c);
  for (auto& c : spec.containers) DefaultRequestsFromLimits(*c);
}

void PreparePodForCreate(api::PodT& pod) {
  // A new pod's status is the server's: Pending, with its QoS class.
  pod.status = std::make_unique<api::PodStatusT>();
  pod.status->phase = api::PodPhase::Pending;
  pod.status->qos_class = QosClass(*pod.spec);
  // A gated pod says why it waits, as kube-apiserver marks it on create.
  if (!pod.spec->scheduling_gates.empty()) {
    model::SetCondition(*pod.status,
                        {"PodScheduled", api::ConditionStatus::False, "SchedulingGated",
                         "Scheduling is blocked due to non-empty scheduling gates"},
                        pod.metadata ? pod.metadata->creation_timestamp : std::string());
  }
}

void DefaultPriorityClass(api::PriorityClassT& pc) {
  if (pc.preemption_policy == api::PreemptionPolicy::Unset) {
    pc.preemption_policy = api::PreemptionPolicy::PreemptLowerPriority;
  }
}

void DefaultService(api::ServiceT& service) {
  api::ServiceSpecT& spec = Ensure(service.spec);
  if (spec.type == api::ServiceType::Unset) spec.type = api::ServiceType::ClusterIP;
  if (spec.session_affinity == api::ServiceAffinity::Unset) {
    spec.session_affinity = api::ServiceAffinity::None;
  }
  if (spec.session_affinity == api::ServiceAffinity::ClientIP) {
    auto& client_ip = Ensure(Ensure(spec.session_affinity_config).client_ip);
    if (!client_ip.timeout_seconds.has_value()) client_ip.timeout_seconds = 10800;
  }
  for (auto& port : spec.ports) {
    if (port->protocol == api::Protocol::Unset) port->protocol = api::Protocol::TCP;
    bool unset = !port->target_port || (port->target_port->type == api::IntOrStringType::Int &&
                                        port->target_port->int_val == 0);
    if (unset) {
      port->target_port = std::make_unique<api::IntOrStringT>();
      port->target_port->type = api::IntOrStringType::Int;
      port->target_port->int_val = port->port;
    }
  }
  bool external_name = spec.type == api::ServiceType::ExternalName;
  bool node_ports =
      spec.type == api::ServiceType::NodePort || spec.type == api::ServiceType::LoadBalancer;
  if (node_ports && spec.external_traffic_policy == api::ServiceExternalTrafficPolicy::Unset) {
    spec.external_traffic_policy = api::ServiceExternalTrafficPolicy::Cluster;
  }
  if (spec.type == api::ServiceType::LoadBalancer &&
      !spec.allocate_load_balancer_node_ports.has_value()) {
    spec.allocate_load_balancer_node_ports = true;
  }
  if (!external_name) {
    if (spec.internal_traffic_policy == api::ServiceInternalTrafficPolicy::Unset) {
      spec.internal_traffic_policy = api::ServiceInternalTrafficPolicy::Cluster;
    }
    if (spec.ip_family_policy == api::IPFamilyPolicy::Unset) {
      spec.ip_family_policy = api::IPFamilyPolicy::SingleStack;
    }
    if (spec.ip_families.empty()) spec.ip_families.push_back(api::IPFamily::IPv4);
  }
  if (spec.cluster_ip.empty() && !spec.cluster_ips.empty()) spec.cluster_ip = spec.cluster_ips[0];
  if (spec.cluster_ips.empty() && !spec.cluster_ip.empty())
    spec.cluster_ips.push_back(spec.cluster_ip);
  service.status.reset();  // a new service's status is the server's
}

}  // namespace podflow::admission
