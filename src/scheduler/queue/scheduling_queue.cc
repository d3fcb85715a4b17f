#include "scheduler/queue/scheduling_queue.h"

#include <algorithm>

namespace podflow::scheduler {

int SchedulingQueue::attempts(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? 0 : it->second.attempts;
}

void SchedulingQueue::Unlink(Entry& e) {
  switch (e.where) {
    case Where::kActive: active_.erase(ActiveKeyOf(e)); break;
    case Where::kBackoff: backoff_.erase({e.backoff_until, e.item.key}); break;
    case Where::kUnschedulable: DropUnschedulable(e); break;
    case Where::kInFlight: break;
  }
}

void SchedulingQueue::PlaceActive(Entry& e) {
  e.where = Where::kActive;
  e.seq = next_seq_++;
  active_.insert(ActiveKeyOf(e));
}

void SchedulingQueue::PlaceActiveOrBackoff(Entry& e, Clock::time_point now) {
  if (e.backoff_until > now) {
    e.where = Where::kBackoff;
    backoff_.insert({e.backoff_until, e.item.key});
  } else {
    PlaceActive(e);
  }
}

void SchedulingQueue::Activate(const Item& item, Clock::time_point now) {
  auto [it, inserted] = entries_.try_emplace(item.key);
  Entry& e = it->second;
  if (!inserted) {
    if (e.where == Where::kInFlight) {
      e.item = item;
      return;
    }
    Unlink(e);
  }
  e.item = item;
  PlaceActiveOrBackoff(e, now);
}

bool SchedulingQueue::MayHelp(ClusterEvent event, std::string_view plugin) {
  switch (event) {
    case ClusterEvent::kNodeAdd:
    case ClusterEvent::kNodeUpdate:
    case ClusterEvent::kAssignedPodDelete:
      return true;
    case ClusterEvent::kAssignedPodAdd:
      // Another pod in a domain can satisfy affinity or raise the spread
      // minimum; it never frees resources, ports or volumes.
      return plugin == "InterPodAffinity" || plugin == "PodTopologySpread";
    case ClusterEvent::kStorageChange:
      return plugin == "VolumeBinding" || plugin == "VolumeZone" || plugin == "VolumeRestrictions" ||
             plugin == "NodeVolumeLimits";
    case ClusterEvent::kNamespaceChange:
      return plugin == "InterPodAffinity";
    case ClusterEvent::kServiceChange:
      return plugin == "PodTopologySpread";
  }
  return true;
}

void SchedulingQueue::AddUnschedulable(Entry& e) {
  e.where = Where::kUnschedulable;
  unschedulable_.insert({e.unschedulable_since, e.item.key});
  const bool pod_add_helps =
      e.rejected_by.empty() || std::any_of(e.rejected_by.begin(), e.rejected_by.end(), [](const std::string& p) {
        return MayHelp(ClusterEvent::kAssignedPodAdd, p);
      });
  if (pod_add_helps) pod_add_waiters_.insert({e.unschedulable_since, e.item.key});
}

void SchedulingQueue::DropUnschedulable(Entry& e) {
  unschedulable_.erase({e.unschedulable_since, e.item.key});
  pod_add_waiters_.erase({e.unschedulable_since, e.item.key});
}

void SchedulingQueue::MoveOnEvent(ClusterEvent event, Clock::time_point now, int64_t revision) {
  if (unschedulable_.empty()) return;
  // A pod placed somewhere happens once per cycle: only the pods it may
  // help are looked at.
  const auto& candidates = event == ClusterEvent::kAssignedPodAdd ? pod_add_waiters_ : unschedulable_;
  std::vector<std::pair<Clock::time_point, std::string>> moved;
  for (const auto& since_key : candidates) {
    const Entry& e = entries_.at(since_key.second);
    const bool helps = e.rejected_by.empty() ||
                       std::any_of(e.rejected_by.begin(), e.rejected_by.end(),
                                   [&](const std::string& p) { return MayHelp(event, p); });
    if (helps) moved.push_back(since_key);
  }
  for (const auto& since_key : moved) {
    Entry& e = entries_.at(since_key.second);
    DropUnschedulable(e);
    if (revision > 0 && revision <= e.seen_revision) {
      PlaceActive(e);  // in flight during the failed attempt: its backoff is not earned
    } else {
      PlaceActiveOrBackoff(e, now);
    }
  }
}

void SchedulingQueue::MarkUnschedulable(const std::string& key, Clock::time_point now,
                                        std::vector<std::string> rejected_by, int64_t seen_revision) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.where != Where::kInFlight) return;
  Entry& e = it->second;
  e.rejected_by = std::move(rejected_by);
  e.seen_revision = seen_revision;
  ++e.attempts;
  auto backoff = kInitialBackoff;
  for (int i = 1; i < e.attempts && backoff < kMaxBackoff; ++i) backoff *= 2;
  e.backoff_until = now + std::min(backoff, kMaxBackoff);
  e.unschedulable_since = now;
  AddUnschedulable(e);
}

void SchedulingQueue::MoveAllUnschedulable(Clock::time_point now) {
  auto waiting = std::move(unschedulable_);
  unschedulable_.clear();
  pod_add_waiters_.clear();
  for (const auto& [since, key] : waiting) PlaceActiveOrBackoff(entries_.at(key), now);
}

void SchedulingQueue::Remove(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  Unlink(it->second);
  entries_.erase(it);
}

std::optional<std::string> SchedulingQueue::Pop(Clock::time_point now) {
  while (!backoff_.empty() && backoff_.begin()->first <= now) {
    Entry& e = entries_.at(backoff_.begin()->second);
    backoff_.erase(backoff_.begin());
    PlaceActive(e);
  }
  while (!unschedulable_.empty() && unschedulable_.begin()->first + kUnschedulableFlush <= now) {
    Entry& e = entries_.at(unschedulable_.begin()->second);
    DropUnschedulable(e);
    PlaceActiveOrBackoff(e, now);
  }
  if (active_.empty()) return std::nullopt;
  std::string key = std::get<3>(*active_.begin());
  active_.erase(active_.begin());
  entries_.at(key).where = Where::kInFlight;
  return key;
}

}  // namespace podflow::scheduler
