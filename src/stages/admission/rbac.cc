#include "stages/admission/rbac.h"

#include <algorithm>

#include "model/objects.h"

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

namespace {

constexpr std::string_view kRbacGroup = "rbac.authorization.k8s.io";

std::string GoList(const std::vector<std::string>& list) {
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i) out += (i ? " " : "") + GoQuote(list[i]);
  return out + "]";
}

// The rules of `rules` that `user` does not hold in `ns`: a rule is held
// when every verb, group, resource (and name) it lists is allowed, "*" only
// by "*".
std::vector<const api::PolicyRuleT*> NotHeld(const RbacPolicy& p, const UserInfo& user, const std::string& ns,
                                             const std::vector<std::unique_ptr<api::PolicyRuleT>>& rules) {
  std::vector<const api::PolicyRuleT*> missing;
  for (const auto& rule : rules) {
    bool held = rule->non_resource_urls.empty();  // non-resource URLs are not served: never held
    const std::vector<std::string> names = rule->resource_names.empty() ? std::vector<std::string>{""}
                                                                        : rule->resource_names;
    for (const std::string& verb : rule->verbs) {
      for (const std::string& group : rule->api_groups) {
        for (const std::string& resource : rule->resources) {
          const size_t slash = resource.find('/');
          for (const std::string& name : names) {
            RequestAttributes r{verb, group, resource.substr(0, slash),
                                slash == std::string::npos ? "" : resource.substr(slash + 1), ns, name};
            if (held && !RbacAllows(p, user, r)) held = false;
          }
        }
      }
    }
    if (!held) missing.push_back(rule.get());
  }
  return missing;
}

std::string Attempting(const UserInfo& user, const std::vector<const api::PolicyRuleT*>& missing) {
  std::string out = "user " + GoQuote(user.name) + " (groups=" + GoList(user.groups) +
                    ") is attempting to grant RBAC permissions not currently held:";
  for (const api::PolicyRuleT* r : missing) {
    out += "\n{";
    std::string fields;
    auto add = [&](std::string_view name, const std::vector<std::string>& list) {
      if (!list.empty()) fields += std::string(fields.empty() ? "" : ", ") + std::string(name) + ":" + GoList(list);
    };
    add("APIGroups", r->api_groups);
    add("Resources", r->resources);
    add("ResourceNames", r->resource_names);
    add("NonResourceURLs", r->non_resource_urls);
    add("Verbs", r->verbs);
    out += fields + "}";
  }
  return out;
}

// The rules of the role a binding refers to; null when there is none.
const std::vector<std::unique_ptr<api::PolicyRuleT>>* RulesOf(const RbacPolicy& p, const api::RoleRefT& ref,
                                                             const std::string& ns) {
  if (ref.kind == "ClusterRole") {
    for (const auto& r : p.cluster_roles) {
      if (r->metadata && r->metadata->name == ref.name) return &r->rules;
    }
  } else {
    for (const auto& r : p.roles) {
      if (r->metadata && r->metadata->name == ref.name && r->metadata->namespace_ == ns) return &r->rules;
    }
  }
  return nullptr;
}

template <typename Role>
std::optional<std::string> RoleRefusal(const RbacPolicy& p, const UserInfo& user, const Role& role,
                                       std::string_view resource) {
  const std::string ns = role.metadata ? role.metadata->namespace_ : "";
  const std::string name = role.metadata ? role.metadata->name : "";
  if (RbacAllows(p, user, {"escalate", std::string(kRbacGroup), std::string(resource), "", ns, name})) return std::nullopt;
  std::vector<const api::PolicyRuleT*> missing = NotHeld(p, user, ns, role.rules);
  if (missing.empty()) return std::nullopt;
  return Attempting(user, missing);
}

template <typename Binding>
std::optional<std::string> BindingRefusal(const RbacPolicy& p, const UserInfo& user, const Binding& binding) {
  if (!binding.role_ref) return std::nullopt;  // refused by validation
  const std::string ns = binding.metadata ? binding.metadata->namespace_ : "";
  const api::RoleRefT& ref = *binding.role_ref;
  const std::string resource = ref.kind == "ClusterRole" ? "clusterroles" : "roles";
  // `bind` on the role, asked in the binding's namespace (cluster-wide for a ClusterRoleBinding).
  if (RbacAllows(p, user, {"bind", std::string(kRbacGroup), resource, "", ns, ref.name})) {
    return std::nullopt;
  }
  const std::vector<std::unique_ptr<api::PolicyRuleT>>* rules = RulesOf(p, ref, ns);
  if (rules == nullptr) return std::nullopt;  // binds nothing yet; checked when it would
  std::vector<const api::PolicyRuleT*> missing = NotHeld(p, user, ns, *rules);
  if (missing.empty()) return std::nullopt;
  return Attempting(user, missing);
}

}  // namespace

std::optional<std::string> EscalationRefusal(const RbacPolicy& p, const UserInfo& user, const model::KindInfo& kind,
                                             std::string_view object) {
  if (kind.kind == "Role") return RoleRefusal(p, user, *model::Unpack<api::Role>(object), "roles");
  if (kind.kind == "ClusterRole") return RoleRefusal(p, user, *model::Unpack<api::ClusterRole>(object), "clusterroles");
  if (kind.kind == "RoleBinding") return BindingRefusal(p, user, *model::Unpack<api::RoleBinding>(object));
  if (kind.kind == "ClusterRoleBinding") return BindingRefusal(p, user, *model::Unpack<api::ClusterRoleBinding>(object));
  return std::nullopt;
}

std::string BootstrapRbacManifest() {
  // The resources the namespaced roles cover, by API group, as the
  // default view / edit roles list them (secrets only from edit up;
  // Endpoints and EndpointSlices read, never written, as since
  // CVE-2021-25740).
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
    resources: [pods, pods/attach, pods/exec, pods/portforward, pods/proxy, configmaps,
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
)";
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
  // A controller's role, bound to its service account as
  // kube-controller-manager's are.
  auto controller = [&role](std::string_view name, std::string rules) {
    const std::string role_name = "system:controller:" + std::string(name);
    return role(role_name, std::move(rules)) +
           "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: " + role_name +
           "\n  labels: {kubernetes.io/bootstrapping: rbac-defaults}\n  annotations: "
           "{rbac.authorization.kubernetes.io/autoupdate: \"true\"}\nroleRef: {apiGroup: rbac.authorization.k8s.io, "
           "kind: ClusterRole, name: " + role_name + "}\nsubjects:\n- {kind: ServiceAccount, name: " + std::string(name) +
           ", namespace: kube-system}\n";
  };
  // The node lifecycle controller's (taint eviction runs with it too).
  out += controller("node-controller", R"(
  - apiGroups: [""]
    resources: [nodes]
    verbs: [delete, get, list, patch, update]
  - apiGroups: [""]
    resources: [nodes/status, pods/status]
    verbs: [patch, update]
  - apiGroups: [""]
    resources: [pods]
    verbs: [delete, get, list]
  - apiGroups: ["", events.k8s.io]
    resources: [events]
    verbs: [create, patch, update])");
  out += controller("replicaset-controller", R"(
  - apiGroups: [apps, extensions]
    resources: [replicasets]
    verbs: [get, list, update, watch]
  - apiGroups: [apps, extensions]
    resources: [replicasets/status, replicasets/finalizers]
    verbs: [update]
  - apiGroups: [""]
    resources: [pods]
    verbs: [create, delete, list, patch, watch]
  - apiGroups: ["", events.k8s.io]
    resources: [events]
    verbs: [create, patch, update])");
  out += controller("deployment-controller", R"(
  - apiGroups: [apps, extensions]
    resources: [deployments]
    verbs: [get, list, update, watch]
  - apiGroups: [apps, extensions]
    resources: [deployments/status, deployments/finalizers]
    verbs: [update]
  - apiGroups: [apps, extensions]
    resources: [replicasets]
    verbs: [create, delete, get, list, patch, update, watch]
  - apiGroups: [""]
    resources: [pods]
    verbs: [get, list, update, watch]
  - apiGroups: ["", events.k8s.io]
    resources: [events]
    verbs: [create, patch, update])");
  out += controller("daemon-set-controller", R"(
  - apiGroups: [apps, extensions]
    resources: [daemonsets]
    verbs: [get, list, watch]
  - apiGroups: [apps, extensions]
    resources: [daemonsets/status, daemonsets/finalizers]
    verbs: [update]
  - apiGroups: [""]
    resources: [nodes]
    verbs: [list, watch]
  - apiGroups: [""]
    resources: [pods]
    verbs: [create, delete, list, patch, watch]
  - apiGroups: [""]
    resources: [pods/binding]
    verbs: [create]
  - apiGroups: ["", events.k8s.io]
    resources: [events]
    verbs: [create, patch, update])");
  out += controller("job-controller", R"(
  - apiGroups: [batch]
    resources: [jobs]
    verbs: [get, list, patch, update, watch]
  - apiGroups: [batch]
    resources: [jobs/finalizers, jobs/status]
    verbs: [patch, update]
  - apiGroups: [""]
    resources: [pods]
    verbs: [create, delete, list, patch, watch]
  - apiGroups: ["", events.k8s.io]
    resources: [events]
    verbs: [create, patch, update])");
  out += controller("cronjob-controller", R"(
  - apiGroups: [batch]
    resources: [cronjobs]
    verbs: [get, list, update, watch]
  - apiGroups: [batch]
    resources: [jobs]
    verbs: [create, delete, get, list, patch, update, watch]
  - apiGroups: [batch]
    resources: [cronjobs/status, cronjobs/finalizers]
    verbs: [update]
  - apiGroups: [""]
    resources: [pods]
    verbs: [delete, list]
  - apiGroups: ["", events.k8s.io]
    resources: [events]
    verbs: [create, patch, update])");
  out += controller("ttl-after-finished-controller", R"(
  - apiGroups: [batch]
    resources: [jobs]
    verbs: [delete, get, list, watch]
  - apiGroups: ["", events.k8s.io]
    resources: [events]
    verbs: [create, patch, update])");
  // The garbage collector reads every kind and deletes, patches and
  // updates any object (its owner references and finalizers).
  out += controller("generic-garbage-collector", R"(
  - apiGroups: ["*"]
    resources: ["*"]
    verbs: [delete, get, list, patch, update, watch]
  - apiGroups: ["", events.k8s.io]
    resources: [events]
    verbs: [create, patch, update])");
  return out;
}

}  // namespace podflow::admission
