// Reading history: events between revisions, the state at a revision, one
// pod's timeline.
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "model/objects.h"
#include "replay/replay.h"

namespace podflow::replay {

namespace {

// Revisions read from the log per ReadChanges() call.
constexpr size_t kBatchRevisions = 512;

EventType TypeOf(const Change& c) {
  if (c.type == ChangeType::kDelete) return EventType::kDeleted;
  return c.kv.version == 1 ? EventType::kAdded : EventType::kModified;
}

// The first revision that still has its changes: revision 1 is the empty
// log, and everything at or below the compact revision is gone.
int64_t OldestKept(EventLog& log) {
  return std::max<int64_t>(2, log.CompactRevision().value() + 1);
}

// Calls fn(revision changes) for every revision in [from, to].
template <typename Fn>
Status ForEachRevision(EventLog& log, int64_t from, int64_t to, Fn&& fn) {
  while (from <= to) {
    auto batch = log.ReadChanges(Revision(from), kBatchRevisions);
    if (!batch.ok()) return batch.status();
    if (batch->empty()) break;
    for (const RevisionChangesPtr& rc : *batch) {
      if (rc->revision.value() > to) return Status::Ok();
      fn(*rc);
      from = rc->revision.value() + 1;
    }
  }
  return Status::Ok();
}

// The value `key` had just before `rev`, if the log still has it.
std::string ValueBefore(EventLog& log, const std::string& key, int64_t rev) {
  if (rev - 1 < log.CompactRevision().value() || rev - 1 < 1) return "";
  auto kv = log.Get(key, Revision(rev - 1));
  if (!kv.ok() || !kv->has_value()) return "";
  return std::move((*kv)->value);
}

std::string Str(const model::Value* v) {
  return v != nullptr && v->kind() == model::Value::Kind::kString ? v->string_value() : "";
}

// Whether an Event object's involvedObject is the pod.
bool EventIsAbout(const model::Value& event, std::string_view event_namespace, std::string_view ns,
                  std::string_view name) {
  const model::Value* ref = event.Find("involvedObject");
  if (ref == nullptr) return false;
  const std::string kind = Str(ref->Find("kind"));
  std::string ref_ns = Str(ref->Find("namespace"));
  if (ref_ns.empty()) ref_ns = std::string(event_namespace);
  return (kind.empty() || kind == "Pod") && Str(ref->Find("name")) == name && ref_ns == ns;
}

// A controller an object names in its ownerReferences.
struct OwnerRef {
  std::string kind, name;
  bool operator==(const OwnerRef&) const = default;
};

std::vector<OwnerRef> OwnersOf(const model::Value& object) {
  std::vector<OwnerRef> out;
  const model::Value* meta = object.Find("metadata");
  const model::Value* refs = meta != nullptr ? meta->Find("ownerReferences") : nullptr;
  if (refs == nullptr || refs->kind() != model::Value::Kind::kArray) return out;
  for (const model::Value& ref : refs->items())
    out.push_back({Str(ref.Find("kind")), Str(ref.Find("name"))});
  return out;
}

// Whether an Event object is one of `owners` telling that it created or
// deleted the pod `name` (the workload controllers' SuccessfulCreate /
// SuccessfulDelete: "Created pod: NAME", "Deleted pod: NAME"); `who` then
// names the owner and the controller that wrote it.
bool EventIsOwnersAboutPod(const model::Value& event, std::string_view event_namespace,
                           std::string_view ns, std::string_view name,
                           const std::vector<OwnerRef>& owners, std::string& who) {
  const model::Value* ref = event.Find("involvedObject");
  if (ref == nullptr || event_namespace != ns) return false;
  const OwnerRef about{Str(ref->Find("kind")), Str(ref->Find("name"))};
  if (std::find(owners.begin(), owners.end(), about) == owners.end()) return false;
  const std::string message = Str(event.Find("message"));
  if (message != "Created pod: " + std::string(name) &&
      message != "Deleted pod: " + std::string(name))
    return false;
  std::string component = Str(event.Find("reportingComponent"));
  if (const model::Value* source = event.Find("source"); component.empty() && source != nullptr) {
    component = Str(source->Find("component"));
  }
  who = about.kind + "/" + about.name + (component.empty() ? "" : " (" + component + ")");
  return true;
}

}  // namespace

Result<std::vector<Event>> ListEvents(EventLog& log, const EventQuery& query) {
  const int64_t head = log.CurrentRevision().value();
  const int64_t compact = log.CompactRevision().value();
  const int64_t to = query.to.value() == 0 ? head : query.to.value();
  if (to > head) {
    return Status::FutureRevision("revision " + std::to_string(to) +
                                  " is in the future (the log is at revision " +
                                  std::to_string(head) + ")");
  }
  if (query.from.value() != 0 && query.from.value() <= compact) {
    return Status::Compacted("revision " + std::to_string(query.from.value()) +
                             " has been compacted (history starts at revision " +
                             std::to_string(compact + 1) + ")");
  }
  const int64_t from = std::max(query.from.value(), OldestKept(log));
  if (query.from.value() > to) {
    return Status::Invalid("--from " + std::to_string(query.from.value()) + " is after --to " +
                           std::to_string(to));
  }
  std::vector<Event> out;
  // The last value of each key seen, so a delete can say what it deleted.
  std::unordered_map<std::string, std::string> last;
  Status s = ForEachRevision(log, from, to, [&](const RevisionChanges& rc) {
    for (const Change& c : rc.changes) {
      if (!c.kv.key.starts_with(query.prefix)) continue;
      Event e;
      e.revision = rc.revision;
      e.type = TypeOf(c);
      e.key = c.kv.key;
      e.writer = rc.writer;
      e.committed_at_ms = rc.committed_at_ms;
      if (e.type == EventType::kDeleted) {
        auto it = last.find(e.key);
        if (it != last.end()) {
          e.value = std::move(it->second);
          last.erase(it);
        } else {
          e.value = ValueBefore(log, e.key, rc.revision.value());
        }
      } else {
        e.value = c.kv.value;
        last[e.key] = c.kv.value;
      }
      e.summary = Summarize(e.key, e.value);
      out.push_back(std::move(e));
    }
  });
  if (!s.ok()) return s;
  return out;
}

Result<State> StateAt(EventLog& log, Revision at, const std::string& prefix) {
  State state;
  RangeRequest request = RangeRequest::Prefix(prefix, at);
  request.limit = 1000;
  for (;;) {
    auto page = log.Range(request);
    if (!page.ok()) return page.status();
    state.revision = page->revision;
    for (KeyValue& kv : page->kvs) {
      StateEntry e;
      e.summary = Summarize(kv.key, kv.value);
      e.kv = std::move(kv);
      state.entries.push_back(std::move(e));
    }
    if (!page->more) break;
    request.continue_token = page->continue_token;
  }
  return state;
}

Result<PodTimeline> BuildPodTimeline(EventLog& log, std::string_view namespace_,
                                     std::string_view name) {
  PodTimeline t;
  t.namespace_ = namespace_.empty() ? "default" : std::string(namespace_);
  t.name = name;
  const model::KindInfo& pod_kind = model::Kind("Pod");
  const model::KindInfo& event_kind = model::Kind("Event");
  t.key = model::ObjectKey(pod_kind, t.namespace_, t.name);
  const std::string event_prefix = model::KindPrefix(event_kind);

  const int64_t head = log.CurrentRevision().value();
  std::optional<model::Value> previous;  // the pod's last version seen
  bool have_previous = false;            // `previous` is known (maybe absent)
  std::optional<int64_t> created_ms;
  std::unordered_set<std::string> about;  // Event keys about the pod
  std::vector<OwnerRef> owners;           // every owner the pod has named

  Status s = ForEachRevision(log, OldestKept(log), head, [&](const RevisionChanges& rc) {
    for (const Change& c : rc.changes) {
      TimelineEntry e;
      e.revision = rc.revision;
      e.type = TypeOf(c);
      e.key = c.kv.key;
      e.writer = rc.writer;
      e.committed_at_ms = rc.committed_at_ms;
      if (c.kv.key == t.key) {
        if (e.type == EventType::kAdded || !created_ms) {
          created_ms =
              rc.committed_at_ms > 0 ? std::optional<int64_t>(rc.committed_at_ms) : std::nullopt;
        }
        if (!have_previous && e.type != EventType::kAdded) {
          // The pod's earlier history was compacted: start from what the
          // log still holds just before this revision.
          previous = ObjectValue(t.key, ValueBefore(log, t.key, rc.revision.value()));
        }
        if (e.type == EventType::kDeleted) {
          e.summary = "deleted";
          previous.reset();
        } else {
          e.summary = Summarize(c.kv.key, c.kv.value);
          std::optional<model::Value> now = ObjectValue(c.kv.key, c.kv.value);
          if (e.type == EventType::kModified && previous && now) {
            e.changes = DiffValues(*previous, *now);
          }
          if (now) {
            for (OwnerRef& owner : OwnersOf(*now)) {
              if (std::find(owners.begin(), owners.end(), owner) == owners.end())
                owners.push_back(std::move(owner));
            }
          }
          previous = std::move(now);
        }
        have_previous = true;
      } else if (c.kv.key.starts_with(event_prefix)) {
        if (e.type == EventType::kDeleted) continue;  // expiry says nothing about the pod
        std::optional<model::Value> ev = ObjectValue(c.kv.key, c.kv.value);
        if (!ev) continue;
        const model::Value* meta = ev->Find("metadata");
        const std::string ev_ns = meta != nullptr ? Str(meta->Find("namespace")) : "";
        const std::string in_ns = ev_ns.empty() ? "default" : ev_ns;
        std::string who;
        const bool owners_word =
            EventIsOwnersAboutPod(*ev, in_ns, t.namespace_, t.name, owners, who);
        if (!about.contains(c.kv.key) && !EventIsAbout(*ev, in_ns, t.namespace_, t.name) &&
            !owners_word) {
          continue;
        }
        about.insert(c.kv.key);
        e.is_event = true;
        e.summary = Summarize(c.kv.key, c.kv.value);
        // Its owner's word that it made or removed the pod: by whom.
        if (!who.empty()) e.summary = who + ": " + e.summary;
      } else {
        continue;
      }
      if (created_ms && rc.committed_at_ms > 0) {
        e.since_creation_ms = rc.committed_at_ms - *created_ms;
      }
      t.entries.push_back(std::move(e));
    }
  });
  if (!s.ok()) return s;
  if (t.entries.empty()) {
    return Status::NotFound("pod " + t.namespace_ + "/" + t.name +
                            ": nothing in the log is about it (revisions " +
                            std::to_string(OldestKept(log)) + ".." + std::to_string(head) + ")");
  }
  return t;
}

namespace {

int64_t IntAt(const model::Value* object, std::string_view field) {
  const model::Value* v = object != nullptr ? object->Find(field) : nullptr;
  return v != nullptr && v->kind() == model::Value::Kind::kInt ? v->int_value() : 0;
}

std::string Annotation(const model::Value& object, std::string_view key) {
  const model::Value* meta = object.Find("metadata");
  const model::Value* annotations = meta != nullptr ? meta->Find("annotations") : nullptr;
  return annotations != nullptr ? Str(annotations->Find(key)) : "";
}

std::string UidOf(const model::Value& object) {
  const model::Value* meta = object.Find("metadata");
  return meta != nullptr ? Str(meta->Find("uid")) : "";
}

// The uid of the object's controller ("" when none).
std::string ControllerUid(const model::Value& object) {
  const model::Value* meta = object.Find("metadata");
  const model::Value* refs = meta != nullptr ? meta->Find("ownerReferences") : nullptr;
  if (refs == nullptr || refs->kind() != model::Value::Kind::kArray) return "";
  for (const model::Value& ref : refs->items()) {
    const model::Value* controller = ref.Find("controller");
    if (controller != nullptr && controller->kind() == model::Value::Kind::kBool &&
        controller->bool_value()) {
      return Str(ref.Find("uid"));
    }
  }
  return "";
}

constexpr char kRevisionAnnotation[] = "deployment.kubernetes.io/revision";

}  // namespace

Result<RolloutTimeline> BuildRolloutTimeline(EventLog& log, std::string_view namespace_,
                                             std::string_view name) {
  RolloutTimeline out;
  out.namespace_ = namespace_.empty() ? "default" : std::string(namespace_);
  out.name = name;
  const std::string key = model::ObjectKey(model::Kind("Deployment"), out.namespace_, out.name);
  const std::string set_prefix = model::KindPrefix(model::Kind("ReplicaSet"), out.namespace_);
  std::optional<model::Value> deployment;
  std::map<std::string, model::Value> sets;  // the namespace's ReplicaSets, by key
  bool seen = false;
  const int64_t head = log.CurrentRevision().value();
  const int64_t from = OldestKept(log);
  // What the log held before its oldest kept revision.
  if (from > 2) {
    auto before = log.Get(key, Revision(from - 1));
    if (before.ok() && before->has_value()) deployment = ObjectValue(key, (*before)->value);
    auto listed = StateAt(log, Revision(from - 1), set_prefix);
    if (listed.ok()) {
      for (const StateEntry& e : listed->entries) {
        if (std::optional<model::Value> v = ObjectValue(e.kv.key, e.kv.value))
          sets.emplace(e.kv.key, std::move(*v));
      }
    }
  }
  Status s = ForEachRevision(log, from, head, [&](const RevisionChanges& rc) {
    bool touched = false;
    for (const Change& c : rc.changes) {
      const bool is_deployment = c.kv.key == key;
      if (!is_deployment && !c.kv.key.starts_with(set_prefix)) continue;
      touched = true;
      std::optional<model::Value> value;
      if (c.type != ChangeType::kDelete) value = ObjectValue(c.kv.key, c.kv.value);
      if (is_deployment) {
        deployment = std::move(value);
      } else if (value) {
        sets[c.kv.key] = std::move(*value);
      } else {
        sets.erase(c.kv.key);
      }
    }
    if (!touched || !deployment) return;
    seen = true;
    RolloutStep step;
    step.revision = rc.revision;
    step.committed_at_ms = rc.committed_at_ms;
    step.writer = rc.writer;
    step.deployment_revision = Annotation(*deployment, kRevisionAnnotation);
    const model::Value* spec = deployment->Find("spec");
    const model::Value* status = deployment->Find("status");
    step.desired =
        spec != nullptr && spec->Find("replicas") != nullptr ? IntAt(spec, "replicas") : 1;
    step.updated = IntAt(status, "updatedReplicas");
    step.ready = IntAt(status, "readyReplicas");
    step.available = IntAt(status, "availableReplicas");
    const std::string uid = UidOf(*deployment);
    for (const auto& [set_key, set] : sets) {
      if (uid.empty() || ControllerUid(set) != uid) continue;
      const model::Value* set_spec = set.Find("spec");
      const model::Value* set_status = set.Find("status");
      step.sets.push_back(
          {set_key.substr(set_key.rfind('/') + 1), Annotation(set, kRevisionAnnotation),
           set_spec != nullptr && set_spec->Find("replicas") != nullptr
               ? IntAt(set_spec, "replicas")
               : 1,
           IntAt(set_status, "readyReplicas"), IntAt(set_status, "availableReplicas")});
    }
    if (!out.steps.empty() && out.steps.back().SameAs(step)) return;
    out.steps.push_back(std::move(step));
  });
  if (!s.ok()) return s;
  if (!seen) {
    return Status::NotFound("deployment " + out.namespace_ + "/" + out.name +
                            ": not in the log (revisions " + std::to_string(from) + ".." +
                            std::to_string(head) + ")");
  }
  return out;
}

}  // namespace podflow::replay
