// Update rules of core/v1 Pods and Services: what kube-apiserver lets an
// update change.
#include <algorithm>
#include <set>

#include "model/objects.h"
#include "stages/admission/defaults.h"
#include "stages/admission/kind_rules.h"

namespace podflow::admission {
namespace {

bool SameToleration(const api::TolerationT& a, const api::TolerationT& b) {
  return a.key == b.key && a.operator_ == b.operator_ && a.value == b.value && a.effect == b.effect &&
         a.toleration_seconds == b.toleration_seconds;
}

// Every one of `old`'s tolerations is still in `now`: only additions.
bool OnlyAdditions(const std::vector<std::unique_ptr<api::TolerationT>>& old,
                   const std::vector<std::unique_ptr<api::TolerationT>>& now) {
  return std::all_of(old.begin(), old.end(), [&](const auto& o) {
    return std::any_of(now.begin(), now.end(), [&](const auto& n) { return SameToleration(*o, *n); });
  });
}

// The images of `from`'s containers put into `into`'s, position by
// position, where both have the container.
void CopyImages(const std::vector<std::unique_ptr<api::ContainerT>>& from,
                std::vector<std::unique_ptr<api::ContainerT>>& into) {
  for (size_t i = 0; i < from.size() && i < into.size(); ++i) into[i]->image = from[i]->image;
}

constexpr std::string_view kPodUpdateForbidden =
    "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

}  // namespace

void ValidateUpdate(const api::PodT& old, const api::PodT& pod, Causes& out) {
  if (old.spec == nullptr || pod.spec == nullptr) return;
  const api::PodSpecT& was = *old.spec;
  const api::PodSpecT& now = *pod.spec;
  // activeDeadlineSeconds may be set, or lowered, never raised or unset.
  if (was.active_deadline_seconds && !now.active_deadline_seconds) {
    out.push_back(FieldError::InvalidRendered("spec.activeDeadlineSeconds", "null",
                                              "must not update from a positive integer to nil value"));
  } else if (was.active_deadline_seconds && *now.active_deadline_seconds > *was.active_deadline_seconds) {
    out.push_back(FieldError::InvalidInt("spec.activeDeadlineSeconds", *now.active_deadline_seconds,
                                         "must be less than or equal to previous value"));
  }
  // Scheduling gates may only be removed.
  for (const auto& gate : now.scheduling_gates) {
    const bool had = std::any_of(was.scheduling_gates.begin(), was.scheduling_gates.end(),
                                 [&](const auto& g) { return g->name == gate->name; });
    if (!had) {
      out.push_back(FieldError::Forbidden("spec.schedulingGates",
                                          "only deletion is allowed, but found new scheduling gate '" + gate->name + "'"));
    }
  }
  // The rest of the spec must be as it was, once the mutable fields are
  // set back to their stored values.
  api::PodSpecT rest = now;
  CopyImages(was.containers, rest.containers);
  CopyImages(was.init_containers, rest.init_containers);
  rest.active_deadline_seconds = was.active_deadline_seconds;
  if (OnlyAdditions(was.tolerations, now.tolerations)) {
    rest.tolerations.clear();
    for (const auto& t : was.tolerations) rest.tolerations.push_back(std::make_unique<api::TolerationT>(*t));
  }
  if (was.termination_grace_period_seconds.value_or(0) < 0 && now.termination_grace_period_seconds == 1) {
    rest.termination_grace_period_seconds = was.termination_grace_period_seconds;
  }
  rest.scheduling_gates.clear();
  for (const auto& g : was.scheduling_gates) rest.scheduling_gates.push_back(std::make_unique<api::PodSchedulingGateT>(*g));
  // Gates removed: the spec compares with them all restored.
  api::PodT a, b;
  a.spec = std::make_unique<api::PodSpecT>(was);
  b.spec = std::make_unique<api::PodSpecT>(std::move(rest));
  if (model::Pack(a) != model::Pack(b)) out.push_back(FieldError::Forbidden("spec", kPodUpdateForbidden));
}

void ValidateUpdate(const api::ServiceT& old, const api::ServiceT& service, Causes& out) {
  if (old.spec == nullptr || service.spec == nullptr) return;
  const std::string& was = old.spec->cluster_ip;
  const std::string& now = service.spec->cluster_ip;
  // An ExternalName service has no address to keep.
  if (!was.empty() && was != now && service.spec->type != api::ServiceType::ExternalName &&
      old.spec->type != api::ServiceType::ExternalName) {
    out.push_back(FieldError::InvalidRendered("spec.clusterIPs[0]", "[]string{" + GoQuote(now) + "}",
                                              "may not change once set"));
  }
}

void KeepAllocated(const api::ServiceT& old, api::ServiceT& service) {
  if (old.spec == nullptr || service.spec == nullptr) return;
  api::ServiceSpecT& spec = *service.spec;
  const api::ServiceSpecT& was = *old.spec;
  auto typed = [](const api::ServiceSpecT& s) {
    return s.type == api::ServiceType::NodePort || s.type == api::ServiceType::LoadBalancer;
  };
  const auto health_checked = NeedsHealthCheck;
  auto node_ports = [](const api::ServiceSpecT& s) {
    std::set<int32_t> used;
    for (const auto& p : s.ports) {
      if (p->node_port != 0) used.insert(p->node_port);
    }
    return used;
  };
  // A port left out while both types have node ports is the stored port's
  // of the same name, unless the new spec gives that value to another port.
  if (typed(was) && typed(spec)) {
    const std::set<int32_t> used = node_ports(spec);
    for (auto& p : spec.ports) {
      if (p->node_port != 0) continue;
      for (const auto& o : was.ports) {
        if (o->name == p->name && !used.contains(o->node_port)) p->node_port = o->node_port;
      }
    }
  }
  if (health_checked(was) && health_checked(spec) && spec.health_check_node_port == 0) {
    spec.health_check_node_port = was.health_check_node_port;
  }
  // A type without them drops the ones it kept unchanged, so that applying
  // `type: ClusterIP` over a NodePort Service works; likewise the health
  // check port when the Service stops being a LoadBalancer with the Local
  // policy.
  if (typed(was) && !typed(spec)) {
    const std::set<int32_t> before = node_ports(was), after = node_ports(spec);
    if (std::includes(before.begin(), before.end(), after.begin(), after.end())) {
      for (auto& p : spec.ports) p->node_port = 0;
    }
  }
  if (health_checked(was) && !health_checked(spec) && spec.health_check_node_port == was.health_check_node_port) {
    spec.health_check_node_port = 0;
  }
  if (!spec.cluster_ip.empty() || spec.type == api::ServiceType::ExternalName) return;
  spec.cluster_ip = old.spec->cluster_ip;
  spec.cluster_ips = old.spec->cluster_ips;
}

}  // namespace podflow::admission
