// Taint-based eviction as plain logic (kube-controller-manager's
// taint-eviction-controller): a pod on a node with NoExecute taints it does
// not tolerate is deleted at once; one tolerating them for tolerationSeconds
// is deleted that long after the controller saw the taints; the deletion is
// cancelled when the taints go. Time is passed in.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "model/taints.h"

namespace podflow::controllers {

// How long after now a pod tolerating `tolerations` is evicted from a node
// tainted `taints`: nullopt never (no NoExecute taint, or tolerated with no
// tolerationSeconds), zero at once (a NoExecute taint not tolerated, or a
// tolerationSeconds <= 0), else the smallest tolerationSeconds of the
// tolerations that count: for each NoExecute taint, the first toleration
// that matches it.
std::optional<SimDuration> EvictionDelay(const std::vector<model::Taint>& taints,
                                         const std::vector<model::Toleration>& tolerations);

// The evictions scheduled, by pod key. Not thread-safe.
class TaintEvictions {
 public:
  enum class Change { kNone, kScheduled, kCancelled };
  // The pod's eviction decided again at `now` with `delay` (EvictionDelay):
  // scheduled (at now + delay, or earlier than one scheduled before, which
  // keeps the time it was made), or cancelled when it needs none.
  Change Update(const std::string& pod, std::optional<SimDuration> delay, SimTime now);
  // The pod is gone or deleting: its eviction is dropped without a word.
  void Forget(const std::string& pod) { scheduled_.erase(pod); }
  // The pods whose eviction is due at `now`, taken out.
  std::vector<std::string> Due(SimTime now);
  std::optional<SimTime> NextDue() const;
  bool Scheduled(const std::string& pod) const { return scheduled_.contains(pod); }

 private:
  struct Eviction {
    SimTime created;
    SimTime fire;
  };
  std::map<std::string, Eviction> scheduled_;
};

}  // namespace podflow::controllers
