// The apiserver's defaulting (SetDefaults_*) and the fields it stamps on
// create (uid, creationTimestamp, generateName). Internal to admission.
#pragma once

#include "base/hex_id.h"  // NewUuid, GenerateName

#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "api_generated.h"
#include "model/codec.h"
#include "model/quantity.h"

namespace podflow::admission {

// What the create stamps on every object.
struct CreateStamp {
  std::string uid;                 // a fresh UUIDv4
  std::string creation_timestamp;  // RFC 3339 in seconds, UTC
};

// Sets `key` to `value` in a map[string]string (labels, annotations,
// data), kept sorted by key as the schema stores it.
void SetEntry(std::vector<std::unique_ptr<api::StringEntryT>>& entries, const std::string& key, std::string value);

// Adds to a ResourceList what `from` has and it lacks, keeping it sorted;
// the names it added.
std::vector<std::string> AddMissing(std::vector<std::unique_ptr<api::QuantityEntryT>>& list,
                                    const std::vector<std::unique_ptr<api::QuantityEntryT>>& from);


// metadata for every kind: uid, creationTimestamp, namespace "default" for
// namespaced kinds (cleared for cluster-scoped ones), name from
// generateName when name is empty.
void DefaultMeta(const model::KindInfo& kind, api::ObjectMetaT& meta, const CreateStamp& stamp,
                 std::mt19937_64& rng);

// Kubernetes' pull policy rule: tag "latest", or no tag and no digest ->
// Always; anything else (a tag, or a digest) -> IfNotPresent.
api::PullPolicy DefaultPullPolicy(std::string_view image);

// The QoS class of a pod as v1qos.GetPodQOS computes it (cpu and memory of
// containers and init containers). REQUIRES: requests defaulted from limits.
api::PodQOSClass QosClass(const api::PodSpecT& spec);

// A pod's total per resource as Kubernetes counts what it asks for
// (requests, or with `limits` its limits): the app containers and the
// sidecars (init containers that always restart) together, or an ordinary
// init container with the sidecars started before it, whichever is more.
// Overhead is not included. Unreadable quantities count 0.
std::map<std::string, model::Quantity> PodResources(const api::PodSpecT& spec, bool limits);

// The object `p` points to, made empty first when there is none.
template <typename T>
T& Ensure(std::unique_ptr<T>& p) {
  if (!p) p = std::make_unique<T>();
  return *p;
}

// The scheme's pod spec defaults, which pod templates get too (restart
// and DNS policy, grace period, scheduler, security context, container
// pull policy, termination message, port protocol, probes).
void DefaultPodSpec(api::PodSpecT& spec);
// A workload's pod template: made when absent, its spec defaulted.
void DefaultPodTemplate(std::unique_ptr<api::PodTemplateSpecT>& tmpl);
// Pod defaults: the spec's, then what only pods get (service links,
// requests from limits). The service account and the default tolerations
// are plugins' (plugins/). Priority and
// preemptionPolicy are left to the Priority plugin (priority.h).
void DefaultPod(api::PodT& pod);
// A pod's status on create, after the plugins: Pending, its QoS class,
// and PodScheduled=False (SchedulingGated) while it has scheduling gates.
void PreparePodForCreate(api::PodT& pod);
// PriorityClass defaults: preemptionPolicy PreemptLowerPriority.
void DefaultPriorityClass(api::PriorityClassT& pc);
// Service defaults except the cluster IP (the allocator's job).
void DefaultService(api::ServiceT& service);

}  // namespace podflow::admission
