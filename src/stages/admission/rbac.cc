#include "stages/admission/rbac.h"

#include <algorithm>

namespace podflow::admission {
namespace {

bool Covers(const std::vector<std::string>& list, std::string_view value) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& s) { return s == "*" || s == value; });
}

// A rule's resources name the resource, "resource/subresource", "*", or
// "*/subresource".
bool CoversResource(const std::vector<std::string>& resources, const RequestAttributes& r) {
  const std::string combined = r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
  return std::any_of(resources.begin(), resources.end(), [&](const std::string& s) {
    if (s == "*" || s == combined) return true;
    return !r.subresource.empty() && s == "*/" + r.subresource;
  });
}

bool RuleAllows(const api::PolicyRuleT& rule, const RequestAttributes& r) {
  if (!Covers(rule.verbs, r.verb) || !Covers(rule.api_groups, r.api_group) ||
      !CoversResource(rule.resources, r)) {
    return false;
  }
  if (rule.resource_names.empty()) return true;
  // Names restrict only requests that name an object.
  return !r.name.empty() && std::find(rule.resource_names.begin(), rule.resource_names.end(), r.name) !=
                                rule.resource_names.end();
}

bool SubjectMatches(const api::SubjectT& s, const UserInfo& user, std::string_view binding_namespace) {
  if (s.kind == "User") return s.name == user.name;
  if (s.kind == "Group") return std::find(user.groups.begin(), user.groups.end(), s.name) != user.groups.end();
  if (s.kind == "ServiceAccount") {
    const std::string ns = s.namespace_.empty() ? std::string(binding_namespace) : s.namespace_;
    return user.name == "system:serviceaccount:" + ns + ":" + s.name;
  }
  return false;
}

template <typename Binding>
bool Binds(const Binding& b, const UserInfo& user, std::string_view binding_namespace) {
  return std::any_of(b.subjects.begin(), b.subjects.end(),
                     [&](const auto& s) { return SubjectMatches(*s, user, binding_namespace); });
}

template <typename Role>
bool RoleAllows(const Role& role, const RequestAttributes& r) {
  return std::any_of(role.rules.begin(), role.rules.end(), [&](const auto& rule) { return RuleAllows(*rule, r); });
}

bool ClusterRoleAllows(const RbacPolicy& p, const std::string& name, const RequestAttributes& r) {
  return std::any_of(p.cluster_roles.begin(), p.cluster_roles.end(), [&](const auto& role) {
    return role->metadata && role->metadata->name == name && RoleAllows(*role, r);
  });
}

}  // namespace

bool RbacAllows(const RbacPolicy& p, const UserInfo& user, const RequestAttributes& r) {
  for (const auto& b : p.cluster_role_bindings) {
    if (b->role_ref && b->role_ref->kind == "ClusterRole" && Binds(*b, user, "") &&
        ClusterRoleAllows(p, b->role_ref->name, r)) {
      return true;
    }
  }
  if (r.namespace_.empty()) return false;
  for (const auto& b : p.role_bindings) {
    if (!b->metadata || b->metadata->namespace_ != r.namespace_ || !b->role_ref ||
        !Binds(*b, user, r.namespace_)) {
      continue;
    }
    if (b->role_ref->kind == "ClusterRole" && ClusterRoleAllows(p, b->role_ref->name, r)) return true;
    if (b->role_ref->kind != "Role") continue;
    for (const auto& role : p.roles) {
      if (role->metadata && role->metadata->namespace_ == r.namespace_ && role->metadata->name == b->role_ref->name &&
          RoleAllows(*role, r)) {
        return true;
      }
    }
  }
  return false;
}

std::string BootstrapRbacManifest() {
  // The resources the namespaced roles cover, by API group, as the
  // default view / edit roles list them (secrets only from edit up).
  constexpr std::string_view kReadable = R"(
  - apiGroups: [""]
    resources: [pods, pods/log, pods/status, configmaps, endpoints, persistentvolumeclaims,
                persistentvolumeclaims/status, replicationcontrollers, services, services/status,
                serviceaccounts, events, limitranges, resourcequotas, resourcequotas/status, bindings]
    verbs: [get, list, watch]
  - apiGroups: [""]
    resources: [namespaces, namespaces/status]
    verbs: [get, list, watch]
  - apiGroups: [apps]
    resources: [daemonsets, daemonsets/status, deployments, deployments/status, deployments/scale,
                replicasets, replicasets/status, replicasets/scale, statefulsets, statefulsets/status,
                statefulsets/scale, controllerrevisions]
    verbs: [get, list, watch]
  - apiGroups: [batch]
    resources: [jobs, jobs/status, cronjobs, cronjobs/status]
    verbs: [get, list, watch]
  - apiGroups: [policy]
    resources: [poddisruptionbudgets, poddisruptionbudgets/status]
    verbs: [get, list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [get, list, watch])";
  constexpr std::string_view kWritable = R"(
  - apiGroups: [""]
    resources: [pods, pods/attach, pods/exec, pods/portforward, pods/proxy, configmaps, endpoints,
                persistentvolumeclaims, replicationcontrollers, services, serviceaccounts, secrets]
    verbs: [create, delete, deletecollection, patch, update]
  - apiGroups: [""]
    resources: [secrets]
    verbs: [get, list, watch]
  - apiGroups: [apps]
    resources: [daemonsets, deployments, deployments/scale, deployments/rollback, replicasets,
                replicasets/scale, statefulsets, statefulsets/scale]
    verbs: [create, delete, deletecollection, patch, update]
  - apiGroups: [batch]
    resources: [jobs, cronjobs]
    verbs: [create, delete, deletecollection, patch, update]
  - apiGroups: [policy]
    resources: [poddisruptionbudgets]
    verbs: [create, delete, deletecollection, patch, update]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [create, delete, deletecollection, patch, update])";
  constexpr std::string_view kAdmin = R"(
  - apiGroups: [rbac.authorization.k8s.io]
    resources: [roles, rolebindings]
    verbs: [create, delete, deletecollection, get, list, patch, update, watch])";
  auto role = [](std::string_view name, std::string rules) {
    return "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: " +
           std::string(name) +
           "\n  labels: {kubernetes.io/bootstrapping: rbac-defaults}\n  annotations: "
           "{rbac.authorization.kubernetes.io/autoupdate: \"true\"}\nrules:" +
           rules + "\n";
  };
  std::string out = role("cluster-admin", R"(
  - apiGroups: ["*"]
    resources: ["*"]
    verbs: ["*"]
  - nonResourceURLs: ["*"]
    verbs: ["*"])");
  out += role("admin", std::string(kReadable) + std::string(kWritable) + std::string(kAdmin));
  out += role("edit", std::string(kReadable) + std::string(kWritable));
  out += role("view", std::string(kReadable));
  out += R"(---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cluster-admin
  labels: {kubernetes.io/bootstrapping: rbac-defaults}
  annotations: {rbac.authorization.kubernetes.io/autoupdate: "true"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:masters"}
)";
  return out;
}

}  // namespace podflow::admission
