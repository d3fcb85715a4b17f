// SchedulerCore: the scheduling stage's state and cycle without the bus.
// It is fed the nodes and pods the informers deliver, keeps the cache
// (scheduler::Snapshot: nodes and the pods counted on them, bound or
// assumed) and the queue, and runs one cycle per call to Next().
//
// Assumed pods: a decision counts the pod on its node at once; binding
// confirms it when the pod comes back bound. If the pod instead comes back
// unbound at a newer revision (binding lost a compare-and-swap), or nothing
// comes within kAssumeTimeout (the decision was lost), the assumption is
// dropped and the pod is queued again.
// Thread safety: none; one thread owns it.
#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>

#include "log/log.h"
#include "scheduler/scheduler.h"
#include "stages/scheduling/queue.h"

namespace podflow::scheduling {

class SchedulerCore {
 public:
  using Clock = SchedulingQueue::Clock;
  static constexpr std::chrono::seconds kAssumeTimeout{30};

  // `profile` must outlive the core.
  explicit SchedulerCore(const scheduler::Profile& profile) : profile_(profile) {}

  void UpsertNode(const KeyValue& kv, Clock::time_point now);
  void RemoveNode(const std::string& key);
  void UpsertPod(const KeyValue& kv, Clock::time_point now);
  void RemovePod(const std::string& key, Clock::time_point now);
  // PersistentVolumes and claims the volume plugins read. A change may let
  // a pod waiting on its volumes schedule (kube-scheduler: PV / PVC add and
  // update events).
  void UpsertPersistentVolume(const KeyValue& kv, Clock::time_point now);
  void RemovePersistentVolume(const std::string& key);
  void UpsertPersistentVolumeClaim(const KeyValue& kv, Clock::time_point now);
  void RemovePersistentVolumeClaim(const std::string& key);

  struct Outcome {
    std::string key;
    std::string uid;
    Revision mod_revision;   // the pod revision decided on
    std::string pod_bytes;   // that revision's stored pod
    scheduler::Decision decision;
  };
  // One scheduling cycle for the next queued pod; nullopt when none is
  // ready. A scheduled pod is assumed on its node; an unschedulable one
  // waits in the queue. Internal errors (plugin bugs) come back as Status
  // and the pod backs off.
  std::optional<Result<Outcome>> Next(Clock::time_point now);

  // The decision for `key` could not be handed to binding: forget the
  // assumption and try again after a backoff.
  void Unassume(const std::string& key, Clock::time_point now);
  // The stage wrote `key` itself at `revision` (the FailedScheduling
  // status): that revision coming back is not a change to react to.
  void OwnWrite(const std::string& key, Revision revision);
  // Drops assumptions older than kAssumeTimeout; their pods queue again.
  void ExpireAssumed(Clock::time_point now);

  const scheduler::Snapshot& cache() const { return cache_; }
  const SchedulingQueue& queue() const { return queue_; }

 private:
  struct PodState {
    std::string uid;
    std::string bound_node;   // spec.nodeName as stored ("" = unbound)
    bool terminal = false;    // Succeeded / Failed: holds no resources
    std::string node;         // where it is counted in cache_ ("" = not counted)
    bool assumed = false;     // counted by our decision, not yet seen bound
    Revision assumed_on;      // the revision decided on
    Clock::time_point assumed_at{};
    Revision mod_revision;
    Revision own_write;       // our last write of it (0: none)
    std::string bytes;        // latest stored pod
  };
  void Uncount(PodState& state);
  void Requeue(const std::string& key, const PodState& state, Clock::time_point now);

  const scheduler::Profile& profile_;
  scheduler::Snapshot cache_;
  SchedulingQueue queue_;
  std::unordered_map<std::string, PodState> pods_;
  std::unordered_map<std::string, std::string> node_keys_;  // node key -> name
  std::unordered_map<std::string, std::string> pv_keys_;                             // key -> name
  std::unordered_map<std::string, std::pair<std::string, std::string>> pvc_keys_;  // key -> ns, name
  // Assumptions in the order they were made (times only grow): ExpireAssumed
  // looks at the front only. Entries whose pod was bound or re-assumed since
  // are skipped (the time no longer matches).
  std::deque<std::pair<Clock::time_point, std::string>> assumed_order_;
  size_t next_start_node_index_ = 0;
};

}  // namespace podflow::scheduling
