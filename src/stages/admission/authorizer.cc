// Authorization: a list of allow rules, or allow-all when no policy is given.
#include <algorithm>
#include <array>

#include "stages/admission/admission.h"

namespace podflow::admission {
namespace {

constexpr std::array<std::string_view, 8> kVerbs = {"create", "get",   "list",   "watch",
                                                    "update", "patch", "delete", "*"};

bool Contains(const std::vector<std::string>& list, std::string_view value) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& s) { return s == "*" || s == value; });
}

bool MatchesSubject(const PolicyRule& rule, const UserInfo& user) {
  if (!rule.user.empty() && (rule.user == "*" || rule.user == user.name)) return true;
  if (rule.group.empty()) return false;
  if (rule.group == "*") return true;
  return std::find(user.groups.begin(), user.groups.end(), rule.group) != user.groups.end();
}

bool MatchesNamespace(const PolicyRule& rule, std::string_view namespace_) {
  if (rule.namespaces.empty()) return true;
  // A cluster-scoped request is only covered by "every namespace".
  if (namespace_.empty()) {
    return std::find(rule.namespaces.begin(), rule.namespaces.end(), "*") != rule.namespaces.end();
  }
  return Contains(rule.namespaces, namespace_);
}

}  // namespace

Result<Authorizer> Authorizer::Create(std::vector<PolicyRule> rules) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const PolicyRule& r = rules[i];
    std::string where = "policy rule " + std::to_string(i) + ": ";
    if (r.user.empty() == r.group.empty()) {
      return Status::Invalid(where + "set exactly one of user and group");
    }
    if (r.verbs.empty()) return Status::Invalid(where + "verbs is empty");
    for (const std::string& v : r.verbs) {
      if (std::find(kVerbs.begin(), kVerbs.end(), v) == kVerbs.end()) {
        return Status::Invalid(where + "unknown verb \"" + v +
                               "\" (create, get, list, watch, update, patch, delete, *)");
      }
    }
    if (r.resources.empty()) return Status::Invalid(where + "resources is empty");
    for (const std::string& res : r.resources) {
      if (res != "*" && model::FindResource(res) == nullptr) {
        return Status::Invalid(where + "unknown resource \"" + res + "\"");
      }
    }
  }
  // Resources may be written singular or short ("pod", "po"): store the plural.
  for (PolicyRule& r : rules) {
    for (std::string& res : r.resources) {
      if (res != "*") res = std::string(model::FindResource(res)->resource);
    }
  }
  Authorizer out;
  out.rules_ = std::move(rules);
  return out;
}

bool Authorizer::Allows(const UserInfo& user, std::string_view verb, std::string_view resource,
                        std::string_view namespace_) const {
  if (!rules_.has_value()) return true;
  if (std::find(user.groups.begin(), user.groups.end(), "system:masters") != user.groups.end()) {
    return true;
  }
  for (const PolicyRule& rule : *rules_) {
    if (MatchesSubject(rule, user) && Contains(rule.verbs, verb) &&
        Contains(rule.resources, resource) && MatchesNamespace(rule, namespace_)) {
      return true;
    }
  }
  return false;
}

}  // namespace podflow::admission
