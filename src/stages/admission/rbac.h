// RBAC authorization, as kube-apiserver's RBAC authorizer decides: a
// request is allowed when a ClusterRoleBinding, or a RoleBinding in the
// request's namespace, binds one of the user's subjects (the user, a group,
// the service account the user is) to a role with a rule that covers the
// verb, the API group, the resource (or "resource/subresource") and, for a
// named request, the resource name. "*" matches anything in each list.
// Aggregated ClusterRoles are not expanded.
//
// Thread safety: RbacPolicy is immutable once built; share it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rbac_generated.h"
#include "stages/admission/admission.h"

namespace podflow::admission {

// The RBAC objects stored, unpacked, as one request reads them.
struct RbacPolicy {
  std::vector<std::unique_ptr<api::RoleT>> roles;
  std::vector<std::unique_ptr<api::ClusterRoleT>> cluster_roles;
  std::vector<std::unique_ptr<api::RoleBindingT>> role_bindings;
  std::vector<std::unique_ptr<api::ClusterRoleBindingT>> cluster_role_bindings;
};

bool RbacAllows(const RbacPolicy& policy, const UserInfo& user, const RequestAttributes& request);

// kube-apiserver's escalation check on RBAC writes, for `object` (packed, of
// `kind`): a Role or ClusterRole may grant only what `user` already holds
// where it applies, unless the user may `escalate` it; a binding may bind
// only a role whose rules the user holds there, unless it may `bind` that
// role. Why it may not (the reason of a 403), or nullopt. Other kinds:
// nullopt.
std::optional<std::string> EscalationRefusal(const RbacPolicy& policy, const UserInfo& user,
                                             const model::KindInfo& kind, std::string_view object);

// The roles kube-apiserver makes at its start, as manifests: the
// cluster-admin, admin, edit and view ClusterRoles, and cluster-admin bound
// to the system:masters group.
std::string BootstrapRbacManifest();

}  // namespace podflow::admission
