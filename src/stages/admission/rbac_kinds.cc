// rbac.authorization.k8s.io/v1: rule and binding validation with
// kube-apiserver's messages, and the API group a binding's subjects and
// roleRef default to.
#include "stages/admission/kind_rules.h"
#include "stages/admission/names.h"

namespace podflow::admission {
namespace {

constexpr std::string_view kRbacGroup = "rbac.authorization.k8s.io";

void ValidateRules(Causes& out, const std::vector<std::unique_ptr<api::PolicyRuleT>>& rules, bool namespaced) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const api::PolicyRuleT& rule = *rules[i];
    const std::string at = Index("rules", i);
    if (rule.verbs.empty()) out.push_back(FieldError::Required(at + ".verbs", "verbs must contain at least one value"));
    if (!rule.non_resource_urls.empty()) {
      if (namespaced) {
        out.push_back(FieldError::InvalidRendered(at + ".nonResourceURLs", GoStrings(rule.non_resource_urls),
                                                  "namespaced rules cannot apply to non-resource URLs"));
      }
      if (!rule.api_groups.empty() || !rule.resources.empty() || !rule.resource_names.empty()) {
        out.push_back(FieldError::InvalidRendered(at + ".nonResourceURLs", GoStrings(rule.non_resource_urls),
                                                  "rules cannot apply to both regular resources and non-resource URLs"));
      }
      continue;
    }
    if (rule.api_groups.empty()) {
      out.push_back(FieldError::Required(at + ".apiGroups", "resource rules must supply at least one api group"));
    }
    if (rule.resources.empty()) {
      out.push_back(FieldError::Required(at + ".resources", "resource rules must supply at least one resource"));
    }
  }
}

void DefaultBinding(std::vector<std::unique_ptr<api::SubjectT>>& subjects, std::unique_ptr<api::RoleRefT>& role_ref) {
  for (auto& s : subjects) {
    if (s->api_group.empty() && (s->kind == "User" || s->kind == "Group")) s->api_group = kRbacGroup;
  }
  if (role_ref && role_ref->api_group.empty()) role_ref->api_group = kRbacGroup;
}

void ValidateBinding(Causes& out, const std::vector<std::unique_ptr<api::SubjectT>>& subjects,
                     const api::RoleRefT* role_ref, bool namespaced) {
  if (role_ref == nullptr) {
    out.push_back(FieldError::Required("roleRef.name"));
  } else {
    if (role_ref->api_group != kRbacGroup) {
      out.push_back(FieldError::NotSupported("roleRef.apiGroup", role_ref->api_group, {std::string(kRbacGroup)}));
    }
    const std::vector<std::string> kinds =
        namespaced ? std::vector<std::string>{"Role", "ClusterRole"} : std::vector<std::string>{"ClusterRole"};
    if (std::find(kinds.begin(), kinds.end(), role_ref->kind) == kinds.end()) {
      out.push_back(FieldError::NotSupported("roleRef.kind", role_ref->kind, kinds));
    }
    if (role_ref->name.empty()) {
      out.push_back(FieldError::Required("roleRef.name"));
    } else {
      AddInvalid(out, "roleRef.name", role_ref->name, PathSegmentNameErrors(role_ref->name));
    }
  }
  for (size_t i = 0; i < subjects.size(); ++i) {
    const api::SubjectT& s = *subjects[i];
    const std::string at = Index("subjects", i);
    if (s.name.empty()) out.push_back(FieldError::Required(at + ".name"));
    if (s.kind == "ServiceAccount") {
      if (!s.api_group.empty()) out.push_back(FieldError::NotSupported(at + ".apiGroup", s.api_group, {""}));
      if (!s.name.empty()) AddInvalid(out, at + ".name", s.name, IsDns1123Subdomain(s.name));
      if (!namespaced && s.namespace_.empty()) out.push_back(FieldError::Required(at + ".namespace"));
    } else if (s.kind == "User" || s.kind == "Group") {
      if (s.api_group != kRbacGroup) {
        out.push_back(FieldError::NotSupported(at + ".apiGroup", s.api_group, {std::string(kRbacGroup)}));
      }
    } else {
      out.push_back(FieldError::NotSupported(at + ".kind", s.kind, {"ServiceAccount", "User", "Group"}));
    }
  }
}

}  // namespace

void DefaultKind(api::RoleBindingT& rb) { DefaultBinding(rb.subjects, rb.role_ref); }
void DefaultKind(api::ClusterRoleBindingT& crb) { DefaultBinding(crb.subjects, crb.role_ref); }

void ValidateKind(const api::RoleT& role, Causes& out) { ValidateRules(out, role.rules, true); }
void ValidateKind(const api::ClusterRoleT& role, Causes& out) { ValidateRules(out, role.rules, false); }
void ValidateKind(const api::RoleBindingT& rb, Causes& out) {
  ValidateBinding(out, rb.subjects, rb.role_ref.get(), true);
}
void ValidateKind(const api::ClusterRoleBindingT& crb, Causes& out) {
  ValidateBinding(out, crb.subjects, crb.role_ref.get(), false);
}

namespace {

// A binding's roleRef is fixed once created.
void RoleRefFixed(const std::unique_ptr<api::RoleRefT>& old, const std::unique_ptr<api::RoleRefT>& now, Causes& out) {
  static const api::RoleRefT kNone;
  const api::RoleRefT& a = old ? *old : kNone;
  const api::RoleRefT& b = now ? *now : kNone;
  if (a.api_group == b.api_group && a.kind == b.kind && a.name == b.name) return;
  out.push_back(FieldError::InvalidRendered("roleRef",
                                            "rbac.RoleRef{APIGroup:" + GoQuote(b.api_group) + ", Kind:" + GoQuote(b.kind) +
                                                ", Name:" + GoQuote(b.name) + "}",
                                            "cannot change roleRef"));
}

}  // namespace

void ValidateUpdate(const api::RoleBindingT& old, const api::RoleBindingT& rb, Causes& out) {
  RoleRefFixed(old.role_ref, rb.role_ref, out);
}
void ValidateUpdate(const api::ClusterRoleBindingT& old, const api::ClusterRoleBindingT& crb, Causes& out) {
  RoleRefFixed(old.role_ref, crb.role_ref, out);
}

}  // namespace podflow::admission
