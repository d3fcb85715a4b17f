#include "stages/controllers/taint_eviction.h"

#include <algorithm>

namespace podflow::controllers {

std::optional<SimDuration> EvictionDelay(const std::vector<model::Taint>& taints,
                                         const std::vector<model::Toleration>& tolerations) {
  std::optional<int64_t> min_seconds;
  bool tainted = false;
  for (const model::Taint& taint : taints) {
    if (taint.effect != api::TaintEffect::NoExecute) continue;
    tainted = true;
    // The first toleration that matches the taint is the one that counts.
    auto t = std::ranges::find_if(tolerations, [&](const model::Toleration& t) { return model::ToleratesTaint(t, taint); });
    if (t == tolerations.end()) return SimDuration(0);
    if (t->toleration_seconds) {
      min_seconds = std::min(min_seconds.value_or(*t->toleration_seconds), *t->toleration_seconds);
    }
  }
  if (!tainted || !min_seconds) return std::nullopt;
  // A bound far past any test or run: tolerationSeconds is an int64 of seconds.
  constexpr int64_t kMaxSeconds = int64_t{1} << 40;
  return SimDuration(std::clamp<int64_t>(*min_seconds, 0, kMaxSeconds) * 1000);
}

TaintEvictions::Change TaintEvictions::Update(const std::string& pod, std::optional<SimDuration> delay, SimTime now) {
  auto it = scheduled_.find(pod);
  if (!delay) {
    if (it == scheduled_.end()) return Change::kNone;
    scheduled_.erase(it);
    return Change::kCancelled;
  }
  if (it == scheduled_.end()) {
    scheduled_.emplace(pod, Eviction{now, now + *delay});
    return Change::kScheduled;
  }
  // Made before: counted from then, and only ever brought forward.
  it->second.fire = std::min(it->second.fire, it->second.created + *delay);
  return Change::kNone;
}

std::vector<std::string> TaintEvictions::Due(SimTime now) {
  std::vector<std::string> out;
  for (auto it = scheduled_.begin(); it != scheduled_.end();) {
    if (it->second.fire <= now) {
      out.push_back(it->first);
      it = scheduled_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::optional<SimTime> TaintEvictions::NextDue() const {
  std::optional<SimTime> next;
  for (const auto& [pod, e] : scheduled_) next = std::min(next.value_or(e.fire), e.fire);
  return next;
}

}  // namespace podflow::controllers
