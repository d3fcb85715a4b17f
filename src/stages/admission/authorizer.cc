// Authorization: AlwaysAllow, or RBAC over the policy the source gives.
#include <algorithm>

#include "stages/admission/admission.h"
#include "stages/admission/rbac.h"

namespace podflow::admission {

Authorizer Authorizer::Rbac(PolicySource source) {
  Authorizer out;
  out.source_ = std::move(source);
  return out;
}

bool Authorizer::Allows(const UserInfo& user, const RequestAttributes& request) const {
  if (!source_) return true;
  if (std::find(user.groups.begin(), user.groups.end(), "system:masters") != user.groups.end()) return true;
  std::shared_ptr<const RbacPolicy> policy = source_();
  return policy != nullptr && RbacAllows(*policy, user, request);
}

std::optional<std::string> Authorizer::Escalation(const UserInfo& user, const model::KindInfo& kind,
                                                  std::string_view object) const {
  if (!source_ || model::ApiGroup(kind) != "rbac.authorization.k8s.io") return std::nullopt;
  if (std::find(user.groups.begin(), user.groups.end(), "system:masters") != user.groups.end()) return std::nullopt;
  std::shared_ptr<const RbacPolicy> policy = source_();
  if (policy == nullptr) return std::nullopt;
  return EscalationRefusal(*policy, user, kind, object);
}

}  // namespace podflow::admission
