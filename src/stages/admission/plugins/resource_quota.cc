// ResourceQuota: an object created in a namespace with quotas is checked
// against every quota that tracks it (validating, last in the chain, as in
// kube-apiserver): pods must name cpu and memory when those are under
// quota, and what the object counts for must fit each quota's hard limits
// beside what is used. The charge is handed to the caller, who adds it to
// the stored quotas in the write that creates the object (quota.h).
// An update is charged what it adds: a Service that becomes a NodePort or
// LoadBalancer, a claim that asks for more storage (kube-apiserver's
// evaluators handle no other update; pods' resources cannot change).
#include "model/objects.h"
#include "stages/admission/plugins/plugin.h"
#include "stages/admission/quota.h"

namespace podflow::admission {
namespace {

QuotaObject ObjectOf(const Attributes& a, const RequestState& state) {
  return {a.kind(), a.As<api::PodT>(), a.As<api::ServiceT>(), a.As<api::PersistentVolumeClaimT>(), state.now};
}

// What an update adds: each amount that grew, by how much (kube's
// SubtractWithNonNegativeResult, zeros removed).
ResourceUsage Added(const ResourceUsage& now, const ResourceUsage& before) {
  ResourceUsage added;
  for (const auto& [name, amount] : now) {
    model::Quantity grown = amount;
    if (auto it = before.find(name); it != before.end()) grown -= it->second;
    if (grown > model::Quantity()) added.emplace(name, grown);
  }
  return added;
}

class ResourceQuota : public Plugin {
 public:
  bool Handles(Operation) const override { return true; }

  std::optional<ApiStatusInfo> Validate(const Attributes& a, RequestState& state) const override {
    if (!a.kind().namespaced || !state.quotas) return std::nullopt;
    const bool update = a.operation() == Operation::kUpdate;
    if (update && (!a.subresource().empty() || (a.kind().kind != "Service" && a.kind().kind != "PersistentVolumeClaim"))) {
      return std::nullopt;
    }
    const QuotaObject object = ObjectOf(a, state);
    ResourceUsage usage = UsageOf(object);
    if (update) {
      usage = Added(usage, UsageOf(ObjectOf(a.Old(), state)));
      if (usage.empty()) return std::nullopt;
    }
    Result<std::vector<api::ResourceQuotaT>> stored = state.quotas(a.namespace_());
    if (!stored.ok()) return InternalErrorStatus(stored.status().ToString());
    if (stored->empty()) return std::nullopt;
    for (api::ResourceQuotaT& quota : *stored) {
      if (!quota.metadata) continue;
      const std::string key = model::ObjectKey(model::Kind("ResourceQuota"), a.namespace_(), quota.metadata->name);
      // As the request's earlier documents left it.
      if (auto it = state.request_quotas.find(key); it != state.request_quotas.end()) quota = it->second;
      if (!QuotaMatches(quota, object)) continue;
      if (std::optional<std::string> why = QuotaConstraints(quota, object)) {
        return AdmissionForbiddenStatus(a.kind(), a.name(), *why);
      }
      bool charged = false;
      if (std::optional<std::string> why = ChargeQuota(quota, a.kind(), usage, &charged)) {
        return AdmissionForbiddenStatus(a.kind(), a.name(), *why);
      }
      // Only a quota the object adds to is written with it.
      if (charged) state.document_quotas.emplace_back(key, std::move(quota));
    }
    if (!state.document_quotas.empty()) state.document_usage = usage;
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<Plugin> NewResourceQuota() { return std::make_unique<ResourceQuota>(); }

}  // namespace podflow::admission
