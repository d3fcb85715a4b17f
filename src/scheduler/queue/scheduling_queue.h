// SchedulingQueue: kube-scheduler's three queues for pods waiting for a node.
//  - active: ordered by priority (highest first), then creation time;
//  - backoff: pods that failed recently wait 1 s, doubling per failed
//    attempt up to 10 s, before they may be tried again;
//  - unschedulable: pods that fit nowhere wait for a cluster event that could
//    help them, or for the 5 minute flush. A pod remembers the plugins that
//    rejected it; an event moves only the pods one of whose plugins it may
//    satisfy (kube-scheduler's queueing hints, coarse): a node added or
//    changed and an assigned pod deleted may help any plugin; a pod newly
//    assigned helps only pod (anti-)affinity and topology spreading;
//    volumes and claims help the volume plugins.
// Times are passed in, so tests drive it without sleeping.
// Thread safety: none; one thread owns it (the scheduling stage's, through
// SchedulerCore).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace podflow::scheduler {

class SchedulingQueue {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kInitialBackoff{1000};
  static constexpr std::chrono::milliseconds kMaxBackoff{10'000};
  static constexpr std::chrono::minutes kUnschedulableFlush{5};

  struct Item {
    std::string key;      // the pod's log key
    int32_t priority = 0;
    std::string created;  // creationTimestamp (RFC 3339 sorts as text)
  };

  // What happened in the cluster, as far as waiting pods care.
  enum class ClusterEvent {
    kNodeAdd,
    kNodeUpdate,
    kAssignedPodAdd,     // a pod bound (or assumed) to a node
    kAssignedPodDelete,  // a pod that held room is gone
    kStorageChange,      // a PersistentVolume, claim or CSINode added or changed
    kNamespaceChange,    // namespace labels (namespaceSelector)
    kServiceChange,      // default spreading's selectors
  };
  // Whether `event` may make a pod rejected by `plugin` schedulable.
  static bool MayHelp(ClusterEvent event, std::string_view plugin);

  // A new or changed pod: queued as active, unless it is backing off from a
  // failed attempt (then it becomes active when the backoff ends).
  void Activate(const Item& item, Clock::time_point now);
  // The attempt popped for `key` found no node: one more failed attempt;
  // it waits in unschedulable, remembering the plugins that rejected it
  // (none known: any event moves it). `seen_revision` is the newest log
  // revision the attempt's view held (0: unknown). No-op for a key not
  // popped.
  void MarkUnschedulable(const std::string& key, Clock::time_point now,
                         std::vector<std::string> rejected_by = {}, int64_t seen_revision = 0);
  // Moves the unschedulable pods `event` may help (see MayHelp) to active,
  // or to backoff while their backoff lasts. An event of log revision
  // `revision` (0: unknown) no newer than what a pod's failed attempt had
  // already seen was in flight during that attempt: the attempt decided on
  // a view that lacked it, so the pod is tried again at once, its backoff
  // not earned. (kube-scheduler records in-flight events for the same
  // reason; its pod may still wait in backoffQ unless the queue is idle.)
  void MoveOnEvent(ClusterEvent event, Clock::time_point now, int64_t revision = 0);
  // A cluster event that may make room: every unschedulable pod moves to
  // active, or to backoff while its backoff lasts.
  void MoveAllUnschedulable(Clock::time_point now);
  // The pod is gone or was scheduled: it leaves every queue and its attempt
  // count is forgotten.
  void Remove(const std::string& key);

  // The next pod to try, after moving ended backoffs and flushing long
  // unschedulable pods. The pod stays known (in flight) until
  // MarkUnschedulable or Remove.
  std::optional<std::string> Pop(Clock::time_point now);

  bool Contains(const std::string& key) const { return entries_.contains(key); }
  size_t active_size() const { return active_.size(); }
  size_t backoff_size() const { return backoff_.size(); }
  size_t unschedulable_size() const { return unschedulable_.size(); }
  // Failed attempts of `key` so far (0 when unknown).
  int attempts(const std::string& key) const;

 private:
  enum class Where { kActive, kBackoff, kUnschedulable, kInFlight };
  struct Entry {
    Item item;
    Where where = Where::kActive;
    uint64_t seq = 0;  // FIFO among equal priority and creation time
    int attempts = 0;
    Clock::time_point backoff_until{};
    Clock::time_point unschedulable_since{};
    std::vector<std::string> rejected_by;  // plugins of the last failed attempt
    int64_t seen_revision = 0;             // the newest revision that attempt's view held
  };
  using ActiveKey = std::tuple<int64_t, std::string, uint64_t, std::string>;  // -priority, created, seq, key

  ActiveKey ActiveKeyOf(const Entry& e) const { return {-int64_t{e.item.priority}, e.item.created, e.seq, e.item.key}; }
  void Unlink(Entry& e);
  // Files `e` (its since and rejected_by set) as unschedulable / takes it out.
  void AddUnschedulable(Entry& e);
  void DropUnschedulable(Entry& e);
  void PlaceActiveOrBackoff(Entry& e, Clock::time_point now);
  void PlaceActive(Entry& e);

  std::map<std::string, Entry> entries_;
  std::set<ActiveKey> active_;
  std::set<std::pair<Clock::time_point, std::string>> backoff_;        // by backoff end
  std::set<std::pair<Clock::time_point, std::string>> unschedulable_;  // by since
  // The unschedulable pods a newly placed pod may help (subset of the above).
  std::set<std::pair<Clock::time_point, std::string>> pod_add_waiters_;
  uint64_t next_seq_ = 0;
};

}  // namespace podflow::scheduler
