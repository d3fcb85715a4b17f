#include "stages/controllers/daemon_set.h"

#include <algorithm>

#include "scheduler/plugins/node_affinity/node_affinity.h"
#include "stages/controllers/deployment.h"

namespace podflow::controllers {
namespace {

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

model::Toleration ExistsToleration(std::string key, api::TaintEffect effect) {
  model::Toleration t;
  t.key = std::move(key);
  t.op = api::TolerationOperator::Exists;
  t.effect = effect;
  return t;
}

// Whether some taint of `node` passing `counts` is tolerated by none of `tolerations`.
template <typename Counts>
bool HasUntoleratedTaint(const scheduler::NodeInfo& node,
                         const std::vector<model::Toleration>& tolerations, Counts counts) {
  return std::ranges::any_of(node.taints, [&](const model::Taint& taint) {
    return counts(taint.effect) && !model::TolerationsTolerateTaint(tolerations, taint);
  });
}

bool IsPodAvailable(const PodRecord* pod, int32_t min_ready_seconds, SimTime now) {
  return pod != nullptr && IsAvailable(*pod, min_ready_seconds, now);
}

// At most one not-deleting updated and one old pod of the node
// (findUpdatedPodsOnNode); false when there are more.
bool UpdatedAndOld(const DaemonNode& node, const std::string& hash, const PodRecord*& updated,
                   const PodRecord*& old) {
  updated = old = nullptr;
  for (const PodRecord* pod : node.pods) {
    if (pod->deleting) continue;
    const PodRecord*& slot = IsUpdatedDaemonPod(*pod, hash) ? updated : old;
    if (slot != nullptr) return false;
    slot = pod;
  }
  return true;
}

}  // namespace

std::vector<model::Toleration> DaemonPodTolerations(bool host_network) {
  using api::TaintEffect;
  std::vector<model::Toleration> out{
      ExistsToleration("node.kubernetes.io/not-ready", TaintEffect::NoExecute),
      ExistsToleration("node.kubernetes.io/unreachable", TaintEffect::NoExecute),
      ExistsToleration("node.kubernetes.io/disk-pressure", TaintEffect::NoSchedule),
      ExistsToleration("node.kubernetes.io/memory-pressure", TaintEffect::NoSchedule),
      ExistsToleration("node.kubernetes.io/pid-pressure", TaintEffect::NoSchedule),
      ExistsToleration("node.kubernetes.io/unschedulable", TaintEffect::NoSchedule),
  };
  if (host_network)
    out.push_back(
        ExistsToleration("node.kubernetes.io/network-unavailable", TaintEffect::NoSchedule));
  return out;
}

std::vector<model::Toleration> WithDaemonPodTolerations(std::vector<model::Toleration> tolerations,
                                                        bool host_network) {
  for (model::Toleration& wanted : DaemonPodTolerations(host_network)) {
    // One of the same key, operator, value and effect is replaced (its
    // tolerationSeconds dropped), as AddOrUpdateTolerationInPodSpec does.
    auto same = std::ranges::find_if(tolerations, [&](const model::Toleration& t) {
      return t.key == wanted.key && t.op == wanted.op && t.value == wanted.value &&
             t.effect == wanted.effect;
    });
    if (same != tolerations.end()) {
      *same = std::move(wanted);
    } else {
      tolerations.push_back(std::move(wanted));
    }
  }
  return tolerations;
}

DaemonPlacement DaemonPlacementOf(const api::PodSpec* spec) {
  DaemonPlacement out;
  if (spec == nullptr) {
    out.tolerations = DaemonPodTolerations(false);
    return out;
  }
  out.node_name = Str(spec->node_name());
  out.node_selector = model::LabelsFromEntries(spec->node_selector());
  if (spec->affinity() != nullptr && spec->affinity()->node_affinity() != nullptr) {
    if (const api::NodeSelector* required =
            spec->affinity()
                ->node_affinity()
                ->required_during_scheduling_ignored_during_execution()) {
      out.required = scheduler::NodeSelectorFromApi(*required);
    }
  }
  out.tolerations = WithDaemonPodTolerations(model::TolerationsOf(spec), spec->host_network());
  return out;
}

NodeFit NodeShouldRunDaemonPod(const DaemonPlacement& placement, const scheduler::NodeInfo& node) {
  if (!placement.node_name.empty() && placement.node_name != node.name) return {};
  for (const auto& [key, value] : placement.node_selector) {
    const std::string* has = model::FindLabel(node.labels, key);
    if (has == nullptr || *has != value) return {};
  }
  if (placement.required && !scheduler::plugins::MatchesNodeSelector(*placement.required, node))
    return {};
  const bool schedulable =
      !HasUntoleratedTaint(node, placement.tolerations, [](api::TaintEffect e) {
        return e == api::TaintEffect::NoSchedule || e == api::TaintEffect::NoExecute;
      });
  if (schedulable) return {true, true};
  const bool stays = !HasUntoleratedTaint(node, placement.tolerations, [](api::TaintEffect e) {
    return e == api::TaintEffect::NoExecute;
  });
  return {false, stays};
}

void SortDaemonPods(std::vector<const PodRecord*>& pods) {
  std::ranges::sort(pods, [](const PodRecord* a, const PodRecord* b) {
    if (a->node.empty() != b->node.empty()) return !a->node.empty();
    if (a->created != b->created) return a->created < b->created;
    return a->name < b->name;
  });
}

bool IsUpdatedDaemonPod(const PodRecord& pod, const std::string& hash) {
  const std::string* label = model::FindLabel(pod.labels, kControllerRevisionHashLabel);
  return !hash.empty() && label != nullptr && *label == hash;
}

NodeActions PodsShouldBeOnNode(const DaemonNode& node, const std::string& hash, bool surge,
                               int32_t min_ready_seconds, SimTime now) {
  NodeActions out;
  if (node.fit.should_run && node.pods.empty()) {
    out.create = true;
    return out;
  }
  if (!node.fit.should_continue_running) {
    for (const PodRecord* pod : node.pods) {
      if (!pod->deleting) out.remove.push_back(pod);
    }
    return out;
  }
  std::vector<const PodRecord*> running;  // in node.pods' order: oldest first
  for (const PodRecord* pod : node.pods) {
    if (pod->deleting) continue;
    if (pod->phase == api::PodPhase::Failed) {
      out.failed.push_back(pod);
    } else if (pod->phase == api::PodPhase::Succeeded) {
      out.succeeded.push_back(pod);
    } else {
      running.push_back(pod);
    }
  }
  if (!surge) {
    // The oldest stays; the others go.
    for (size_t i = 1; i < running.size(); ++i) out.remove.push_back(running[i]);
    return out;
  }
  if (running.size() <= 1) {
    out.create = running.empty() && node.fit.should_run;
    return out;
  }
  // Two pods only while the oldest old one is ready and the oldest new one
  // is not yet available; every other pod goes.
  const PodRecord* oldest_new = nullptr;
  const PodRecord* oldest_old = nullptr;
  for (const PodRecord* pod : running) {
    const PodRecord*& slot = IsUpdatedDaemonPod(*pod, hash) ? oldest_new : oldest_old;
    if (slot == nullptr) {
      slot = pod;
    } else {
      out.remove.push_back(pod);
    }
  }
  if (oldest_new != nullptr && oldest_old != nullptr &&
      (!oldest_old->ready || IsPodAvailable(oldest_new, min_ready_seconds, now))) {
    out.remove.push_back(oldest_old);
  }
  return out;
}

DaemonFenceposts ResolveDaemonFenceposts(const api::RollingUpdateDaemonSet* rolling,
                                         int32_t desired) {
  DaemonFenceposts out;
  out.max_surge =
      ScaledValue(rolling != nullptr ? rolling->max_surge() : nullptr, desired, true).value_or(0);
  out.max_unavailable =
      ScaledValue(rolling != nullptr ? rolling->max_unavailable() : nullptr, desired, true)
          .value_or(0);
  if (desired > 0 && out.max_surge == 0 && out.max_unavailable == 0) out.max_unavailable = 1;
  return out;
}

RollingPlan PlanRollingUpdate(const std::vector<DaemonNode>& nodes, const std::string& hash,
                              const DaemonFenceposts& fenceposts, int32_t desired,
                              int32_t min_ready_seconds, SimTime now) {
  RollingPlan plan;
  if (fenceposts.max_surge == 0) {
    int32_t unavailable = 0;
    std::vector<const PodRecord*> candidates;
    for (const DaemonNode& node : nodes) {
      const PodRecord* updated = nullptr;
      const PodRecord* old = nullptr;
      if (!UpdatedAndOld(node, hash, updated, old) || (updated == nullptr) == (old == nullptr)) {
        // Left to manage (too many pods, or none, or both): counted as unavailable.
        ++unavailable;
      } else if (updated != nullptr) {
        if (!IsPodAvailable(updated, min_ready_seconds, now)) ++unavailable;
      } else if (!IsPodAvailable(old, min_ready_seconds, now)) {
        plan.remove.push_back(
            old);  // not available anyway: replaced at once, counted as unavailable
        ++unavailable;
      } else if (unavailable < fenceposts.max_unavailable) {
        candidates.push_back(old);
      }
    }
    const size_t room = static_cast<size_t>(std::max(fenceposts.max_unavailable - unavailable, 0));
    for (size_t i = 0; i < std::min(room, candidates.size()); ++i)
      plan.remove.push_back(candidates[i]);
    return plan;
  }
  int32_t surging = 0;
  int32_t available = 0;
  std::vector<const PodRecord*>
      misplaced;  // old, available, on a node that should no longer run one
  std::vector<std::string> candidates;
  for (const DaemonNode& node : nodes) {
    const PodRecord* updated = nullptr;
    const PodRecord* old = nullptr;
    if (!UpdatedAndOld(node, hash, updated, old)) {
      ++surging;  // left to manage
      continue;
    }
    if (IsPodAvailable(old != nullptr ? old : updated, min_ready_seconds, now)) ++available;
    if (old == nullptr) continue;  // manage's to handle
    const bool runs_here = node.exists && node.fit.should_run;
    if (updated == nullptr) {
      if (!IsPodAvailable(old, min_ready_seconds, now)) {
        if (runs_here) {
          plan.create_on.push_back(node.name);  // replaces an old pod that is not available
        } else {
          plan.remove.push_back(old);  // not available, and no longer wanted here
        }
      } else if (!runs_here) {
        misplaced.push_back(old);
      } else if (surging < fenceposts.max_surge) {
        candidates.push_back(node.name);
      }
    } else if (!IsPodAvailable(updated, min_ready_seconds, now)) {
      ++surging;  // the new pod is not available yet
    } else {
      plan.remove.push_back(old);  // the new one is: the old goes
    }
  }
  // An available old pod where none should run goes only while as many
  // pods as are desired stay available.
  const int32_t deletable = std::max(available - desired, 0);
  if (static_cast<size_t>(deletable) < misplaced.size())
    misplaced.resize(static_cast<size_t>(deletable));
  plan.remove.insert(plan.remove.end(), misplaced.begin(), misplaced.end());
  const size_t room = static_cast<size_t>(std::max(fenceposts.max_surge - surging, 0));
  for (size_t i = 0; i < std::min(room, candidates.size()); ++i)
    plan.create_on.push_back(candidates[i]);
  return plan;
}

DaemonCounts CountDaemonPods(const std::vector<DaemonNode>& nodes, const std::string& hash,
                             int32_t min_ready_seconds, SimTime now) {
  DaemonCounts out;
  for (const DaemonNode& node : nodes) {
    if (!node.exists) continue;
    const bool scheduled = !node.pods.empty();
    if (!node.fit.should_run) {
      if (scheduled) ++out.misscheduled;
      continue;
    }
    ++out.desired;
    if (!scheduled) continue;
    ++out.current;
    const PodRecord& oldest = *node.pods.front();
    if (oldest.ready) {
      ++out.ready;
      if (IsAvailable(oldest, min_ready_seconds, now)) ++out.available;
    }
    if (IsUpdatedDaemonPod(oldest, hash)) ++out.updated;
  }
  out.unavailable = out.desired - out.available;
  return out;
}

bool FailedPodBackoff::InBackoff(const std::string& key, SimTime now, SimDuration& wait) const {
  auto it = entries_.find(key);
  if (it == entries_.end() || now - it->second.updated >= it->second.delay) return false;
  wait = it->second.delay;
  return true;
}

void FailedPodBackoff::Next(const std::string& key, SimTime now) {
  auto it = entries_.find(key);
  if (it == entries_.end() || now - it->second.updated > 2 * kMax) {
    entries_[key] = {kInitial, now};
    return;
  }
  it->second.delay = std::min(it->second.delay * 2, kMax);
  it->second.updated = now;
}

void FailedPodBackoff::Collect(SimTime now) {
  std::erase_if(entries_, [&](const auto& entry) { return now - entry.second.updated > 2 * kMax; });
}

}  // namespace podflow::controllers
