// ResourceQuota's arithmetic, as kube-apiserver's quota evaluators and the
// resource quota controller do it: what an object counts for, which quotas
// it counts against (their scopes), the check of a create against a quota's
// hard limits in kube-apiserver's words, and a quota's usage counted again
// from the objects of its namespace. Plain logic: the ResourceQuota plugin
// checks a request with it, and the admission stage charges and recounts
// the stored quotas with it. Internal to admission.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api_generated.h"
#include "model/kind_types.h"
#include "model/quantity.h"

namespace podflow::admission {

// Resource name -> amount, in name order (a ResourceList).
using ResourceUsage = std::map<std::string, model::Quantity>;

// One object as a quota looks at it: its kind, and the object itself for
// the kinds whose usage is more than a count.
struct QuotaObject {
  const model::KindInfo& kind;
  const api::PodT* pod = nullptr;
  const api::ServiceT* service = nullptr;
  const api::PersistentVolumeClaimT* claim = nullptr;
  // Decides whether a deleted pod's grace period has run out (it then
  // counts no more); the epoch when nothing is being deleted.
  std::chrono::system_clock::time_point now{};
};

// What the object counts for. Every object counts 1 for
// `count/<resource>[.<group>]`, and the kinds quotas counted before those
// names existed (pods, services, secrets, configmaps, resourcequotas,
// replicationcontrollers, persistentvolumeclaims) for their plain name too.
// A pod that has not ended counts its effective requests (`requests.cpu`
// and `cpu`, `requests.memory` and `memory`, ephemeral storage, hugepages
// and extended resources as `requests.<name>`) and limits (`limits.cpu`,
// `limits.memory`, `limits.ephemeral-storage`), overhead included; a
// Succeeded or Failed pod, or one whose deletion grace has run out, counts
// for `count/pods` only. A Service counts `services.nodeports` and
// `services.loadbalancers` by its type; a claim its storage, also per
// storage class.
ResourceUsage UsageOf(const QuotaObject& object);

// Whether the quota tracks the object: a quota with scopes or a scope
// selector tracks only the pods they select (Terminating, NotTerminating,
// BestEffort, NotBestEffort, PriorityClass, CrossNamespacePodAffinity).
bool QuotaMatches(const api::ResourceQuotaT& quota, const QuotaObject& object);

// What a quota that matches `object` asks of it before counting it, on the
// quota's status (its hard limits as last recorded): that a pod's
// containers name cpu and memory when those are under quota, and that the
// quota has been counted. Why not, as kube-apiserver words it after
// `is forbidden: `, or nullopt:
//   failed quota: NAME: must specify limits.cpu for: nginx; requests.cpu for: nginx
//   status unknown for quota: NAME, resource: pods
std::optional<std::string> QuotaConstraints(const api::ResourceQuotaT& quota, const QuotaObject& object);

// Charges `usage` (what an object of `kind` counts for) to the quota:
// nullopt when it fits the hard limits, with `quota.status.used` grown and
// `*charged` set when the object adds anything the quota limits (a zero
// amount adds nothing); otherwise why not, in kube-apiserver's words:
//   exceeded quota: NAME, requested: pods=1, used: pods=2, limited: pods=2
// A quota not counted yet restricts nothing.
std::optional<std::string> ChargeQuota(api::ResourceQuotaT& quota, const model::KindInfo& kind,
                                       const ResourceUsage& usage, bool* charged);

// The quota's status as the resource quota controller records it: hard as
// the spec says, used summed over `objects` (those the quota matches, every
// hard resource present, 0 when nothing uses it).
void RecountQuota(api::ResourceQuotaT& quota, const std::vector<QuotaObject>& objects);

// The kinds whose objects a quota's hard resources count, by the resource
// names they use (what a recount lists).
std::vector<const model::KindInfo*> KindsCounted(const api::ResourceQuotaT& quota);

// A ResourceList as stored ([QuantityEntry], in name order) and back.
ResourceUsage ReadResourceList(const std::vector<std::unique_ptr<api::QuantityEntryT>>& list);
std::vector<std::unique_ptr<api::QuantityEntryT>> WriteResourceList(const ResourceUsage& usage);

}  // namespace podflow::admission
