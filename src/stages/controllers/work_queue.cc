#include "stages/controllers/work_queue.h"

#include <algorithm>
#include <thread>

namespace podflow::controllers {

void WorkQueue::Add(const std::string& key, SimTime at) {
  auto [it, added] = due_.try_emplace(key, at);
  if (!added && at < it->second) it->second = at;
}

void WorkQueue::AddRateLimited(const std::string& key, SimTime now) {
  const int failed = failures_[key]++;
  constexpr int64_t kMaxMs = 1000 * 1000;
  const int64_t delay = failed >= 20 ? kMaxMs : std::min<int64_t>(kMaxMs, int64_t{5} << failed);
  Add(key, now + SimDuration(delay));
}

std::vector<std::string> WorkQueue::PopDue(SimTime now) {
  std::vector<std::pair<SimTime, std::string>> due;
  for (auto it = due_.begin(); it != due_.end();) {
    if (it->second <= now) {
      due.emplace_back(it->second, it->first);
      it = due_.erase(it);
    } else {
      ++it;
    }
  }
  std::ranges::sort(due);
  std::vector<std::string> out;
  out.reserve(due.size());
  for (auto& [at, key] : due) out.push_back(std::move(key));
  return out;
}

std::optional<SimTime> WorkQueue::NextDue() const {
  std::optional<SimTime> out;
  for (const auto& [key, at] : due_) {
    if (!out || at < *out) out = at;
  }
  return out;
}

int WorkQueue::failures(const std::string& key) const {
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void RunWorkQueue(const std::atomic<bool>& stopping, WorkQueue& queue,
                  const std::function<Status(std::chrono::milliseconds wait)>& poll,
                  const std::function<void(const Status&)>& failed,
                  const std::function<void(const std::string& key, SimTime now)>& sync,
                  const std::function<void()>& after) {
  while (!stopping) {
    std::chrono::milliseconds wait = kMaxWait;
    if (std::optional<SimTime> next = queue.NextDue()) {
      wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(*next - WallClockNow()),
                        std::chrono::milliseconds(0), kMaxWait);
    }
    if (Status polled = poll(wait); !polled.ok()) {
      failed(polled);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    const SimTime now = WallClockNow();
    for (const std::string& key : queue.PopDue(now)) sync(key, now);
    if (after) after();
  }
}

}  // namespace podflow::controllers
