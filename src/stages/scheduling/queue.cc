#include "stages/scheduling/queue.h"

#include <algorithm>

namespace podflow::scheduling {

int SchedulingQueue::attempts(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? 0 : it->second.attempts;
}

void SchedulingQueue::Unlink(Entry& e) {
  switch (e.where) {
    case Where::kActive: active_.erase(ActiveKeyOf(e)); break;
    case Where::kBackoff: backoff_.erase({e.backoff_until, e.item.key}); break;
    case Where::kUnschedulable: unschedulable_.erase({e.unschedulable_since, e.item.key}); break;
    case Where::kInFlight: break;
  }
}

void SchedulingQueue::PlaceActiveOrBackoff(Entry& e, Clock::time_point now) {
  if (e.backoff_until > now) {
    e.where = Where::kBackoff;
    backoff_.insert({e.backoff_until, e.item.key});
  } else {
    e.where = Where::kActive;
    e.seq = next_seq_++;
    active_.insert(ActiveKeyOf(e));
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

void SchedulingQueue::MarkUnschedulable(const std::string& key, Clock::time_point now) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.where != Where::kInFlight) return;
  Entry& e = it->second;
  ++e.attempts;
  auto backoff = kInitialBackoff;
  for (int i = 1; i < e.attempts && backoff < kMaxBackoff; ++i) backoff *= 2;
  e.backoff_until = now + std::min(backoff, kMaxBackoff);
  e.unschedulable_since = now;
  e.where = Where::kUnschedulable;
  unschedulable_.insert({now, key});
}

void SchedulingQueue::MoveAllUnschedulable(Clock::time_point now) {
  auto waiting = std::move(unschedulable_);
  unschedulable_.clear();
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
    e.where = Where::kActive;
    e.seq = next_seq_++;
    active_.insert(ActiveKeyOf(e));
  }
  while (!unschedulable_.empty() && unschedulable_.begin()->first + kUnschedulableFlush <= now) {
    Entry& e = entries_.at(unschedulable_.begin()->second);
    unschedulable_.erase(unschedulable_.begin());
    PlaceActiveOrBackoff(e, now);
  }
  if (active_.empty()) return std::nullopt;
  std::string key = std::get<3>(*active_.begin());
  active_.erase(active_.begin());
  entries_.at(key).where = Where::kInFlight;
  return key;
}

}  // namespace podflow::scheduling
