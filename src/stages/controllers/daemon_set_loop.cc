#include "stages/controllers/daemon_set_loop.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "apps_generated.h"
#include "client/client.h"
#include "model/codec.h"
#include "model/objects.h"
#include "model/value.h"
#include "stages/controllers/controller_api.h"
#include "stages/controllers/daemon_set.h"
#include "stages/controllers/deployment.h"
#include "stages/controllers/expectations.h"
#include "stages/controllers/object_index.h"
#include "stages/controllers/owned_pods.h"
#include "stages/controllers/owner_refs.h"
#include "stages/controllers/pod_control.h"
#include "stages/controllers/work_queue.h"

namespace podflow::controllers {
namespace {

constexpr uint32_t kEventNamerInstance = 406;
// The most pods one sync creates, and deletes (kube-controller-manager's burstReplicas).
constexpr size_t kDaemonBurst = 250;

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

// What the loop keeps of a DaemonSet.
struct DaemonRecord {
  KeyValue kv;
  std::string namespace_, name, uid;
  model::LabelSelector selector;
  bool selector_valid = false;
  bool deleting = false;
  bool rolling = false;  // updateStrategy RollingUpdate (else OnDelete)
  int32_t min_ready_seconds = 0;
  int64_t generation = 0;
  int64_t observed_generation = 0;
  std::string hash;  // of the pod template: the controller-revision-hash of its pods
  DaemonPlacement placement;

  const api::DaemonSet& stored() const {
    return *flatbuffers::GetRoot<api::DaemonSet>(kv.value.data());
  }
};

std::optional<DaemonRecord> ReadDaemonSet(const KeyValue& kv) {
  const model::KindInfo& kind = model::Kind("DaemonSet");
  if (!model::VerifyObject(kind, kv.value).ok()) return std::nullopt;
  DaemonRecord out;
  out.kv = kv;
  const api::DaemonSet& ds = out.stored();
  if (ds.metadata() == nullptr || ds.spec() == nullptr)
    return std::nullopt;  // admission writes both
  const api::ObjectMeta& meta = *ds.metadata();
  out.namespace_ = Str(meta.namespace_());
  out.name = Str(meta.name());
  out.uid = Str(meta.uid());
  out.deleting = meta.deletion_timestamp() != nullptr && meta.deletion_timestamp()->size() > 0;
  out.generation = meta.generation();
  const api::DaemonSetSpec& spec = *ds.spec();
  Result<model::LabelSelector> selector = model::LabelSelector::FromApi(spec.selector());
  out.selector_valid = selector.ok() && !selector->MatchesEverything();
  if (selector.ok()) out.selector = std::move(*selector);
  out.rolling = spec.update_strategy() == nullptr ||
                spec.update_strategy()->type() != api::DaemonSetUpdateStrategyType::OnDelete;
  out.min_ready_seconds = spec.min_ready_seconds();
  std::optional<int32_t> collisions;
  if (ds.status() != nullptr) {
    out.observed_generation = ds.status()->observed_generation();
    collisions = ds.status()->collision_count();
  }
  const model::Value stored = model::ToValue(kind, kv.value);
  const model::Value* tmpl =
      stored.Find("spec") != nullptr ? stored.Find("spec")->Find("template") : nullptr;
  out.hash = PodTemplateHash(tmpl != nullptr ? model::ToJson(*tmpl) : std::string(), collisions);
  out.placement =
      DaemonPlacementOf(spec.template_() != nullptr ? spec.template_()->spec() : nullptr);
  return out;
}

// What a DaemonSet reads of a node.
scheduler::NodeInfo ReadNode(const api::Node& node) {
  scheduler::NodeInfo out;
  if (node.metadata() != nullptr) {
    out.name = Str(node.metadata()->name());
    out.labels = model::LabelsFromEntries(node.metadata()->labels());
  }
  out.taints = model::TaintsOf(node.spec());
  return out;
}

// The toleration `t` as a pod spec writes it (fields it leaves unset left out).
model::Value TolerationValue(const model::Toleration& t) {
  using model::Value;
  Value out = Value::Object();
  if (!t.key.empty()) out.Set("key", Value::String(t.key));
  if (t.op != api::TolerationOperator::Unset) {
    out.Set("operator", Value::String(api::EnumNameTolerationOperator(t.op)));
  }
  if (!t.value.empty()) out.Set("value", Value::String(t.value));
  if (t.effect != api::TaintEffect::Unset)
    out.Set("effect", Value::String(api::EnumNameTaintEffect(t.effect)));
  if (t.toleration_seconds) out.Set("tolerationSeconds", Value::Int(*t.toleration_seconds));
  return out;
}

class DaemonSetLoop {
 public:
  explicit DaemonSetLoop(pipeline::StageContext& context)
      : api_(context, kDaemonSetController, kEventNamerInstance),
        sets_informer_(context.bus, context.Endpoint("api"), context.Endpoint("watch"),
                       model::KindPrefix(model::Kind("DaemonSet"))),
        nodes_(context, model::KindPrefix(model::Kind("Node"))),
        pods_(context, model::KindPrefix(model::Kind("Pod"))) {}

  void Run(const std::atomic<bool>& stopping) {
    const client::Informer::Handlers set_handlers{
        [this](const KeyValue& kv) { owned_.UpsertOwner(kv, ReadDaemonSet(kv), "DaemonSet"); },
        [this](const std::string& key) { owned_.RemoveOwner(key); }};
    const client::Informer::Handlers node_handlers{
        [this](const KeyValue& kv) { UpsertNode(kv); },
        [this](const std::string& key) { RemoveNode(key); }};
    const client::Informer::Handlers pod_handlers{
        [this](const KeyValue& kv) { owned_.Upsert(kv); },
        [this](const std::string& key) { owned_.Remove(key); }};
    RunWorkQueue(
        stopping, queue_,
        [&](std::chrono::milliseconds wait) {
          return PollKindAndFollowers(sets_informer_, set_handlers,
                                      {{nodes_, node_handlers}, {pods_, pod_handlers}}, wait,
                                      [&] { return Follow(node_handlers, pod_handlers); });
        },
        [this](const Status& failed) {
          api_.log().warn("following daemon sets, nodes and pods: {}", failed.ToString());
        },
        [this](const std::string& key, SimTime now) { Sync(key, now); },
        [this] {
          api_.FlushEvents();
          backoff_.Collect(WallClockNow());
        });
  }

 private:
  // The nodes and the pods are followed while there is a DaemonSet. The
  // DaemonSets are synced only once both are listed (their keys wait in
  // the queue until then), so that none is taken for having no nodes.
  Status Follow(const client::Informer::Handlers& node_handlers,
                const client::Informer::Handlers& pod_handlers) {
    const bool needed = !sets_.empty();
    Result<bool> nodes_changed = nodes_.Follow(needed, node_handlers);
    if (!nodes_changed.ok()) return nodes_changed.status();
    Result<bool> pods_changed = pods_.Follow(needed, pod_handlers);
    if (!pods_changed.ok()) return pods_changed.status();
    if (!*nodes_changed && !*pods_changed) return Status::Ok();
    if (needed) {
      api_.log().info("following nodes and pods: {} daemon set(s)", sets_.size());
    } else {
      nodes_by_name_.clear();
      owned_.Clear();
      api_.log().info("no daemon set left: no longer following nodes and pods");
    }
    return Status::Ok();
  }

  bool Listed() const { return nodes_.open() && pods_.open(); }

  void EnqueueAll(SimTime now) {
    for (const auto& [key, set] : sets_.records()) queue_.Add(key, now);
  }

  // A node that comes, goes, or changes its labels or taints concerns
  // every DaemonSet (where each should run is decided at its sync); a
  // change of status only does not.
  void UpsertNode(const KeyValue& kv) {
    if (!model::VerifyObject(model::Kind("Node"), kv.value).ok()) {
      api_.log().warn("{}: not a valid Node; ignored", kv.key);
      return;
    }
    scheduler::NodeInfo node = ReadNode(*flatbuffers::GetRoot<api::Node>(kv.value.data()));
    auto it = nodes_by_name_.find(node.name);
    if (it != nodes_by_name_.end() && it->second.labels == node.labels &&
        SameTaints(it->second, node))
      return;
    nodes_by_name_[node.name] = std::move(node);
    EnqueueAll(WallClockNow());
  }

  static bool SameTaints(const scheduler::NodeInfo& a, const scheduler::NodeInfo& b) {
    return std::ranges::equal(a.taints, b.taints, [](const model::Taint& x, const model::Taint& y) {
      return x.key == y.key && x.value == y.value && x.effect == y.effect;
    });
  }

  void RemoveNode(const std::string& key) {
    if (nodes_by_name_.erase(key.substr(key.rfind('/') + 1)) > 0) EnqueueAll(WallClockNow());
  }

  model::ObjectRef RefOf(const DaemonRecord& set) const {
    return {"DaemonSet", "apps/v1", set.namespace_, set.name, set.uid};
  }

  // Every node, and every node a pod of the DaemonSet is meant for, with
  // what it fits and the DaemonSet's pods there (getNodesToDaemonPods: a
  // finished pod being deleted is not counted).
  std::vector<DaemonNode> NodesOf(const DaemonRecord& set,
                                  const std::vector<const PodRecord*>& owned) const {
    std::map<std::string, DaemonNode> by_name;
    for (const auto& [name, node] : nodes_by_name_) {
      by_name[name] = {name, true, NodeShouldRunDaemonPod(set.placement, node), {}};
    }
    for (const PodRecord* pod : owned) {
      const bool finished =
          pod->phase == api::PodPhase::Succeeded || pod->phase == api::PodPhase::Failed;
      if (pod->target_node.empty() || (finished && pod->deleting)) continue;
      DaemonNode& node = by_name[pod->target_node];
      node.name = pod->target_node;
      node.pods.push_back(pod);
    }
    std::vector<DaemonNode> out;
    out.reserve(by_name.size());
    for (auto& [name, node] : by_name) {
      SortDaemonPods(node.pods);
      out.push_back(std::move(node));
    }
    return out;
  }

  // syncDaemonSet: claims the pods, makes a pod on every node that should
  // run one and lacks it, deletes the misplaced, extra, finished ones and
  // those of an unscheduled pod's vanished node (manage), then, with
  // nothing of that left to see, takes a rolling update a step; and writes
  // the status.
  void Sync(const std::string& key, SimTime now) {
    const DaemonRecord* found = sets_.Find(key);
    if (found == nullptr) return;
    if (!Listed()) {
      queue_.Add(key, now + std::chrono::milliseconds(100));  // once the nodes and pods are listed
      return;
    }
    const DaemonRecord& set = *found;
    // A DaemonSet being deleted is left to the garbage collector, status and all.
    if (set.deleting) return;
    if (!set.selector_valid) {
      api_.Record(RefOf(set), "Warning", "SelectingAll",
                  "This daemon set is selecting all pods. A non-empty selector is required.", now);
      return;
    }
    bool claimed = true;
    const std::vector<const PodRecord*> owned = pod_control_.Claim(
        RefOf(set), &set.selector, false, owned_.InNamespace(set.namespace_), claimed);
    std::vector<DaemonNode> nodes = NodesOf(set, owned);
    const bool satisfied = expectations_.Satisfied(key, now);
    std::string failure;
    if (!satisfied) {
      if (std::optional<SimTime> lapses = expectations_.Lapses(key)) queue_.Add(key, *lapses);
    } else if (claimed) {
      failure = Manage(set, nodes, now);
      if (failure.empty() && set.rolling && expectations_.Satisfied(key, now))
        failure = RollingUpdate(set, nodes, now);
    }
    const DaemonCounts counts = CountDaemonPods(nodes, set.hash, set.min_ready_seconds, now);
    const bool written = WriteStatus(set, counts, satisfied);
    if (!failure.empty() || !written || !claimed) {
      queue_.AddRateLimited(key, now);
      return;
    }
    queue_.Forget(key);
    // A pod ready but not yet for minReadySeconds counts as available then
    // (a surging node's new pod among them).
    if (std::optional<SimTime> at = NextAvailable(owned, set.min_ready_seconds, now))
      queue_.Add(key, *at);
  }

  // manage: what each node needs; "" or the first failure.
  std::string Manage(const DaemonRecord& set, const std::vector<DaemonNode>& nodes, SimTime now) {
    const bool surge = set.rolling && ResolveDaemonFenceposts(RollingOf(set), 1).max_surge > 0;
    std::vector<std::string> create_on;
    std::vector<const PodRecord*> remove;
    for (const DaemonNode& node : nodes) {
      if (!node.exists) {
        // An unscheduled pod of a node that is gone would wait forever.
        for (const PodRecord* pod : node.pods) {
          if (pod->node.empty() && !pod->deleting) remove.push_back(pod);
        }
        continue;
      }
      NodeActions actions = PodsShouldBeOnNode(node, set.hash, surge, set.min_ready_seconds, now);
      if (actions.create) create_on.push_back(node.name);
      remove.insert(remove.end(), actions.remove.begin(), actions.remove.end());
      for (const PodRecord* pod : actions.succeeded) {
        api_.Defer(RefOf(set), "Normal", "SucceededDaemonPod",
                   "Found succeeded daemon pod " + pod->namespace_ + "/" + pod->name + " on node " +
                       node.name + ", will try to delete it",
                   now);
        remove.push_back(pod);
      }
      for (const PodRecord* pod : actions.failed) {
        // Deleting a failed pod that the node keeps failing is backed off.
        const std::string backoff_key =
            set.uid + "/" + std::to_string(set.observed_generation) + "/" + node.name;
        SimDuration wait{};
        if (backoff_.InBackoff(backoff_key, now, wait)) {
          queue_.Add(set.kv.key, now + wait);
          continue;
        }
        backoff_.Next(backoff_key, now);
        api_.Defer(RefOf(set), "Warning", "FailedDaemonPod",
                   "Found failed daemon pod " + pod->namespace_ + "/" + pod->name + " on node " +
                       node.name + ", will try to kill it",
                   now);
        remove.push_back(pod);
      }
    }
    return SyncNodes(set, remove, create_on, now);
  }

  static const api::RollingUpdateDaemonSet* RollingOf(const DaemonRecord& set) {
    const api::DaemonSetSpec* spec = set.stored().spec();
    return spec != nullptr && spec->update_strategy() != nullptr
               ? spec->update_strategy()->rolling_update()
               : nullptr;
  }

  std::string RollingUpdate(const DaemonRecord& set, const std::vector<DaemonNode>& nodes,
                            SimTime now) {
    int32_t desired = 0;
    std::vector<DaemonNode> concerned;  // nodes with pods, and those that should run one
    for (const DaemonNode& node : nodes) {
      if (node.exists && node.fit.should_run) ++desired;
      if (!node.pods.empty() || (node.exists && node.fit.should_run)) concerned.push_back(node);
    }
    const DaemonFenceposts fenceposts = ResolveDaemonFenceposts(RollingOf(set), desired);
    const RollingPlan plan =
        PlanRollingUpdate(concerned, set.hash, fenceposts, desired, set.min_ready_seconds, now);
    return SyncNodes(set, plan.remove, plan.create_on, now);
  }

  // syncNodes: deletes `remove` and makes a pod on each node of
  // `create_on`, at most kDaemonBurst of each; "" or the first failure.
  std::string SyncNodes(const DaemonRecord& set, std::vector<const PodRecord*> remove,
                        std::vector<std::string> create_on, SimTime now) {
    if (create_on.size() > kDaemonBurst) create_on.resize(kDaemonBurst);
    if (remove.size() > kDaemonBurst) remove.resize(kDaemonBurst);
    std::string failure;
    if (!create_on.empty()) {
      const model::Value base = PodBase(set);
      std::vector<std::string> bodies;
      bodies.reserve(create_on.size());
      for (const std::string& node : create_on)
        bodies.push_back(model::ToJson(ForNode(base, node)));
      failure = pod_control_.Create(set.kv.key, RefOf(set), bodies, now);
    }
    if (!remove.empty()) {
      const std::string deleted = pod_control_.Delete(set.kv.key, RefOf(set), remove, now);
      if (failure.empty()) failure = deleted;
    }
    return failure;
  }

  // The DaemonSet's pod before it is given a node (CreatePodTemplate): its
  // template, named NAME-, owned by the DaemonSet, labelled with the
  // template's hash, with the DaemonSet pods' tolerations.
  static model::Value PodBase(const DaemonRecord& set) {
    using model::Value;
    const Value stored = model::ToValue(model::Kind("DaemonSet"), set.kv.value);
    const Value* spec = stored.Find("spec");
    Value pod =
        PodFromTemplate(spec != nullptr ? spec->Find("template") : nullptr, set.name + "-",
                        set.namespace_, ControllerRef("apps/v1", "DaemonSet", set.name, set.uid));
    PutMember(MemberOf(*pod.Find("metadata"), "labels", Value::Object()),
              kControllerRevisionHashLabel, Value::String(set.hash));
    // The template's tolerations with the DaemonSet pods' own, as its
    // placement counts them.
    Value tolerations = Value::Array();
    for (const model::Toleration& t : set.placement.tolerations)
      tolerations.Append(TolerationValue(t));
    PutMember(*pod.Find("spec"), "tolerations", std::move(tolerations));
    return pod;
  }

  // `base` bound to `node` by the scheduler through its required node
  // affinity, which is replaced by metadata.name In [node]
  // (ReplaceDaemonSetPodNodeNameNodeAffinity); preferred terms stay.
  static model::Value ForNode(model::Value pod, const std::string& node) {
    using model::Value;
    Value values = Value::Array();
    values.Append(Value::String(node));
    Value requirement = Value::Object();
    requirement.Set("key", Value::String("metadata.name"));
    requirement.Set("operator", Value::String("In"));
    requirement.Set("values", std::move(values));
    Value fields = Value::Array();
    fields.Append(std::move(requirement));
    Value term = Value::Object();
    term.Set("matchFields", std::move(fields));
    Value terms = Value::Array();
    terms.Append(std::move(term));
    Value required = Value::Object();
    required.Set("nodeSelectorTerms", std::move(terms));
    Value& affinity = MemberOf(*pod.Find("spec"), "affinity", Value::Object());
    PutMember(MemberOf(affinity, "nodeAffinity", Value::Object()),
              "requiredDuringSchedulingIgnoredDuringExecution", std::move(required));
    return pod;
  }

  // Writes the counts (and, when the sync acted, observedGeneration)
  // unless the status says so already; false when it should be tried again.
  bool WriteStatus(const DaemonRecord& set, const DaemonCounts& counts, bool observed) {
    std::unique_ptr<api::DaemonSetT> ds(set.stored().UnPack());
    if (!ds->status) ds->status = std::make_unique<api::DaemonSetStatusT>();
    api::DaemonSetStatusT& status = *ds->status;
    const DaemonCounts had{status.desired_number_scheduled, status.current_number_scheduled,
                           status.number_misscheduled,      status.number_ready,
                           status.updated_number_scheduled, status.number_available,
                           status.number_unavailable};
    // Unchanged counts are written only to raise observedGeneration.
    if (had == counts && (status.observed_generation >= set.generation || !observed)) return true;
    if (observed) status.observed_generation = set.generation;
    status.desired_number_scheduled = counts.desired;
    status.current_number_scheduled = counts.current;
    status.number_misscheduled = counts.misscheduled;
    status.number_ready = counts.ready;
    status.updated_number_scheduled = counts.updated;
    status.number_available = counts.available;
    status.number_unavailable = counts.unavailable;
    ds->metadata->resource_version = std::to_string(set.kv.mod_revision.value());
    return api_.Update(model::Kind("DaemonSet"), set.namespace_, set.name, "status",
                       model::Pack(*ds)) != ControllerApi::Updated::kFailed;
  }

  ControllerApi api_;
  client::Informer sets_informer_;
  OnDemandInformer nodes_;  // while there is a DaemonSet (Follow)
  OnDemandInformer pods_;   // likewise
  ObjectIndex<DaemonRecord> sets_;
  std::map<std::string, scheduler::NodeInfo> nodes_by_name_;
  Expectations expectations_;
  WorkQueue queue_;
  OwnedPods<DaemonRecord> owned_{sets_, expectations_, queue_, api_.log()};
  PodControl pod_control_{api_, expectations_};
  FailedPodBackoff backoff_;
};

}  // namespace

void RunDaemonSetController(pipeline::StageContext& context, const std::atomic<bool>& stopping) {
  DaemonSetLoop(context).Run(stopping);
}

}  // namespace podflow::controllers
