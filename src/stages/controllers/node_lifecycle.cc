#include "stages/controllers/node_lifecycle.h"

#include <algorithm>
#include <array>
#include <memory>

#include "model/conditions.h"
#include "model/value.h"

namespace podflow::controllers {
namespace {

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

bool ConditionIs(const api::Node& node, std::string_view type, api::ConditionStatus status) {
  return model::ConditionStatusOf(node, type) == status;
}

struct WantedTaint {
  std::string_view key;
  api::TaintEffect effect;
};

// The taints the node's conditions call for.
std::vector<WantedTaint> Wanted(const api::Node& node) {
  using CS = api::ConditionStatus;
  using TE = api::TaintEffect;
  std::vector<WantedTaint> out;
  const std::optional<CS> ready = model::ConditionStatusOf(node, "Ready");
  // NoSchedule, by condition (TaintNodesByCondition).
  if (ready == CS::False) out.push_back({kNotReadyTaint, TE::NoSchedule});
  if (ready == CS::Unknown) out.push_back({kUnreachableTaint, TE::NoSchedule});
  if (ConditionIs(node, "MemoryPressure", CS::True)) out.push_back({"node.kubernetes.io/memory-pressure", TE::NoSchedule});
  if (ConditionIs(node, "DiskPressure", CS::True)) out.push_back({"node.kubernetes.io/disk-pressure", TE::NoSchedule});
  if (ConditionIs(node, "PIDPressure", CS::True)) out.push_back({"node.kubernetes.io/pid-pressure", TE::NoSchedule});
  if (ConditionIs(node, "NetworkUnavailable", CS::True)) {
    out.push_back({"node.kubernetes.io/network-unavailable", TE::NoSchedule});
  }
  if (node.spec() != nullptr && node.spec()->unschedulable()) {
    out.push_back({"node.kubernetes.io/unschedulable", TE::NoSchedule});
  }
  // NoExecute, for eviction: one of the two at a time.
  if (ready == CS::False) out.push_back({kNotReadyTaint, TE::NoExecute});
  if (ready == CS::Unknown) out.push_back({kUnreachableTaint, TE::NoExecute});
  return out;
}

// The taints the controller manages (and so removes when their condition is gone).
bool Managed(const std::string& key, api::TaintEffect effect) {
  static constexpr std::array<std::string_view, 7> kNoSchedule = {
      kNotReadyTaint, kUnreachableTaint, "node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure",
      "node.kubernetes.io/pid-pressure", "node.kubernetes.io/network-unavailable", "node.kubernetes.io/unschedulable"};
  if (effect == api::TaintEffect::NoSchedule) {
    return std::find(kNoSchedule.begin(), kNoSchedule.end(), key) != kNoSchedule.end();
  }
  return effect == api::TaintEffect::NoExecute && (key == kNotReadyTaint || key == kUnreachableTaint);
}

}  // namespace

NodeHealth::Probe& NodeHealth::Touch(const std::string& node, SimTime now) {
  auto [it, added] = probes_.try_emplace(node);
  if (added) it->second.at = now;
  return it->second;
}

void NodeHealth::ObserveNode(const std::string& name, const api::Node& node, SimTime now) {
  Probe& probe = Touch(name, now);
  const api::NodeCondition* ready = model::FindCondition(node, "Ready");
  const std::string heartbeat = ready != nullptr ? Str(ready->last_heartbeat_time()) : std::string();
  if (heartbeat != probe.heartbeat) {
    probe.heartbeat = heartbeat;
    probe.at = now;
  }
}

void NodeHealth::ObserveLease(const std::string& node, const api::Lease& lease, SimTime now) {
  Probe& probe = Touch(node, now);
  const std::string renewed = lease.spec() != nullptr ? Str(lease.spec()->renew_time()) : std::string();
  // A renewal moves the probe on; an older renewTime does not.
  if (!renewed.empty() && renewed > probe.renewed) {
    probe.renewed = renewed;
    probe.at = now;
  }
}

void NodeHealth::Forget(const std::string& node) { probes_.erase(node); }

bool NodeHealth::TimedOut(const std::string& name, const api::Node& node, SimTime now) const {
  auto it = probes_.find(name);
  if (it == probes_.end()) return false;  // not seen yet: heard of from now on
  const SimDuration grace = model::FindCondition(node, "Ready") == nullptr ? config_.startup_grace_period : config_.grace_period;
  return now > it->second.at + grace;
}

std::optional<api::NodeT> MarkedUnknown(const api::Node& node, SimTime now) {
  // Written only when Ready changes, as the controller writes (the others
  // are marked with it).
  if (model::ConditionStatusOf(node, "Ready") == api::ConditionStatus::Unknown) return std::nullopt;
  std::unique_ptr<api::NodeT> out(node.UnPack());
  if (!out->status) out->status = std::make_unique<api::NodeStatusT>();
  auto& conditions = out->status->conditions;
  const std::string time = FormatRfc3339(now);
  for (std::string_view type : model::kKubeletNodeConditions) {
    auto it = std::ranges::find_if(conditions, [&](const auto& c) { return c->type == type; });
    if (it == conditions.end()) {
      auto c = std::make_unique<api::NodeConditionT>();
      c->type = std::string(type);
      c->status = api::ConditionStatus::Unknown;
      c->reason = "NodeStatusNeverUpdated";
      c->message = "Kubelet never posted node status.";
      c->last_heartbeat_time = out->metadata ? out->metadata->creation_timestamp : std::string();
      c->last_transition_time = time;
      conditions.push_back(std::move(c));
      continue;
    }
    if ((*it)->status == api::ConditionStatus::Unknown) continue;
    (*it)->status = api::ConditionStatus::Unknown;
    (*it)->reason = "NodeStatusUnknown";
    (*it)->message = "Kubelet stopped posting node status.";
    (*it)->last_transition_time = time;
  }
  return std::move(*out);
}

std::optional<api::NodeT> ConditionTaints(const api::Node& node, SimTime now) {
  const std::vector<WantedTaint> wanted = Wanted(node);
  // Most looks find nothing to do: checked on the stored node first.
  const auto* stored = node.spec() != nullptr ? node.spec()->taints() : nullptr;
  size_t managed = 0;
  if (stored != nullptr) {
    for (const api::Taint* t : *stored) managed += t->key() != nullptr && Managed(t->key()->str(), t->effect());
  }
  const bool as_wanted = managed == wanted.size() && std::ranges::all_of(wanted, [&](const WantedTaint& w) {
                           return stored != nullptr && std::any_of(stored->begin(), stored->end(), [&](const api::Taint* t) {
                                    return t->key() != nullptr && t->key()->string_view() == w.key && t->effect() == w.effect;
                                  });
                         });
  if (as_wanted) return std::nullopt;
  std::unique_ptr<api::NodeT> out(node.UnPack());
  if (!out->spec) out->spec = std::make_unique<api::NodeSpecT>();
  auto& taints = out->spec->taints;
  bool changed = false;
  // Managed taints whose condition is gone.
  changed |= std::erase_if(taints, [&](const auto& t) {
               return Managed(t->key, t->effect) && std::ranges::none_of(wanted, [&](const WantedTaint& w) {
                        return w.key == t->key && w.effect == t->effect;
                      });
             }) > 0;
  for (const WantedTaint& w : wanted) {
    if (std::ranges::any_of(taints, [&](const auto& t) { return t->key == w.key && t->effect == w.effect; })) continue;
    auto taint = std::make_unique<api::TaintT>();
    taint->key = std::string(w.key);
    taint->effect = w.effect;
    // Only the NoExecute ones carry the time (eviction counts from it).
    if (w.effect == api::TaintEffect::NoExecute) taint->time_added = FormatRfc3339(now);
    taints.push_back(std::move(taint));
    changed = true;
  }
  if (!changed) return std::nullopt;
  return std::move(*out);
}

std::string PodConditionPatch(std::string_view type, std::string_view status, std::string_view reason,
                              std::string_view message, SimTime now) {
  model::Value condition = model::Value::Object();
  condition.Set("type", model::Value::String(std::string(type)));
  condition.Set("status", model::Value::String(std::string(status)));
  if (!reason.empty()) condition.Set("reason", model::Value::String(std::string(reason)));
  if (!message.empty()) condition.Set("message", model::Value::String(std::string(message)));
  condition.Set("lastTransitionTime", model::Value::String(FormatRfc3339(now)));
  model::Value conditions = model::Value::Array();
  conditions.Append(std::move(condition));
  model::Value status_value = model::Value::Object();
  status_value.Set("conditions", std::move(conditions));
  model::Value patch = model::Value::Object();
  patch.Set("status", std::move(status_value));
  return model::ToJson(patch);
}

}  // namespace podflow::controllers
