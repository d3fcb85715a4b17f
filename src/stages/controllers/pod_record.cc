#include "stages/controllers/pod_record.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "model/codec.h"
#include "model/conditions.h"
#include "model/objects.h"

namespace podflow::controllers {
namespace {

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }


// The int32 annotation `key` holds, if it holds one.
std::optional<int32_t> IntAnnotation(const model::Labels& annotations, std::string_view key) {
  const std::string* text = model::FindLabel(annotations, std::string(key));
  int32_t value = 0;
  if (text == nullptr) return std::nullopt;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return value;
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

std::optional<SimTime> StoredTime(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::optional<std::chrono::system_clock::time_point> t = ParseRfc3339(text);
  if (!t) return std::nullopt;
  return std::chrono::floor<SimDuration>(*t);
}

std::string TargetNodeName(const api::Pod& pod) {
  const api::PodSpec* spec = pod.spec();
  if (spec == nullptr) return {};
  if (spec->node_name() != nullptr && spec->node_name()->size() > 0) return spec->node_name()->str();
  if (spec->affinity() == nullptr || spec->affinity()->node_affinity() == nullptr) return {};
  const api::NodeSelector* required =
      spec->affinity()->node_affinity()->required_during_scheduling_ignored_during_execution();
  if (required == nullptr || required->node_selector_terms() == nullptr) return {};
  for (const api::NodeSelectorTerm* term : *required->node_selector_terms()) {
    if (term->match_fields() == nullptr) continue;
    for (const api::NodeSelectorRequirement* r : *term->match_fields()) {
      if (Str(r->key()) == "metadata.name" && r->operator_() == api::NodeSelectorOperator::In &&
          r->values() != nullptr && r->values()->size() == 1) {
        return r->values()->Get(0)->str();
      }
    }
  }
  return {};
}

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
    out.created = StoredTime(meta->creation_timestamp());
    const model::Labels annotations = model::LabelsFromEntries(meta->annotations());
    out.deletion_cost = IntAnnotation(annotations, kPodDeletionCost).value_or(0);
    out.completion_index = IntAnnotation(annotations, kJobCompletionIndex);
    if (out.completion_index && *out.completion_index < 0) out.completion_index.reset();
    if (meta->finalizers() != nullptr) {
      for (const flatbuffers::String* f : *meta->finalizers()) out.finalizers.push_back(f->str());
    }
    if (meta->owner_references() != nullptr) {
      for (const api::OwnerReference* ref : *meta->owner_references()) {
        if (ref->controller().value_or(false)) out.controller_uid = Str(ref->uid());
      }
    }
  }
  if (pod.spec() != nullptr) out.node = Str(pod.spec()->node_name());
  out.target_node = TargetNodeName(pod);
  if (const api::PodStatus* status = pod.status()) {
    out.phase = status->phase();
    for (const auto* list : {status->container_statuses(), status->init_container_statuses()}) {
      if (list == nullptr) continue;
      for (const api::ContainerStatus* c : *list) {
        if (list == status->container_statuses()) out.restarts = std::max(out.restarts, c->restart_count());
        out.restart_total += c->restart_count();
        const api::ContainerStateTerminated* ended = c->state() ? c->state()->terminated() : nullptr;
        if (std::optional<SimTime> at = ended ? StoredTime(ended->finished_at()) : std::nullopt) {
          out.finished_at = std::max(out.finished_at.value_or(*at), *at);
        }
      }
    }
  }
  if (const api::PodCondition* ready = model::FindCondition(pod, "Ready");
      ready != nullptr && ready->status() == api::ConditionStatus::True) {
    out.ready = true;
    out.ready_at = StoredTime(ready->last_transition_time());
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

std::optional<SimTime> NextAvailable(const std::vector<const PodRecord*>& pods, int32_t min_ready_seconds,
                                     SimTime now) {
  std::optional<SimTime> out;
  if (min_ready_seconds <= 0) return out;
  for (const PodRecord* pod : pods) {
    if (!pod->ready || !pod->ready_at || IsAvailable(*pod, min_ready_seconds, now)) continue;
    const SimTime at = *pod->ready_at + std::chrono::seconds(min_ready_seconds);
    if (!out || at < *out) out = at;
  }
  return out;
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

}  // namespace podflow::controllers
