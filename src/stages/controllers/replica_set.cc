#include "stages/controllers/replica_set.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "model/codec.h"
#include "model/conditions.h"
#include "model/objects.h"

namespace podflow::controllers {
namespace {

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

std::optional<SimTime> TimeOf(const flatbuffers::String* s) {
  if (s == nullptr) return std::nullopt;
  std::optional<std::chrono::system_clock::time_point> t = ParseRfc3339(s->string_view());
  if (!t) return std::nullopt;
  return std::chrono::floor<SimDuration>(*t);
}

int32_t DeletionCost(const model::Labels& annotations) {
  const std::string* text = model::FindLabel(annotations, kPodDeletionCost);
  int32_t cost = 0;
  if (text == nullptr) return 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), cost);
  return error == std::errc() && end == text->data() + text->size() ? cost : 0;
}

// Pending, Unknown, Running: the order deletions take them in.
int PhaseOrdinal(api::PodPhase phase) {
  switch (phase) {
    case api::PodPhase::Pending: return 0;
    case api::PodPhase::Unknown: return 1;
    case api::PodPhase::Running: return 2;
    default: return -1;  // kube-controller-manager's map has no other phase
  }
}

// The power of two of the age at `now` (in nanoseconds, as Go's duration);
// -1 for no age.
int64_t AgeRank(SimTime t, SimTime now) {
  const auto age = std::chrono::duration_cast<std::chrono::nanoseconds>(now - t).count();
  return age > 0 ? static_cast<int64_t>(std::log2(static_cast<double>(age))) : -1;
}

// Whether `a` goes before `b` by a time of which newer goes first: a
// missing time first, then by the power of two of the age, equal ones by UID.
std::optional<bool> NewerFirst(const std::optional<SimTime>& a, const std::optional<SimTime>& b,
                               const PodRecord& pa, const PodRecord& pb, SimTime now) {
  if (a == b) return std::nullopt;
  if (!a || !b) return !a;
  const int64_t diff = AgeRank(*a, now) - AgeRank(*b, now);
  if (diff == 0) return pa.uid < pb.uid;
  return diff < 0;
}

}  // namespace

std::optional<PodRecord> ReadPod(const std::string& key, std::string_view bytes) {
  if (!model::VerifyObject(model::Kind("Pod"), bytes).ok()) return std::nullopt;
  const api::Pod& pod = *flatbuffers::GetRoot<api::Pod>(bytes.data());
  PodRecord out;
  out.key = key;
  if (const api::ObjectMeta* meta = pod.metadata()) {
    out.namespace_ = Str(meta->namespace_());
    out.name = Str(meta->name());
    out.uid = Str(meta->uid());
    out.labels = model::LabelsFromEntries(meta->labels());
    out.deleting = meta->deletion_timestamp() != nullptr && meta->deletion_timestamp()->size() > 0;
    out.created = TimeOf(meta->creation_timestamp());
    out.deletion_cost = DeletionCost(model::LabelsFromEntries(meta->annotations()));
    if (meta->owner_references() != nullptr) {
      for (const api::OwnerReference* ref : *meta->owner_references()) {
        if (ref->controller().value_or(false)) out.controller_uid = Str(ref->uid());
      }
    }
  }
  if (pod.spec() != nullptr) out.node = Str(pod.spec()->node_name());
  if (const api::PodStatus* status = pod.status()) {
    out.phase = status->phase();
    if (status->container_statuses() != nullptr) {
      for (const api::ContainerStatus* c : *status->container_statuses()) {
        out.restarts = std::max(out.restarts, c->restart_count());
      }
    }
  }
  if (const api::PodCondition* ready = model::FindCondition(pod, "Ready");
      ready != nullptr && ready->status() == api::ConditionStatus::True) {
    out.ready = true;
    out.ready_at = TimeOf(ready->last_transition_time());
  }
  return out;
}

bool IsActive(const PodRecord& pod) {
  return pod.phase != api::PodPhase::Succeeded && pod.phase != api::PodPhase::Failed && !pod.deleting;
}

bool IsAvailable(const PodRecord& pod, int32_t min_ready_seconds, SimTime now) {
  if (!pod.ready) return false;
  if (min_ready_seconds <= 0) return true;
  return pod.ready_at.has_value() && *pod.ready_at + std::chrono::seconds(min_ready_seconds) <= now;
}

std::vector<const PodRecord*> PodsToDelete(std::vector<const PodRecord*> active,
                                           const std::vector<const PodRecord*>& related, int count, SimTime now) {
  count = std::clamp(count, 0, static_cast<int>(active.size()));
  std::map<std::string, int, std::less<>> on_node;
  for (const PodRecord* pod : related) {
    if (IsActive(*pod)) ++on_node[pod->node];
  }
  const auto rank = [&](const PodRecord* pod) {
    auto it = on_node.find(pod->node);
    return it == on_node.end() ? 0 : it->second;
  };
  const auto first = [&](const PodRecord* a, const PodRecord* b) -> bool {
    if (a->node != b->node && (a->node.empty() || b->node.empty())) return a->node.empty();
    if (PhaseOrdinal(a->phase) != PhaseOrdinal(b->phase)) return PhaseOrdinal(a->phase) < PhaseOrdinal(b->phase);
    if (a->ready != b->ready) return !a->ready;
    if (a->deletion_cost != b->deletion_cost) return a->deletion_cost < b->deletion_cost;
    if (rank(a) != rank(b)) return rank(a) > rank(b);
    if (a->ready && b->ready) {
      if (std::optional<bool> by_ready = NewerFirst(a->ready_at, b->ready_at, *a, *b, now)) return *by_ready;
    }
    if (a->restarts != b->restarts) return a->restarts > b->restarts;
    if (std::optional<bool> by_age = NewerFirst(a->created, b->created, *a, *b, now)) return *by_age;
    return false;
  };
  std::stable_sort(active.begin(), active.end(), first);
  active.resize(static_cast<size_t>(count));
  return active;
}

std::vector<int> SlowStartBatches(int count) {
  std::vector<int> out;
  for (int batch = 1, left = count; left > 0; batch *= 2) {
    out.push_back(std::min(batch, left));
    left -= out.back();
  }
  return out;
}

ReplicaCounts CountReplicas(const std::vector<const PodRecord*>& active, const model::Labels& template_labels,
                            int32_t min_ready_seconds, SimTime now) {
  ReplicaCounts out;
  for (const PodRecord* pod : active) {
    ++out.replicas;
    const bool labeled = std::ranges::all_of(template_labels, [&](const auto& label) {
      const std::string* value = model::FindLabel(pod->labels, label.first);
      return value != nullptr && *value == label.second;
    });
    out.fully_labeled += labeled;
    out.ready += pod->ready;
    out.available += IsAvailable(*pod, min_ready_seconds, now);
  }
  return out;
}

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

}  // namespace podflow::controllers
