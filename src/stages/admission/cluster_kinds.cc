// Namespaces and the cluster-level kinds outside core/v1: the scheme's
// defaults and validation of StorageClass, CSIDriver, EndpointSlice and
// PodDisruptionBudget.
#include <algorithm>

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

}  // namespace podflow::admission
