// The owners and pods a workload controller that selects its pods follows
// (the ReplicaSet and DaemonSet controllers): owners kept and queued as they
// change; pods kept by key and by namespace, each
// change passed to the expectations it meets and queueing the owners it
// concerns — its controller, or, for an orphan, every owner in its
// namespace that selects it (to adopt it). Not thread-safe.
#pragma once

#include <spdlog/logger.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "log/log.h"
#include "stages/controllers/expectations.h"
#include "stages/controllers/object_index.h"
#include "stages/controllers/pod_record.h"
#include "stages/controllers/work_queue.h"

namespace podflow::controllers {

// R (an owner's record) has `uid`, `namespace_`, `selector` (a
// model::LabelSelector) and `selector_valid`.
template <typename R>
class OwnedPods {
 public:
  OwnedPods(ObjectIndex<R>& owners, Expectations& expectations, WorkQueue& queue,
            spdlog::logger& log)
      : owners_(owners), expectations_(expectations), queue_(queue), log_(log) {}

  // An owner seen by watch, kept and queued; `record` nullopt: not a valid
  // `kind`, logged and ignored.
  void UpsertOwner(const KeyValue& kv, std::optional<R> record, std::string_view kind) {
    if (!record) {
      log_.warn("{}: not a valid {}; ignored", kv.key, kind);
      return;
    }
    owners_.Put(kv.key, std::move(*record));
    queue_.Add(kv.key, WallClockNow());
  }

  // An owner gone: forgotten, with what it expected and its back-off.
  void RemoveOwner(const std::string& key) {
    if (!owners_.Erase(key)) return;
    expectations_.Forget(key);
    queue_.Forget(key);
  }

  // A pod seen by watch; one that is not a valid Pod is logged and ignored.
  void Upsert(const KeyValue& kv) {
    std::optional<PodRecord> pod = ReadPod(kv.key, kv.value);
    if (!pod) {
      log_.warn("{}: not a valid Pod; ignored", kv.key);
      return;
    }
    const SimTime now = WallClockNow();
    auto it = records_.find(kv.key);
    const std::string* owner =
        pod->controller_uid.empty() ? nullptr : owners_.KeyOf(pod->controller_uid);
    for (const std::string& met :
         expectations_.ObservePod(kv.key, pod->deleting, it == records_.end(), owner)) {
      queue_.Add(met, now);
    }
    // A pod that changed owner or labels concerns those it did before, too.
    if (it != records_.end() &&
        (it->second.controller_uid != pod->controller_uid || it->second.labels != pod->labels)) {
      EnqueueFor(it->second, now);
    }
    EnqueueFor(*pod, now);
    by_namespace_[pod->namespace_].insert(kv.key);
    records_[kv.key] = std::move(*pod);
  }

  void Remove(const std::string& key) {
    const SimTime now = WallClockNow();
    if (std::optional<std::string> owner = expectations_.Observe(key, /*present=*/false))
      queue_.Add(*owner, now);
    auto it = records_.find(key);
    if (it == records_.end()) return;
    EnqueueFor(it->second, now);
    auto in_namespace = by_namespace_.find(it->second.namespace_);
    if (in_namespace != by_namespace_.end()) {
      in_namespace->second.erase(key);
      if (in_namespace->second.empty()) by_namespace_.erase(in_namespace);
    }
    records_.erase(it);
  }

  // Drops every pod (no longer followed).
  void Clear() {
    records_.clear();
    by_namespace_.clear();
  }

  // The pods of namespace `namespace_`, by key.
  std::vector<PodRecord*> InNamespace(const std::string& namespace_) {
    std::vector<PodRecord*> out;
    auto in_namespace = by_namespace_.find(namespace_);
    if (in_namespace == by_namespace_.end()) return out;
    out.reserve(in_namespace->second.size());
    for (const std::string& key : in_namespace->second) out.push_back(&records_.at(key));
    return out;
  }

 private:
  void EnqueueFor(const PodRecord& pod, SimTime now) {
    if (!pod.controller_uid.empty()) {
      if (const std::string* key = owners_.KeyOf(pod.controller_uid)) queue_.Add(*key, now);
      return;
    }
    if (pod.deleting) return;
    for (const auto& [key, owner] : owners_.records()) {
      if (owner.namespace_ == pod.namespace_ && owner.selector_valid &&
          owner.selector.Matches(pod.labels)) {
        queue_.Add(key, now);
      }
    }
  }

  ObjectIndex<R>& owners_;
  Expectations& expectations_;
  WorkQueue& queue_;
  spdlog::logger& log_;
  std::map<std::string, PodRecord> records_;                   // by key
  std::map<std::string, std::set<std::string>> by_namespace_;  // keys
};

}  // namespace podflow::controllers
