// ResourceQuota's arithmetic (quota.h): the evaluators of pods, services,
// claims and object counts, scope matching, the create check and the recount.
#include "stages/admission/quota.h"

#include <algorithm>
#include <set>
#include <string_view>

#include "base/clock.h"
#include "model/codec.h"
#include "stages/admission/defaults.h"
#include "stages/admission/validation.h"

namespace podflow::admission {
namespace {

constexpr std::string_view kStorageClassSuffix = ".storageclass.storage.k8s.io/";
// The kinds quotas counted by plain name before `count/...` existed.
constexpr std::string_view kLegacyCounts[] = {"services", "secrets", "configmaps", "resourcequotas",
                                               "replicationcontrollers", "persistentvolumeclaims"};
// The compute resources a pod counts both as `X` and `requests.X`.
constexpr std::string_view kRequestAliases[] = {"cpu", "memory", "ephemeral-storage"};
// Quotas on these make every container of a pod name them (kube-apiserver
// keeps this for compatibility; other resources do not need it).
constexpr std::string_view kMustSpecify[] = {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu",
                                              "limits.memory"};

template <typename Range>
bool In(const Range& range, std::string_view name) {
  return std::find(std::begin(range), std::end(range), name) != std::end(range);
}

const model::Quantity kOne = model::Quantity::FromUnits(1);

// `count/<resource>` for the core group, `count/<resource>.<group>` otherwise.
std::string CountName(const model::KindInfo& kind) {
  const std::string_view group = model::ApiGroup(kind);
  return "count/" + std::string(kind.resource) + (group.empty() ? "" : "." + std::string(group));
}

// An extended resource: a domain-prefixed name outside kubernetes.io.
bool Extended(std::string_view name) {
  return name.find('/') != std::string_view::npos && !name.starts_with("kubernetes.io/") &&
         !name.starts_with("requests.") && !name.starts_with("limits.");
}

// Whether a pod still holds what it asked for: not Succeeded or Failed, and
// not deleted longer ago than its grace period.
bool PodHolds(const api::PodT& pod, std::chrono::system_clock::time_point now) {
  if (pod.status && (pod.status->phase == api::PodPhase::Succeeded || pod.status->phase == api::PodPhase::Failed)) {
    return false;
  }
  if (pod.metadata && !pod.metadata->deletion_timestamp.empty() &&
      pod.metadata->deletion_grace_period_seconds.has_value()) {
    if (auto deleted = ParseRfc3339(pod.metadata->deletion_timestamp)) {
      if (now > *deleted + std::chrono::seconds(*pod.metadata->deletion_grace_period_seconds)) return false;
    }
  }
  return true;
}

void PodUsage(const api::PodT& pod, std::chrono::system_clock::time_point now, ResourceUsage& out) {
  if (!pod.spec || !PodHolds(pod, now)) return;
  out["pods"] = kOne;
  ResourceUsage requests = PodResources(*pod.spec, false);
  ResourceUsage limits = PodResources(*pod.spec, true);
  for (const auto& e : pod.spec->overhead) {
    Result<model::Quantity> q = model::Quantity::Parse(e->value);
    if (!q.ok()) continue;
    requests[e->key] += *q;
    if (auto it = limits.find(e->key); it != limits.end()) it->second += *q;
  }
  for (const auto& [name, q] : requests) {
    if (In(kRequestAliases, name)) {
      out[name] = q;
      out["requests." + name] = q;
    } else if (name.starts_with("hugepages-")) {
      out[name] = q;
      out["requests." + name] = q;
    } else if (Extended(name)) {
      out["requests." + name] = q;
    }
  }
  for (const auto& [name, q] : limits) {
    if (In(kRequestAliases, name)) out["limits." + name] = q;
  }
}

void ServiceUsage(const api::ServiceT& service, ResourceUsage& out) {
  if (!service.spec) return;
  const api::ServiceSpecT& spec = *service.spec;
  int64_t node_ports = 0;
  if (spec.type == api::ServiceType::NodePort) node_ports = static_cast<int64_t>(spec.ports.size());
  if (spec.type == api::ServiceType::LoadBalancer) {
    out["services.loadbalancers"] = kOne;
    if (spec.allocate_load_balancer_node_ports.value_or(true)) {
      node_ports = static_cast<int64_t>(spec.ports.size());
    } else {
      node_ports = std::count_if(spec.ports.begin(), spec.ports.end(), [](const auto& p) { return p->node_port != 0; });
    }
  }
  if (node_ports > 0) out["services.nodeports"] = model::Quantity::FromUnits(node_ports);
}

void ClaimUsage(const api::PersistentVolumeClaimT& claim, ResourceUsage& out) {
  if (!claim.spec) return;
  const std::string& storage_class = claim.spec->storage_class_name;
  if (!storage_class.empty()) out[storage_class + std::string(kStorageClassSuffix) + "persistentvolumeclaims"] = kOne;
  if (!claim.spec->resources) return;
  for (const auto& e : claim.spec->resources->requests) {
    if (e->key != "storage") continue;
    Result<model::Quantity> q = model::Quantity::Parse(e->value);
    if (!q.ok()) continue;
    out["requests.storage"] = *q;
    if (!storage_class.empty()) out[storage_class + std::string(kStorageClassSuffix) + "requests.storage"] = *q;
  }
}

// Whether objects of `kind` count for the resource `name` (the resources
// their evaluator answers for).
bool Counts(const model::KindInfo& kind, std::string_view name) {
  if (name == CountName(kind)) return true;
  if (kind.kind == "Pod") {
    if (name == "pods") return true;
    for (std::string_view r : kRequestAliases) {
      if (name == r || name == "requests." + std::string(r) || name == "limits." + std::string(r)) return true;
    }
    return name.starts_with("hugepages-") || name.starts_with("requests.hugepages-") ||
           (name.starts_with("requests.") && Extended(name.substr(std::string_view("requests.").size())));
  }
  if (kind.kind == "Service") return name == "services" || name == "services.nodeports" || name == "services.loadbalancers";
  if (kind.kind == "PersistentVolumeClaim") {
    return name == "persistentvolumeclaims" || name == "requests.storage" ||
           (name.find(kStorageClassSuffix) != std::string_view::npos &&
            (name.ends_with("/requests.storage") || name.ends_with("/persistentvolumeclaims")));
  }
  return In(kLegacyCounts, name) && name == kind.resource;
}

// The hard resources (as the status records them) the quota tracks for
// objects of `kind`, in name order.
std::vector<std::string> Restricted(const ResourceUsage& hard, const model::KindInfo& kind) {
  std::vector<std::string> out;
  for (const auto& [name, q] : hard) {
    if (Counts(kind, name)) out.push_back(name);
  }
  return out;
}

bool Terminating(const api::PodSpecT& spec) {
  return spec.active_deadline_seconds.has_value() && *spec.active_deadline_seconds >= 0;
}

bool CrossNamespaceAffinity(const api::PodSpecT& spec) {
  if (!spec.affinity) return false;
  auto crosses = [](const api::PodAffinityTermT* term) {
    return term != nullptr && (!term->namespaces.empty() || term->namespace_selector != nullptr);
  };
  auto any = [&](const auto& required, const auto& preferred) {
    for (const auto& t : required) {
      if (crosses(t.get())) return true;
    }
    for (const auto& w : preferred) {
      if (crosses(w->pod_affinity_term.get())) return true;
    }
    return false;
  };
  const auto& a = *spec.affinity;
  return (a.pod_affinity && any(a.pod_affinity->required_during_scheduling_ignored_during_execution,
                                a.pod_affinity->preferred_during_scheduling_ignored_during_execution)) ||
         (a.pod_anti_affinity && any(a.pod_anti_affinity->required_during_scheduling_ignored_during_execution,
                                     a.pod_anti_affinity->preferred_during_scheduling_ignored_during_execution));
}

// One scope requirement against a pod.
bool ScopeHolds(api::ResourceQuotaScope scope, api::ScopeSelectorOperator op, const std::vector<std::string>& values,
                const api::PodT& pod) {
  const api::PodSpecT& spec = *pod.spec;
  switch (scope) {
    case api::ResourceQuotaScope::Terminating:
      return Terminating(spec);
    case api::ResourceQuotaScope::NotTerminating:
      return !Terminating(spec);
    case api::ResourceQuotaScope::BestEffort:
      return QosClass(spec) == api::PodQOSClass::BestEffort;
    case api::ResourceQuotaScope::NotBestEffort:
      return QosClass(spec) != api::PodQOSClass::BestEffort;
    case api::ResourceQuotaScope::PriorityClass: {
      const std::string& name = spec.priority_class_name;
      switch (op) {
        case api::ScopeSelectorOperator::In:
          return In(values, name);
        case api::ScopeSelectorOperator::NotIn:
          return !In(values, name);
        case api::ScopeSelectorOperator::DoesNotExist:
          return name.empty();
        default:
          return !name.empty();
      }
    }
    case api::ResourceQuotaScope::CrossNamespacePodAffinity:
      return op == api::ScopeSelectorOperator::DoesNotExist ? !CrossNamespaceAffinity(spec)
                                                            : CrossNamespaceAffinity(spec);
    default:
      return false;  // a scope podflow does not know selects nothing
  }
}

std::string PrettyPrint(const ResourceUsage& usage) {
  std::vector<std::string> parts;
  for (const auto& [name, q] : usage) parts.push_back(name + "=" + q.ToString());
  return Join(parts, ",");
}

ResourceUsage Mask(const ResourceUsage& usage, const std::vector<std::string>& names) {
  ResourceUsage out;
  for (const std::string& name : names) {
    if (auto it = usage.find(name); it != usage.end()) out.emplace(name, it->second);
  }
  return out;
}

// kube-apiserver's compatibility rule: with cpu or memory under quota,
// every container names them. Why not, or nullopt.
std::optional<std::string> MissingRequirements(const std::vector<std::string>& restricted, const api::PodSpecT& spec) {
  std::vector<std::string> required;
  for (const std::string& name : restricted) {
    if (In(kMustSpecify, name)) required.push_back(name);
  }
  if (required.empty()) return std::nullopt;
  std::map<std::string, std::set<std::string>> missing;  // resource -> containers
  auto check = [&](const api::ContainerT& c) {
    std::set<std::string> has;
    if (c.resources) {
      for (const auto& e : c.resources->requests) {
        if (In(kRequestAliases, e->key)) {
          has.insert(e->key);
          has.insert("requests." + e->key);
        }
      }
      for (const auto& e : c.resources->limits) has.insert("limits." + e->key);
    }
    for (const std::string& r : required) {
      if (!has.contains(r)) missing[r].insert(c.name);
    }
  };
  for (const auto& c : spec.containers) check(*c);
  for (const auto& c : spec.init_containers) check(*c);
  if (missing.empty()) return std::nullopt;
  std::vector<std::string> segments;
  for (const auto& [resource, containers] : missing) segments.push_back(resource + " for: " + Join(containers, ","));
  return "must specify " + Join(segments, "; ");
}

const std::string& QuotaName(const api::ResourceQuotaT& quota) {
  static const std::string kNone;
  return quota.metadata ? quota.metadata->name : kNone;
}

}  // namespace

ResourceUsage ReadResourceList(const std::vector<std::unique_ptr<api::QuantityEntryT>>& list) {
  ResourceUsage out;
  for (const auto& e : list) {
    Result<model::Quantity> q = model::Quantity::Parse(e->value);
    if (q.ok()) out[e->key] = *q;
  }
  return out;
}

std::vector<std::unique_ptr<api::QuantityEntryT>> WriteResourceList(const ResourceUsage& usage) {
  std::vector<std::unique_ptr<api::QuantityEntryT>> out;
  for (const auto& [name, q] : usage) {
    auto e = std::make_unique<api::QuantityEntryT>();
    e->key = name;
    e->value = q.ToString();
    out.push_back(std::move(e));
  }
  return out;
}

ResourceUsage UsageOf(const QuotaObject& object) {
  ResourceUsage out;
  out[CountName(object.kind)] = kOne;
  if (In(kLegacyCounts, object.kind.resource)) out[std::string(object.kind.resource)] = kOne;
  if (object.pod != nullptr) PodUsage(*object.pod, object.now, out);
  if (object.service != nullptr) ServiceUsage(*object.service, out);
  if (object.claim != nullptr) ClaimUsage(*object.claim, out);
  return out;
}

bool QuotaMatches(const api::ResourceQuotaT& quota, const QuotaObject& object) {
  const ResourceUsage hard = quota.status ? ReadResourceList(quota.status->hard) : ResourceUsage();
  if (Restricted(hard, object.kind).empty()) return false;
  if (!quota.spec) return true;
  const bool scoped = !quota.spec->scopes.empty() ||
                      (quota.spec->scope_selector && !quota.spec->scope_selector->match_expressions.empty());
  if (!scoped) return true;
  // Scopes select pods only.
  if (object.pod == nullptr || !object.pod->spec) return false;
  for (api::ResourceQuotaScope scope : quota.spec->scopes) {
    if (!ScopeHolds(scope, api::ScopeSelectorOperator::Exists, {}, *object.pod)) return false;
  }
  if (quota.spec->scope_selector) {
    for (const auto& r : quota.spec->scope_selector->match_expressions) {
      if (!ScopeHolds(r->scope_name, r->operator_, r->values, *object.pod)) return false;
    }
  }
  return true;
}

std::optional<std::string> QuotaConstraints(const api::ResourceQuotaT& quota, const QuotaObject& object) {
  if (!quota.status) return std::nullopt;  // not counted yet: it restricts nothing
  const ResourceUsage hard = ReadResourceList(quota.status->hard);
  const std::vector<std::string> restricted = Restricted(hard, object.kind);
  if (restricted.empty()) return std::nullopt;
  const std::string& name = QuotaName(quota);
  if (object.pod != nullptr && object.pod->spec) {
    if (std::optional<std::string> missing = MissingRequirements(restricted, *object.pod->spec)) {
      return "failed quota: " + name + ": " + *missing;
    }
  }
  const ResourceUsage used = ReadResourceList(quota.status->used);
  if (std::any_of(restricted.begin(), restricted.end(), [&](const std::string& r) { return !used.contains(r); })) {
    return "status unknown for quota: " + name + ", resources: " + Join(restricted, ",");
  }
  return std::nullopt;
}

std::optional<std::string> ChargeQuota(api::ResourceQuotaT& quota, const model::KindInfo& kind,
                                       const ResourceUsage& usage, bool* charged) {
  *charged = false;
  if (!quota.status) return std::nullopt;
  const ResourceUsage hard = ReadResourceList(quota.status->hard);
  ResourceUsage requested = Mask(usage, Restricted(hard, kind));
  std::erase_if(requested, [](const auto& entry) { return entry.second.IsZero(); });
  if (requested.empty()) return std::nullopt;
  const ResourceUsage used = ReadResourceList(quota.status->used);
  std::vector<std::string> exceeded;
  ResourceUsage next = used;
  for (const auto& [r, q] : requested) {
    next[r] += q;
    if (next[r] > hard.at(r)) exceeded.push_back(r);
  }
  if (!exceeded.empty()) {
    return "exceeded quota: " + QuotaName(quota) + ", requested: " + PrettyPrint(Mask(requested, exceeded)) +
           ", used: " + PrettyPrint(Mask(used, exceeded)) + ", limited: " + PrettyPrint(Mask(hard, exceeded));
  }
  quota.status->used = WriteResourceList(next);
  *charged = true;
  return std::nullopt;
}

void RecountQuota(api::ResourceQuotaT& quota, const std::vector<QuotaObject>& objects) {
  auto& status = Ensure(quota.status);
  status.hard.clear();
  if (quota.spec) {
    for (const auto& e : quota.spec->hard) status.hard.push_back(std::make_unique<api::QuantityEntryT>(*e));
  }
  const ResourceUsage hard = ReadResourceList(status.hard);
  status.hard = WriteResourceList(hard);  // in name order, canonical
  ResourceUsage used;
  for (const auto& [name, q] : hard) used[name] = model::Quantity();
  for (const QuotaObject& object : objects) {
    if (!QuotaMatches(quota, object)) continue;
    for (const auto& [name, q] : UsageOf(object)) {
      if (auto it = used.find(name); it != used.end()) it->second += q;
    }
  }
  status.used = WriteResourceList(used);
}

std::vector<const model::KindInfo*> KindsCounted(const api::ResourceQuotaT& quota) {
  std::vector<const model::KindInfo*> out;
  if (!quota.spec) return out;
  for (const model::KindInfo& kind : model::Kinds()) {
    if (!kind.namespaced) continue;
    for (const auto& e : quota.spec->hard) {
      if (Counts(kind, e->key)) {
        out.push_back(&kind);
        break;
      }
    }
  }
  return out;
}

}  // namespace podflow::admission
