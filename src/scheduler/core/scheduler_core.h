// SchedulerCore: the scheduler's state and cycle over plain values (no bus,
// no log). It is fed the nodes and pods an informer delivers, keeps the cache
// (Snapshot: nodes and the pods counted on them, bound or assumed) and the
// queue, and runs one cycle per call to Next(). The scheduling stage feeds it
// from the log's watches; podflow-replay --verify-scheduling from the log
// itself; tests and the benchmark from values they make.
//
// Assumed pods: a decision counts the pod on its node at once; binding
// confirms it when the pod comes back bound. If the pod instead comes back
// unbound at a newer revision (binding lost a compare-and-swap), or nothing
// comes within kAssumeTimeout (the decision was lost), the assumption is
// dropped and the pod is queued again.
// Thread safety: none; one thread owns it.
#pragma once

#include <algorithm>

#include <chrono>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/types.h"
#include "scheduler/framework/decision.h"
#include "scheduler/framework/equivalence_cache.h"
#include "scheduler/framework/metrics.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/profile.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/queue/scheduling_queue.h"

namespace podflow::scheduler {

// One stored object as the core is fed it: its log key, its stored bytes (a
// FlatBuffer of the kind the key names) and the revision of its last change.
// The caller adapts whatever it reads (an informer's or the log's key-value).
struct StoredObject {
  std::string key;
  std::string value;
  Revision mod_revision;
};


class SchedulerCore {
 public:
  using Clock = SchedulingQueue::Clock;
  static constexpr std::chrono::seconds kAssumeTimeout{30};

  // The profiles must outlive the core. A pod is scheduled by the profile of
  // its spec.schedulerName; pods no profile handles are left alone.
  explicit SchedulerCore(const Profile& profile) : profiles_{&profile} { MakeCaches(); }
  explicit SchedulerCore(const std::vector<Profile>& profiles) {
    for (const auto& p : profiles) profiles_.push_back(&p);
    MakeCaches();
  }

  // Whether cycles reuse verdicts and scores of equivalent pods on unchanged
  // nodes (scheduler/framework/equivalence_cache.h; on by default). The
  // decisions are the same either way: podflow-replay --verify-scheduling
  // re-runs decisions without it, which checks that.
  void set_equivalence_cache(bool on) { use_equivalence_cache_ = on; }
  // Cycles that found / did not find their pod's class in the cache.
  uint64_t equivalence_hits() const;
  uint64_t equivalence_misses() const;
  // What the cycles measured (scheduler/framework/metrics.h); the stage logs
  // and resets it now and then.
  SchedulerMetrics& metrics() { return metrics_; }

  void UpsertNode(const StoredObject& object, Clock::time_point now);
  void RemoveNode(const std::string& key);
  void UpsertPod(const StoredObject& object, Clock::time_point now);
  void RemovePod(const std::string& key, Clock::time_point now);
  // Services: PodTopologySpread's default spreading groups a pod with the
  // other pods of the Services that select it.
  void UpsertService(const StoredObject& object);
  void RemoveService(const std::string& key);
  // Namespaces: the namespaceSelector of pod affinity terms reads their
  // labels. As in kube-scheduler, a namespace change moves no pod out of
  // the unschedulable queue.
  void UpsertNamespace(const StoredObject& object);
  void RemoveNamespace(const std::string& key);
  // PersistentVolumes and claims the volume plugins read. A change may let
  // a pod waiting on its volumes schedule (kube-scheduler: PV / PVC add and
  // update events).
  void UpsertPersistentVolume(const StoredObject& object, Clock::time_point now);
  void RemovePersistentVolume(const std::string& key);
  void UpsertPersistentVolumeClaim(const StoredObject& object, Clock::time_point now);
  void RemovePersistentVolumeClaim(const std::string& key);
  // CSINodes: each node's CSI attach limits (NodeVolumeLimits). A change
  // may let a pod held back by a limit schedule.
  void UpsertCsiNode(const StoredObject& object, Clock::time_point now);
  void RemoveCsiNode(const std::string& key);

  // What the core follows in the log, in the order the stage lists it
  // (nodes before the pods bound to them), and how each change feeds the
  // cache. The stage runs one informer per feed; podflow-replay
  // --verify-scheduling rebuilds the cache from the log through the same
  // feeds, so a kind followed here is replayed with no other change.
  struct Feed {
    std::string prefix;
    std::function<void(const StoredObject& object, Clock::time_point now)> upsert;
    std::function<void(const std::string& key, Clock::time_point now)> remove;
  };
  // The feeds call into this core, which must outlive them.
  std::vector<Feed> Feeds();

  struct Outcome {
    std::string key;
    std::string uid;
    Revision mod_revision;   // the pod revision decided on
    std::string pod_bytes;   // that revision's stored pod
    Decision decision;
    const Profile* profile = nullptr;  // the profile that decided
    size_t start_node_index = 0;                   // where its filters began visiting
    // When preemption nominated a node (decision.nominated_node): the pods
    // to evict there, as the cache knows them. The core already holds the
    // nominated node's room for the pod (Snapshot nominated pods); the stage
    // writes status.nominatedNodeName, deletes each victim and tells the core
    // (RemovePod), which frees the room and moves the pod back to the queue.
    struct Victim {
      std::string key;
      std::string uid;
      Revision mod_revision;
      std::string pod_bytes;
    };
    std::vector<Victim> victims;
    // Pods of lower priority nominated to decision.nominated_node
    // (decision.cleared_nominations), as the core knows them: the core has
    // dropped their nomination; the stage clears status.nominatedNodeName.
    std::vector<Victim> cleared_nominations;
  };
  // One scheduling cycle for the next queued pod; nullopt when none is
  // ready. A scheduled pod is assumed on its node; an unschedulable one
  // waits in the queue. Internal errors (plugin bugs) come back as Status
  // and the pod backs off.
  std::optional<Result<Outcome>> Next(Clock::time_point now);
  // The cycle Next() runs once it has popped `key` (podflow-replay
  // --verify-scheduling calls it directly): nullopt when the pod is unknown,
  // does not parse or no profile handles it (it leaves the queue).
  std::optional<Result<Outcome>> Cycle(const std::string& key, Clock::time_point now);
  // Where the next cycle starts visiting nodes; replay sets the recorded one.
  void set_next_start_node_index(size_t index) { next_start_node_index_ = index; }
  // Pods counted on a node by a decision and not yet seen bound.
  int64_t assumed_pods() const { return assumed_pods_; }

  // The decision for `key` could not be handed to binding: forget the
  // assumption and try again after a backoff.
  void Unassume(const std::string& key, Clock::time_point now);
  // The stage wrote `key` itself at `revision` (the FailedScheduling
  // status): that revision coming back is not a change to react to.
  void OwnWrite(const std::string& key, Revision revision);
  // Drops assumptions older than kAssumeTimeout; their pods queue again.
  void ExpireAssumed(Clock::time_point now);

  const Snapshot& cache() const { return cache_; }
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
    // The node a higher-priority preemptor took this pod's nomination to:
    // a stored status still naming it (our own earlier write, on its way)
    // does not bring the nomination back.
    std::string cleared_nomination;
    std::string bytes;        // latest stored pod
  };
  // Notes that the view now holds `revision`.
  void Saw(int64_t revision) { seen_revision_ = std::max(seen_revision_, revision); }
  // Saw() for a node, volume, claim or CSINode: the revision of a change
  // (0: unknown), or nullopt for a re-delivery (a re-list brings unchanged
  // objects again), which is no event: it can help no waiting pod.
  std::optional<int64_t> Fed(const StoredObject& object) {
    const int64_t revision = object.mod_revision.value();
    if (revision <= 0) return 0;
    int64_t& last = fed_revisions_[object.key];
    if (revision <= last) return std::nullopt;
    last = revision;
    Saw(revision);
    return revision;
  }
  void Uncount(PodState& state);
  void Requeue(const std::string& key, const PodState& state, Clock::time_point now);

  const Profile* ProfileFor(const PodInfo& pod) const;
  void MakeCaches();

  std::vector<const Profile*> profiles_;
  // One per profile, in profiles_ order.
  std::vector<EquivalenceCache> equivalence_caches_;
  bool use_equivalence_cache_ = true;
  SchedulerMetrics metrics_;
  Snapshot cache_;
  SchedulingQueue queue_;
  std::unordered_map<std::string, PodState> pods_;
  std::unordered_map<std::string, std::string> node_keys_;  // node key -> name
  std::unordered_map<std::string, std::pair<std::string, std::string>> service_keys_;  // key -> ns, name
  std::unordered_map<std::string, std::string> pv_keys_;                                 // key -> name
  std::unordered_map<std::string, std::string> namespace_keys_;                          // key -> name
  std::unordered_map<std::string, std::pair<std::string, std::string>> pvc_keys_;      // key -> ns, name
  std::unordered_map<std::string, std::string> csi_node_keys_;                           // key -> node name
  // Assumptions in the order they were made (times only grow): ExpireAssumed
  // looks at the front only. Entries whose pod was bound or re-assumed since
  // are skipped (the time no longer matches).
  std::deque<std::pair<Clock::time_point, std::string>> assumed_order_;
  size_t next_start_node_index_ = 0;
  int64_t assumed_pods_ = 0;
  // The newest log revision among the pods, nodes, volumes, claims and
  // CSINodes fed so far: a cycle's view holds nothing newer (the informers
  // may lag one another below it). Services and namespaces are left out,
  // which only makes it lower: an event is then taken as not in flight.
  int64_t seen_revision_ = 0;
  // The last revision fed of each node, volume, claim and CSINode key.
  std::unordered_map<std::string, int64_t> fed_revisions_;
};

}  // namespace podflow::scheduler
