// Namespaces and the cluster-level kinds outside core/v1: the scheme's
// defaults and validation of StorageClass, CSIDriver, EndpointSlice and
// PodDisruptionBudget.
#include <algorithm>
#include <set>

#include "model/objects.h"
#include "model/quantity.h"
#include "stages/admission/defaults.h"
#include "stages/admission/kind_rules.h"
#include "stages/admission/names.h"

namespace podflow::admission {

void DefaultKind(api::NamespaceT& ns) {
  // A new namespace is Active, held by the "kubernetes" finalizer until its
  // objects are gone.
  api::NamespaceSpecT& spec = Ensure(ns.spec);
  if (std::find(spec.finalizers.begin(), spec.finalizers.end(), "kubernetes") == spec.finalizers.end()) {
    spec.finalizers.push_back("kubernetes");
  }
  // Every namespace is labelled with its name, for namespace selectors.
  SetEntry(ns.metadata->labels, "kubernetes.io/metadata.name", ns.metadata->name);
  ns.status = std::make_unique<api::NamespaceStatusT>();
  ns.status->phase = api::NamespacePhase::Active;
}

void DefaultKind(api::LimitRangeT& range) {
  // SetDefaults_LimitRangeItem, for Container limits: a max is the default
  // limit, a default limit the default request, a min the default request.
  if (!range.spec) return;
  for (auto& item : range.spec->limits) {
    if (item->type != "Container") continue;
    AddMissing(item->default_, item->max);
    AddMissing(item->default_request, item->default_);
    AddMissing(item->default_request, item->min);
  }
}

void DefaultKind(api::StorageClassT& sc) {
  if (sc.reclaim_policy == api::PersistentVolumeReclaimPolicy::Unset) {
    sc.reclaim_policy = api::PersistentVolumeReclaimPolicy::Delete;
  }
  if (sc.volume_binding_mode == api::VolumeBindingMode::Unset) sc.volume_binding_mode = api::VolumeBindingMode::Immediate;
}

void DefaultKind(api::CSIDriverT& driver) {
  api::CSIDriverSpecT& spec = Ensure(driver.spec);
  if (!spec.attach_required.has_value()) spec.attach_required = true;
  if (!spec.pod_info_on_mount.has_value()) spec.pod_info_on_mount = false;
  if (!spec.storage_capacity.has_value()) spec.storage_capacity = false;
  if (spec.fs_group_policy == api::FSGroupPolicy::Unset) spec.fs_group_policy = api::FSGroupPolicy::ReadWriteOnceWithFSType;
  if (spec.volume_lifecycle_modes.empty()) spec.volume_lifecycle_modes.push_back("Persistent");
  if (!spec.requires_republish.has_value()) spec.requires_republish = false;
  if (!spec.se_linux_mount.has_value()) spec.se_linux_mount = false;
}

void DefaultKind(api::EndpointSliceT& slice) {
  for (auto& port : slice.ports) {
    if (port->protocol == api::Protocol::Unset) port->protocol = api::Protocol::TCP;
  }
}

void ValidateKind(const api::EndpointSliceT& slice, Causes& out) {
  if (slice.address_type == api::AddressType::Unset) out.push_back(FieldError::Required("addressType"));
  for (size_t i = 0; i < slice.endpoints.size(); ++i) {
    const api::EndpointT& e = *slice.endpoints[i];
    const std::string at = Index("endpoints", i);
    if (e.addresses.empty()) {
      out.push_back(FieldError::Required(at + ".addresses", "must contain at least 1 address"));
    }
    for (size_t j = 0; j < e.addresses.size(); ++j) {
      if (slice.address_type == api::AddressType::IPv4 && !IsIpv4(e.addresses[j])) {
        out.push_back(FieldError::Invalid(Index(at + ".addresses", j), e.addresses[j], "must be a valid IPv4 address"));
      }
    }
    if (!e.hostname.empty()) AddInvalid(out, at + ".hostname", e.hostname, IsDns1123Label(e.hostname));
  }
  for (size_t i = 0; i < slice.ports.size(); ++i) {
    const api::EndpointSlicePortT& p = *slice.ports[i];
    const std::string at = Index("ports", i);
    if (!p.name.empty()) AddInvalid(out, at + ".name", p.name, IsDns1123Label(p.name));
    if (p.port.has_value() && (*p.port < 1 || *p.port > 65535)) {
      out.push_back(FieldError::InvalidInt(at + ".port", *p.port, InclusiveRangeError(1, 65535)));
    }
  }
}

void DefaultKind(api::PodDisruptionBudgetT& pdb) { pdb.metadata->generation = 1; }

void ValidateKind(const api::PodDisruptionBudgetT& pdb, Causes& out) {
  if (!pdb.spec) return;
  const api::PodDisruptionBudgetSpecT& spec = *pdb.spec;
  if (spec.min_available && spec.max_unavailable) {
    out.push_back(FieldError::InvalidRendered("spec", "policy.PodDisruptionBudgetSpec{...}",
                                              "minAvailable and maxUnavailable cannot be both set"));
  }
  ValidateIntOrPercent(out, "spec.minAvailable", spec.min_available.get(), true);
  ValidateIntOrPercent(out, "spec.maxUnavailable", spec.max_unavailable.get(), true);
  if (spec.selector) ValidateLabelSelector(out, "spec.selector", *spec.selector);
}

void KeepAllocated(const api::NamespaceT& old, api::NamespaceT& ns) {
  ns.status = old.status ? std::make_unique<api::NamespaceStatusT>(*old.status) : nullptr;
  if (old.spec) {
    Ensure(ns.spec).finalizers = old.spec->finalizers;
  } else {
    ns.spec.reset();
  }
}

void ValidateUpdate(const api::NamespaceT&, const api::NamespaceT& ns, Causes& out) {
  const api::NamespacePhase phase = ns.status ? ns.status->phase : api::NamespacePhase::Unset;
  const std::string name = phase == api::NamespacePhase::Unset ? "" : api::EnumNameNamespacePhase(phase);
  const bool deleting = ns.metadata && !ns.metadata->deletion_timestamp.empty();
  if (!deleting && phase != api::NamespacePhase::Active) {
    out.push_back(FieldError::Invalid("status.phase", name, "may only be 'Active' if `deletionTimestamp` is empty"));
  }
  if (deleting && phase != api::NamespacePhase::Terminating) {
    out.push_back(
        FieldError::Invalid("status.phase", name, "may only be 'Terminating' if `deletionTimestamp` is not empty"));
  }
}

// ---- ResourceQuota ----

namespace {

// The resources kube-apiserver knows for quota by a plain name.
bool StandardQuotaResource(std::string_view name) {
  constexpr std::string_view kStandard[] = {
      "cpu",          "memory",          "ephemeral-storage", "requests.cpu",   "requests.memory",
      "requests.storage", "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
      "pods",         "services",        "replicationcontrollers", "resourcequotas", "secrets",
      "persistentvolumeclaims", "configmaps", "services.nodeports", "services.loadbalancers"};
  return std::find(std::begin(kStandard), std::end(kStandard), name) != std::end(kStandard) ||
         name.starts_with("hugepages-") || name.starts_with("requests.hugepages-");
}

// The resources a quota with a pod scope may hold, among the standard ones:
// BestEffort pods ask nothing, so only their number; the other scopes also
// their cpu and memory.
bool ScopeAllows(api::ResourceQuotaScope scope, std::string_view resource) {
  if (!StandardQuotaResource(resource) || resource == "pods") return true;
  if (scope == api::ResourceQuotaScope::BestEffort) return false;
  constexpr std::string_view kCompute[] = {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu",
                                           "limits.memory"};
  return std::find(std::begin(kCompute), std::end(kCompute), resource) != std::end(kCompute);
}

// Resources counted in whole objects (or whole devices).
bool IntegerResource(std::string_view name) {
  constexpr std::string_view kCounts[] = {"pods", "services", "replicationcontrollers", "resourcequotas", "secrets",
                                          "configmaps", "persistentvolumeclaims", "services.nodeports",
                                          "services.loadbalancers"};
  if (std::find(std::begin(kCounts), std::end(kCounts), name) != std::end(kCounts)) return true;
  // Extended resources (`nvidia.com/gpu`, `count/pods`): a domain outside
  // kubernetes.io, not a request.
  return name.find('/') != std::string_view::npos && name.find("kubernetes.io/") == std::string_view::npos &&
         !name.starts_with("requests.");
}

void ValidateQuotaList(Causes& out, const std::string& path, const std::vector<std::unique_ptr<api::QuantityEntryT>>& list) {
  for (const auto& e : list) {
    const std::string at = path + "[" + e->key + "]";
    if (e->key.find('/') == std::string::npos && !StandardQuotaResource(e->key)) {
      out.push_back(FieldError::Invalid(at, e->key, "must be a standard resource type or fully qualified"));
      out.push_back(FieldError::Invalid(at, e->key, "must be a standard resource for quota"));
    }
    Result<model::Quantity> q = model::Quantity::Parse(e->value);
    if (!q.ok()) continue;  // the codec refused it already
    if (*q < model::Quantity()) out.push_back(FieldError::Invalid(at, e->value, "must be greater than or equal to 0"));
    if (IntegerResource(e->key) && q->MilliValue() % 1000 != 0) {
      out.push_back(FieldError::Invalid(at, e->value, "must be an integer"));
    }
  }
}

std::string GoScopes(const std::vector<api::ResourceQuotaScope>& scopes) {
  if (scopes.empty()) return "[]core.ResourceQuotaScope(nil)";
  std::string out = "[]core.ResourceQuotaScope{";
  for (size_t i = 0; i < scopes.size(); ++i) {
    out += std::string(i ? ", " : "") + GoQuote(api::EnumNameResourceQuotaScope(scopes[i]));
  }
  return out + "}";
}

// The scope selector as Go's %#v prints it in a field error.
std::string GoScopeSelector(const api::ScopeSelectorT& selector) {
  std::string out = "core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{";
  for (size_t i = 0; i < selector.match_expressions.size(); ++i) {
    const api::ScopedResourceSelectorRequirementT& r = *selector.match_expressions[i];
    out += std::string(i ? ", " : "") + "core.ScopedResourceSelectorRequirement{ScopeName:" +
           GoQuote(api::EnumNameResourceQuotaScope(r.scope_name)) +
           ", Operator:" + GoQuote(api::EnumNameScopeSelectorOperator(r.operator_)) +
           ", Values:" + (r.values.empty() ? "[]string(nil)" : GoStrings(r.values)) + "}";
  }
  return out + "}}";
}

bool Conflicting(const std::set<api::ResourceQuotaScope>& scopes) {
  using S = api::ResourceQuotaScope;
  return (scopes.contains(S::BestEffort) && scopes.contains(S::NotBestEffort)) ||
         (scopes.contains(S::Terminating) && scopes.contains(S::NotTerminating));
}

// The hard resources, in name order (as kube-apiserver visits them).
std::vector<std::string> HardNames(const api::ResourceQuotaSpecT& spec) {
  std::vector<std::string> names;
  for (const auto& e : spec.hard) names.push_back(e->key);
  std::sort(names.begin(), names.end());
  return names;
}

void ValidateScopes(Causes& out, const api::ResourceQuotaSpecT& spec) {
  if (spec.scopes.empty()) return;
  const std::string rendered = GoScopes(spec.scopes);
  const std::vector<std::string> hard = HardNames(spec);
  std::set<api::ResourceQuotaScope> seen;
  for (api::ResourceQuotaScope scope : spec.scopes) {
    for (const std::string& name : hard) {
      if (!ScopeAllows(scope, name)) {
        out.push_back(FieldError::InvalidRendered("spec.scopes", rendered, "unsupported scope applied to resource"));
      }
    }
    seen.insert(scope);
  }
  if (Conflicting(seen)) out.push_back(FieldError::InvalidRendered("spec.scopes", rendered, "conflicting scopes"));
}

void ValidateScopeSelector(Causes& out, const api::ResourceQuotaSpecT& spec) {
  if (!spec.scope_selector) return;
  const std::string path = "spec.scopeSelector.matchExpressions";
  const std::vector<std::string> hard = HardNames(spec);
  std::set<api::ResourceQuotaScope> seen;
  for (const auto& expression : spec.scope_selector->match_expressions) {
    const api::ScopedResourceSelectorRequirementT& r = *expression;
    for (const std::string& name : hard) {
      if (!ScopeAllows(r.scope_name, name)) {
        out.push_back(FieldError::InvalidRendered(path, GoScopeSelector(*spec.scope_selector),
                                                  "unsupported scope applied to resource"));
      }
    }
    switch (r.scope_name) {
      case api::ResourceQuotaScope::Terminating:
      case api::ResourceQuotaScope::NotTerminating:
      case api::ResourceQuotaScope::BestEffort:
      case api::ResourceQuotaScope::NotBestEffort:
      case api::ResourceQuotaScope::CrossNamespacePodAffinity:
        if (r.operator_ != api::ScopeSelectorOperator::Exists) {
          out.push_back(FieldError::Invalid(path + ".operator", api::EnumNameScopeSelectorOperator(r.operator_),
                                            "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, "
                                            "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "
                                            "ResourceQuotaScopeNotBestEffort or "
                                            "ResourceQuotaScopeCrossNamespacePodAffinity"));
        }
        break;
      default:
        break;
    }
    switch (r.operator_) {
      case api::ScopeSelectorOperator::In:
      case api::ScopeSelectorOperator::NotIn:
        if (r.values.empty()) {
          out.push_back(FieldError::Required(path + ".values",
                                             "must be at least one value when `operator` is 'In' or 'NotIn' for "
                                             "scope selector"));
        }
        break;
      case api::ScopeSelectorOperator::Exists:
      case api::ScopeSelectorOperator::DoesNotExist:
        if (!r.values.empty()) {
          out.push_back(FieldError::InvalidRendered(path + ".values", GoStrings(r.values),
                                                    "must be no value when `operator` is 'Exist' or "
                                                    "'DoesNotExist' for scope selector"));
        }
        break;
      default:
        out.push_back(FieldError::Invalid(path + ".operator", "", "not a valid selector operator"));
        break;
    }
    seen.insert(r.scope_name);
  }
  if (Conflicting(seen)) {
    out.push_back(FieldError::InvalidRendered(path, GoScopes(spec.scopes), "conflicting scopes"));
  }
}

}  // namespace

void PrepareForCreate(api::ResourceQuotaT& quota) {
  // The status is the quota controller's: counted once the quota is stored.
  quota.status.reset();
}

void ValidateKind(const api::ResourceQuotaT& quota, Causes& out) {
  if (quota.spec) {
    ValidateQuotaList(out, "spec.hard", quota.spec->hard);
    ValidateScopes(out, *quota.spec);
    ValidateScopeSelector(out, *quota.spec);
  }
  if (quota.status) {
    ValidateQuotaList(out, "status.hard", quota.status->hard);
    ValidateQuotaList(out, "status.used", quota.status->used);
  }
}

void ValidateUpdate(const api::ResourceQuotaT& old, const api::ResourceQuotaT& quota, Causes& out) {
  static const std::vector<api::ResourceQuotaScope> kNone;
  const auto& before = old.spec ? old.spec->scopes : kNone;
  const auto& after = quota.spec ? quota.spec->scopes : kNone;
  if (std::set<api::ResourceQuotaScope>(before.begin(), before.end()) !=
      std::set<api::ResourceQuotaScope>(after.begin(), after.end())) {
    out.push_back(FieldError::InvalidRendered("spec.scopes", GoScopes(after), "field is immutable"));
  }
}

namespace {

// The storage request of a claim as written; "" when it has none.
std::string StorageText(const api::PersistentVolumeClaimT& claim) {
  if (claim.spec && claim.spec->resources) {
    for (const auto& e : claim.spec->resources->requests) {
      if (e && e->key == "storage") return e->value;
    }
  }
  return "";
}

// The storage a claim asks for; zero when it names none (or none that parses).
model::Quantity RequestedStorage(const api::PersistentVolumeClaimT& claim) {
  Result<model::Quantity> q = model::Quantity::Parse(StorageText(claim));
  return q.ok() ? *q : model::Quantity();
}

}  // namespace

void ValidateUpdate(const api::PersistentVolumeClaimT& old, const api::PersistentVolumeClaimT& claim, Causes& out) {
  if (!old.spec || !claim.spec) return;
  // The spec as it would be if only what may change had changed.
  api::PersistentVolumeClaimSpecT was = *old.spec;
  if (was.volume_name.empty()) was.volume_name = claim.spec->volume_name;
  const bool bound = claim.status && claim.status->phase == api::PersistentVolumeClaimPhase::Bound;
  api::PersistentVolumeClaimSpecT now = *claim.spec;
  // A bound claim's storage request may change (grow: below); nothing else.
  const std::string old_storage = StorageText(old);
  if (bound && now.resources && !old_storage.empty()) {
    auto& requests = now.resources->requests;
    auto it = std::find_if(requests.begin(), requests.end(), [](const auto& e) { return e && e->key == "storage"; });
    if (it == requests.end()) {
      requests.push_back(std::make_unique<api::QuantityEntryT>());
      requests.back()->key = "storage";
      it = requests.end() - 1;
    }
    (*it)->value = old_storage;
  }
  if (model::Pack(now) != model::Pack(was)) {
    out.push_back(FieldError::Forbidden(
        "spec", "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound "
                "claims"));
  }
  if (RequestedStorage(claim) < RequestedStorage(old)) {
    out.push_back(FieldError::Forbidden("spec.resources.requests.storage", "field can not be less than previous value"));
  }
}

}  // namespace podflow::admission
