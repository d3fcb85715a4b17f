#include "stages/controllers/expectations.h"

#include <algorithm>

namespace podflow::controllers {

void Expectations::ExpectCreate(const std::string& owner, const std::string& pod_key, SimTime now) {
  Drop(pod_key);
  pending_[pod_key] = Pending{owner, true, now};
  by_owner_[owner][pod_key] = now;
}

void Expectations::ExpectDelete(const std::string& owner, const std::string& pod_key, SimTime now) {
  Drop(pod_key);
  pending_[pod_key] = Pending{owner, false, now};
  by_owner_[owner][pod_key] = now;
}

std::optional<std::string> Expectations::Observe(const std::string& pod_key, bool present) {
  auto it = pending_.find(pod_key);
  if (it == pending_.end() || it->second.create != present) return std::nullopt;
  std::string owner = it->second.owner;
  Drop(pod_key);
  return owner;
}

void Expectations::ExpectUnnamedCreate(const std::string& owner, SimTime now) {
  ExpectCreate(owner, "?" + std::to_string(++unnamed_), now);
}

bool Expectations::ObserveNew(const std::string& owner) {
  auto it = by_owner_.find(owner);
  if (it == by_owner_.end()) return false;
  for (const auto& [pod_key, since] : it->second) {
    if (pod_key.starts_with("?")) {
      Drop(std::string(pod_key));
      return true;
    }
  }
  return false;
}

std::optional<SimTime> Expectations::Lapses(const std::string& owner) const {
  auto it = by_owner_.find(owner);
  if (it == by_owner_.end() || it->second.empty()) return std::nullopt;
  SimTime oldest = it->second.begin()->second;
  for (const auto& [pod_key, since] : it->second) oldest = std::min(oldest, since);
  return oldest + kTimeout;
}

void Expectations::Drop(const std::string& pod_key) {
  auto it = pending_.find(pod_key);
  if (it == pending_.end()) return;
  auto owner = by_owner_.find(it->second.owner);
  if (owner != by_owner_.end()) {
    owner->second.erase(pod_key);
    if (owner->second.empty()) by_owner_.erase(owner);
  }
  pending_.erase(it);
}

bool Expectations::Satisfied(const std::string& owner, SimTime now) const {
  auto it = by_owner_.find(owner);
  if (it == by_owner_.end()) return true;
  // Waited for too long (a watch that missed them): counted again.
  return std::ranges::all_of(it->second, [&](const auto& p) { return p.second + kTimeout <= now; });
}

void Expectations::Forget(const std::string& owner) {
  auto it = by_owner_.find(owner);
  if (it == by_owner_.end()) return;
  for (const auto& [pod_key, since] : it->second) pending_.erase(pod_key);
  by_owner_.erase(it);
}

std::vector<std::string> Expectations::ObservePod(const std::string& pod_key, bool deleting, bool first_seen,
                                                  const std::string* owner_key) {
  std::vector<std::string> out;
  std::optional<std::string> created = Observe(pod_key, /*present=*/true);
  if (created) out.push_back(*created);
  if (deleting) {
    if (std::optional<std::string> owner = Observe(pod_key, /*present=*/false)) out.push_back(*owner);
  }
  // A pod the owner made under a name it never learnt (its request got no answer).
  if (!created && first_seen && owner_key != nullptr && ObserveNew(*owner_key)) out.push_back(*owner_key);
  return out;
}

}  // namespace podflow::controllers
