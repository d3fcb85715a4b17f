// Per-kind rules of kube-apiserver's registry, beyond what every object
// gets (DefaultMeta, ValidateMeta): DefaultKind is the scheme's defaulting
// and the kind's preparation for create; ValidateKind its validation, every
// cause collected. A kind without rules of its own gets the templates,
// which do nothing. Admission calls both for every kind through
// model::VisitKind. Internal to admission.
#pragma once

#include <optional>
#include <string>

#include "api_generated.h"
#include "stages/admission/validation.h"

namespace podflow::admission {

// What the JSON decoding of a kind refuses beyond the codec's checks (a
// []byte field that is not base64), as the decoder words it; the object is
// then a BadRequest.
template <typename T>
std::optional<std::string> DecodeError(const T&) {
  return std::nullopt;
}
template <typename T>
void DefaultKind(T&) {}
template <typename T>
void ValidateKind(const T&, Causes&) {}
// What the kind's strategy sets on create after the mutating plugins (a
// pod's status: Pending and its QoS class, from its final resources).
template <typename T>
void PrepareForCreate(T&) {}
// The kind's update validation beyond ValidateKind: what may not change
// (selectors, a pod's spec but for its few mutable fields, immutable
// ConfigMaps and Secrets), every cause collected.
template <typename T>
void ValidateUpdate(const T&, const T&, Causes&) {}
// What an update keeps from the stored object when the new one leaves it
// out: the values the server allocated (a Service's cluster IPs).
template <typename T>
void KeepAllocated(const T&, T&) {}

// A document the codec refused, as kube-apiserver answers it: unknown
// fields are a BadRequest (strict decoding), other field errors Invalid.
ApiStatusInfo DecodeFailure(const model::Decoded& d);
// The BadRequest of an object the JSON decoder refuses: `Secret in version
// "v1" cannot be handled as a Secret: <why>`.
ApiStatusInfo CannotBeHandled(const model::KindInfo& kind, std::string_view why);

// core/v1 (admission.cc, defaults.cc, validation.cc, priority.cc)
void DefaultKind(api::PodT& pod);
void DefaultKind(api::ServiceT& service);
void DefaultKind(api::PriorityClassT& pc);
void DefaultKind(api::NamespaceT& ns);
void DefaultKind(api::LimitRangeT& range);
void PrepareForCreate(api::PodT& pod);
void ValidateKind(const api::PodT& pod, Causes& out);
void ValidateKind(const api::ServiceT& service, Causes& out);
void ValidateKind(const api::PriorityClassT& pc, Causes& out);
void ValidateUpdate(const api::PodT& old, const api::PodT& pod, Causes& out);         // pod_update.cc
void ValidateUpdate(const api::ServiceT& old, const api::ServiceT& service, Causes& out);
void KeepAllocated(const api::ServiceT& old, api::ServiceT& service);
// Whether the service's ports get node ports (NodePort; LoadBalancer unless
// allocateLoadBalancerNodePorts is false).
bool HasNodePorts(const api::ServiceSpecT& spec);
// node_ports.cc: checks the node ports the service asks for against `taken`
// and hands out the ones it leaves to the server (its healthCheckNodePort
// too, for a LoadBalancer with externalTrafficPolicy Local), adding them to
// `taken`; a refusal as kube-apiserver words it. On an update (`old`: the
// stored spec) the ports the stored service holds are not checked again,
// and a health check port both need is kept as it is; on a create, ports
// of one number share a node port.
std::optional<model::ApiStatusInfo> AssignNodePorts(const model::KindInfo& kind, api::ServiceT& service,
                                                    const NodePortAllocator& allocator, std::set<int32_t>& taken,
                                                    std::mt19937_64& rng, const api::ServiceSpecT* old = nullptr);
// A LoadBalancer with externalTrafficPolicy Local: it has a health check
// node port.
bool NeedsHealthCheck(const api::ServiceSpecT& spec);

// ConfigMap and Secret (config_kinds.cc). A Secret's stringData is folded
// into data (base64) and dropped; its type defaults to Opaque.
std::optional<std::string> DecodeError(const api::SecretT& secret);
std::optional<std::string> DecodeError(const api::ConfigMapT& cm);
void DefaultKind(api::SecretT& secret);
void ValidateKind(const api::ConfigMapT& cm, Causes& out);
void ValidateKind(const api::SecretT& secret, Causes& out);
void ValidateUpdate(const api::ConfigMapT& old, const api::ConfigMapT& cm, Causes& out);
void ValidateUpdate(const api::SecretT& old, const api::SecretT& secret, Causes& out);

// apps/v1 and batch/v1 (workloads.cc): the scheme's defaults, the pod
// template's, a Job's generated selector; selectors, templates, strategies.
void DefaultKind(api::DeploymentT& d);
void DefaultKind(api::ReplicaSetT& rs);
void DefaultKind(api::DaemonSetT& ds);
void DefaultKind(api::StatefulSetT& sts);
void DefaultKind(api::JobT& job);
void DefaultKind(api::CronJobT& cj);
void ValidateKind(const api::DeploymentT& d, Causes& out);
void ValidateKind(const api::ReplicaSetT& rs, Causes& out);
void ValidateKind(const api::DaemonSetT& ds, Causes& out);
void ValidateKind(const api::StatefulSetT& sts, Causes& out);
void ValidateKind(const api::JobT& job, Causes& out);
void ValidateKind(const api::CronJobT& cj, Causes& out);
void ValidateUpdate(const api::DeploymentT& old, const api::DeploymentT& d, Causes& out);
void ValidateUpdate(const api::ReplicaSetT& old, const api::ReplicaSetT& rs, Causes& out);
void ValidateUpdate(const api::DaemonSetT& old, const api::DaemonSetT& ds, Causes& out);
void ValidateUpdate(const api::StatefulSetT& old, const api::StatefulSetT& sts, Causes& out);
void ValidateUpdate(const api::JobT& old, const api::JobT& job, Causes& out);

// rbac.authorization.k8s.io/v1 (rbac_kinds.cc).
void DefaultKind(api::RoleBindingT& rb);
void DefaultKind(api::ClusterRoleBindingT& crb);
void ValidateKind(const api::RoleT& role, Causes& out);
void ValidateKind(const api::ClusterRoleT& role, Causes& out);
void ValidateKind(const api::RoleBindingT& rb, Causes& out);
void ValidateKind(const api::ClusterRoleBindingT& crb, Causes& out);
void ValidateUpdate(const api::RoleBindingT& old, const api::RoleBindingT& rb, Causes& out);
void ValidateUpdate(const api::ClusterRoleBindingT& old, const api::ClusterRoleBindingT& crb, Causes& out);

// policy, storage, discovery (cluster_kinds.cc).
void DefaultKind(api::StorageClassT& sc);
void DefaultKind(api::CSIDriverT& driver);
void DefaultKind(api::EndpointSliceT& slice);
void DefaultKind(api::PodDisruptionBudgetT& pdb);
void ValidateKind(const api::PodDisruptionBudgetT& pdb, Causes& out);
// A namespace's phase and finalizers are the server's: an update keeps
// them; a status write may set the phase its deletion calls for only.
void KeepAllocated(const api::NamespaceT& old, api::NamespaceT& ns);
void ValidateUpdate(const api::NamespaceT& old, const api::NamespaceT& ns, Causes& out);
void ValidateKind(const api::EndpointSliceT& slice, Causes& out);
// A claim's spec is fixed once made, but for its volumeName (set once, by
// the binder) and, on a bound claim, a larger storage request.
void ValidateUpdate(const api::PersistentVolumeClaimT& old, const api::PersistentVolumeClaimT& claim, Causes& out);
// A quota's hard limits name resources kube-apiserver knows, are
// non-negative (whole numbers for object counts), its scopes fit its
// resources and each other and never change; its status is the quota
// controller's (cleared on create).
void PrepareForCreate(api::ResourceQuotaT& quota);
void ValidateKind(const api::ResourceQuotaT& quota, Causes& out);
void ValidateUpdate(const api::ResourceQuotaT& old, const api::ResourceQuotaT& quota, Causes& out);

}  // namespace podflow::admission
