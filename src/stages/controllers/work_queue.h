// The controllers' work queue, as kube-controller-manager's rate-limited
// queue keeps it. Time is passed in.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/result.h"

namespace podflow::controllers {

// A rate-limited work queue: keys due at a time, each once. A key that
// failed is due again after 5 ms, doubled on each failure up to 1000 s,
// until forgotten (kube-controller-manager's per-item back-off).
class WorkQueue {
 public:
  void Add(const std::string& key, SimTime at);
  void AddRateLimited(const std::string& key, SimTime now);
  void Forget(const std::string& key) { failures_.erase(key); }
  // The keys due at `now`, removed from the queue, earliest first.
  std::vector<std::string> PopDue(SimTime now);
  std::optional<SimTime> NextDue() const;
  int failures(const std::string& key) const;
  bool empty() const { return due_.empty(); }

 private:
  std::map<std::string, SimTime> due_;  // key -> when
  std::map<std::string, int> failures_;
};

// A controller's loop, until `stopping`: `poll` delivers what its
// informers have, waiting at most the time it is given (kMaxWait, or less
// when a key falls due sooner); then `sync` runs for each key due. A failed
// poll is reported through `failed` and tried again 200 ms later; `after`
// runs once the keys due have been synced.
inline constexpr std::chrono::milliseconds kMaxWait{100};
void RunWorkQueue(const std::atomic<bool>& stopping, WorkQueue& queue,
                  const std::function<Status(std::chrono::milliseconds wait)>& poll,
                  const std::function<void(const Status&)>& failed,
                  const std::function<void(const std::string& key, SimTime now)>& sync,
                  const std::function<void()>& after = nullptr);

}  // namespace podflow::controllers
