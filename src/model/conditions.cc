#include "model/conditions.h"

#include "model/pod_phase.h"

namespace podflow::model {
namespace {


// Go's fmt %s of a []string: "[a b c]".
std::string GoList(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) out += (i ? " " : "") + names[i];
  return out + "]";
}

std::string JoinMessages(const std::vector<std::string>& unknown, const char* unknown_what,
                         const std::vector<std::string>& other, const char* other_what) {
  std::string message;
  if (!unknown.empty()) message = std::string(unknown_what) + GoList(unknown);
  if (!other.empty()) {
    message += (message.empty() ? "" : ", ") + std::string(other_what) + GoList(other);
  }
  return message;
}

const char* StatusName(api::ConditionStatus s) {
  switch (s) {
    case api::ConditionStatus::True:
      return "True";
    case api::ConditionStatus::False:
      return "False";
    case api::ConditionStatus::Unknown:
      return "Unknown";
    default:
      return "";
  }
}

}  // namespace

ConditionValue InitializedCondition(const api::PodSpecT& spec, const api::PodStatusT& status) {
  ConditionValue c{"Initialized", api::ConditionStatus::True, "", ""};
  if (status.init_container_statuses.empty() && !spec.init_containers.empty()) {
    return {c.type, api::ConditionStatus::False, kUnknownContainerStatuses, ""};
  }
  std::vector<std::string> unknown, incomplete;
  for (const auto& container : spec.init_containers) {
    const api::ContainerStatusT* s = FindStatus(status.init_container_statuses, container->name);
    if (s == nullptr || s->state == nullptr) {
      unknown.push_back(container->name);
    } else if (IsRestartableInitContainer(*container)) {
      if (!s->started.has_value() || !*s->started) incomplete.push_back(container->name);
    } else if (!s->state->terminated || s->state->terminated->exit_code != 0) {
      incomplete.push_back(container->name);
    }
  }
  if (status.phase == api::PodPhase::Succeeded && unknown.empty()) {
    return {c.type, api::ConditionStatus::True, kPodCompleted, ""};
  }
  // An app container that has run means the pod initialized before.
  if (AppContainersHaveStarted(status)) return c;
  std::string message = JoinMessages(unknown, "containers with unknown status: ", incomplete,
                                     "containers with incomplete status: ");
  if (!message.empty()) {
    return {c.type, api::ConditionStatus::False, kContainersNotInitialized, std::move(message)};
  }
  return c;
}

ConditionValue ContainersReadyCondition(const api::PodSpecT& spec, const api::PodStatusT& status) {
  ConditionValue c{"ContainersReady", api::ConditionStatus::True, "", ""};
  if (status.container_statuses.empty() && !spec.containers.empty()) {
    return {c.type, api::ConditionStatus::False, kUnknownContainerStatuses, ""};
  }
  std::vector<std::string> unknown, unready;
  const auto check = [&](const std::string& name, const api::ContainerStatusT* s) {
    if (s == nullptr) {
      unknown.push_back(name);
    } else if (!s->ready) {
      unready.push_back(name);
    }
  };
  for (const auto& container : spec.init_containers) {  // sidecars must be ready too
    if (!IsRestartableInitContainer(*container)) continue;
    check(container->name, FindStatus(status.init_container_statuses, container->name));
  }
  for (const auto& container : spec.containers) {
    check(container->name, FindStatus(status.container_statuses, container->name));
  }
  if (status.phase == api::PodPhase::Succeeded && unknown.empty()) {
    return {c.type, api::ConditionStatus::False, kPodCompleted, ""};
  }
  if (status.phase == api::PodPhase::Failed) {
    return {c.type, api::ConditionStatus::False, kPodFailed, ""};
  }
  std::string message = JoinMessages(unknown, "containers with unknown status: ", unready,
                                     "containers with unready status: ");
  if (!message.empty()) {
    return {c.type, api::ConditionStatus::False, kContainersNotReady, std::move(message)};
  }
  return c;
}

ConditionValue ReadyCondition(const api::PodSpecT& spec, const api::PodStatusT& status) {
  ConditionValue containers = ContainersReadyCondition(spec, status);
  if (containers.status != api::ConditionStatus::True) {
    containers.type = "Ready";
    return containers;
  }
  std::string message;
  for (const auto& gate : spec.readiness_gates) {
    const api::PodConditionT* found = nullptr;
    for (const auto& cond : status.conditions) {
      if (cond && cond->type == gate->condition_type) found = cond.get();
    }
    std::string part;
    if (found == nullptr) {
      part = "corresponding condition of pod readiness gate \"" + gate->condition_type +
             "\" does not exist.";
    } else if (found->status != api::ConditionStatus::True) {
      part = "the status of pod readiness gate \"" + gate->condition_type +
             "\" is not \"True\", but " + StatusName(found->status);
    }
    if (!part.empty()) message += (message.empty() ? "" : ", ") + part;
  }
  if (!message.empty()) {
    return {"Ready", api::ConditionStatus::False, kReadinessGatesNotReady, std::move(message)};
  }
  return {"Ready", api::ConditionStatus::True, "", ""};
}

namespace {

template <typename Conditions>
auto FindIn(const Conditions* conditions, std::string_view type) -> decltype(conditions->Get(0)) {
  if (conditions == nullptr) return nullptr;
  for (const auto* c : *conditions) {
    if (c->type() != nullptr && c->type()->string_view() == type) return c;
  }
  return nullptr;
}

template <typename Condition>
std::optional<api::ConditionStatus> StatusOf(const Condition* c) {
  if (c == nullptr) return std::nullopt;
  return c->status();
}

}  // namespace

const api::PodCondition* FindCondition(const api::Pod& pod, std::string_view type) {
  return FindIn(pod.status() ? pod.status()->conditions() : nullptr, type);
}

const api::NodeCondition* FindCondition(const api::Node& node, std::string_view type) {
  return FindIn(node.status() ? node.status()->conditions() : nullptr, type);
}

std::optional<api::ConditionStatus> ConditionStatusOf(const api::Pod& pod, std::string_view type) {
  return StatusOf(FindCondition(pod, type));
}

std::optional<api::ConditionStatus> ConditionStatusOf(const api::Node& node, std::string_view type) {
  return StatusOf(FindCondition(node, type));
}

namespace {

template <typename Conditions>
auto FindNative(Conditions& conditions, std::string_view type) -> decltype(conditions.front().get()) {
  for (const auto& c : conditions) {
    if (c && c->type == type) return c.get();
  }
  return nullptr;
}

}  // namespace

const api::PodConditionT* FindCondition(const api::PodStatusT& status, std::string_view type) {
  return FindNative(status.conditions, type);
}

const api::NodeConditionT* FindCondition(const api::NodeStatusT& status, std::string_view type) {
  return FindNative(status.conditions, type);
}

std::unique_ptr<api::PodConditionT> StampCondition(const ConditionValue& value,
                                                   const api::PodStatusT& previous,
                                                   const std::string& now) {
  auto c = std::make_unique<api::PodConditionT>();
  c->type = value.type;
  c->status = value.status;
  c->reason = value.reason;
  c->message = value.message;
  const api::PodConditionT* before = FindCondition(previous, value.type);
  c->last_transition_time =
      before != nullptr && before->status == value.status ? before->last_transition_time : now;
  return c;
}

void SetCondition(api::PodStatusT& status, const ConditionValue& value, const std::string& now_rfc3339) {
  std::unique_ptr<api::PodConditionT> stamped = StampCondition(value, status, now_rfc3339);
  for (auto& c : status.conditions) {
    if (c && c->type == value.type) {
      c = std::move(stamped);
      return;
    }
  }
  status.conditions.push_back(std::move(stamped));
}

}  // namespace podflow::model
