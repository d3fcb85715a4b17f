#include "scheduler/framework/equivalence_cache.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "scheduler/framework/profile.h"

namespace podflow::scheduler {
namespace {

// Appends values unambiguously: fixed-width integers, length-prefixed
// strings, counted lists.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}

  void Int(int64_t v) {
    char bytes[sizeof v];
    std::memcpy(bytes, &v, sizeof v);
    out_.append(bytes, sizeof v);
  }
  template <typename E>
    requires std::is_enum_v<E>
  void Enum(E e) {
    Int(static_cast<int64_t>(e));
  }
  void Str(std::string_view s) {
    Int(static_cast<int64_t>(s.size()));
    out_.append(s);
  }
  template <typename T, typename F>
  void List(const std::vector<T>& items, F&& each) {
    Int(static_cast<int64_t>(items.size()));
    for (const T& item : items) each(item);
  }
  void Strs(const std::vector<std::string>& items) {
    List(items, [this](const std::string& s) { Str(s); });
  }
  void LabelPairs(const Labels& labels) {
    List(labels, [this](const auto& kv) {
      Str(kv.first);
      Str(kv.second);
    });
  }
  void Selector(const LabelSelector& selector) {
    Int(selector.MatchesNothing() ? 1 : 0);
    List(selector.requirements(), [this](const LabelSelectorRequirement& r) {
      Str(r.key);
      Enum(r.op);
      Strs(r.values);
    });
  }
  void Requirements(const std::vector<NodeSelectorRequirement>& rs) {
    List(rs, [this](const NodeSelectorRequirement& r) {
      Str(r.key);
      Enum(r.op);
      Strs(r.values);
    });
  }
  void Term(const NodeSelectorTerm& t) {
    Requirements(t.match_expressions);
    Requirements(t.match_fields);
  }
  void Res(const Resources& r) {
    Int(r.milli_cpu);
    Int(r.memory);
    Int(r.ephemeral_storage);
    Int(r.allowed_pods);
    List(r.scalar, [this](const ScalarResource& s) {
      Str(s.name);
      Int(s.value);
    });
  }
  void AffinityTerms(const std::vector<AffinityTerm>& terms) {
    List(terms, [this](const AffinityTerm& t) { Str(t.key); });
  }
  void WeightedTerms(const std::vector<WeightedAffinityTerm>& terms) {
    List(terms, [this](const WeightedAffinityTerm& w) {
      Int(w.weight);
      Str(w.term.key);
    });
  }

 private:
  std::string& out_;
};

// A tripwire for whoever adds a field to PodInfo: write it into the
// signature below (or say there why it names the pod), then update the size.
// A field a plugin reads but the signature leaves out would let the cache
// hand one pod another's verdicts. (752 bytes with libstdc++ on x86-64.)
static_assert(sizeof(void*) != 8 || sizeof(std::string) != 32 || sizeof(PodInfo) == 752,
              "PodInfo changed: update EquivalenceSignature");

}  // namespace

std::string EquivalenceSignature(const PodInfo& pod) {
  std::string out;
  out.reserve(256);
  Writer w(out);
  // Left out, as naming the pod: name, uid, start_time (preemption orders
  // victims by it; it is never read for the pod being scheduled), and the
  // names of its volumes. A
  // PersistentVolumeClaim an ephemeral volume names carries the pod's name
  // (PodVolume::claim_name), so such pods are never equivalent.
  w.Str(pod.namespace_);
  w.LabelPairs(pod.labels);
  w.Int(pod.deleting ? 1 : 0);
  w.Str(pod.node_name);
  w.Str(pod.scheduler_name);
  w.Int(pod.priority);
  w.Enum(pod.preemption_policy);
  w.Str(pod.nominated_node_name);

  w.LabelPairs(pod.node_selector);
  w.Int(pod.required_node_affinity.has_value() ? 1 : 0);
  if (pod.required_node_affinity.has_value()) {
    w.List(pod.required_node_affinity->terms, [&w](const NodeSelectorTerm& t) { w.Term(t); });
  }
  w.List(pod.preferred_node_affinity, [&w](const PreferredSchedulingTerm& t) {
    w.Int(t.weight);
    w.Term(t.preference);
  });
  w.List(pod.tolerations, [&w](const Toleration& t) {
    w.Str(t.key);
    w.Enum(t.op);
    w.Str(t.value);
    w.Enum(t.effect);
  });
  w.List(pod.host_ports, [&w](const HostPort& p) {
    w.Enum(p.protocol);
    w.Str(p.host_ip);
    w.Int(p.port);
  });

  w.Res(pod.requests);
  w.Int(pod.non_zero_milli_cpu);
  w.Int(pod.non_zero_memory);

  // A volume's name is read by no plugin (a claim's by its claim_name), and
  // the service account token volume of every pod has a name of its own
  // (kube-api-access-xxxxx): left out, so that such pods stay equivalent.
  w.List(pod.volumes, [&w](const PodVolume& v) {
    w.Enum(v.kind);
    w.Str(v.id);
    w.Str(v.rbd_pool);
    w.Strs(v.rbd_monitors);
    w.Int(v.read_only ? 1 : 0);
    w.Str(v.claim_name);
  });

  w.List(pod.topology_spread_constraints, [&w](const TopologySpreadConstraint& c) {
    w.Int(c.max_skew);
    w.Str(c.topology_key);
    w.Enum(c.when_unsatisfiable);
    w.Selector(c.selector);
    w.Int(c.min_domains);
    w.Enum(c.node_affinity_policy);
    w.Enum(c.node_taints_policy);
    w.Strs(c.match_label_keys);
  });

  w.Strs(pod.images);
  w.Int(pod.num_containers);
  w.Str(pod.controller_kind);
  w.Str(pod.controller_uid);
  w.Int(pod.best_effort ? 1 : 0);

  // An AffinityTerm's key is built from all its fields.
  w.AffinityTerms(pod.pod_affinity.required_affinity);
  w.AffinityTerms(pod.pod_affinity.required_anti_affinity);
  w.WeightedTerms(pod.pod_affinity.preferred_affinity);
  w.WeightedTerms(pod.pod_affinity.preferred_anti_affinity);
  w.Int(pod.pod_affinity.declared ? 1 : 0);
  return out;
}

EquivalenceCache::EquivalenceCache(const Profile& profile, size_t max_classes)
    : profile_(&profile), max_classes_(std::max<size_t>(1, max_classes)) {}

EquivalenceCache::Class& EquivalenceCache::Acquire(const std::string& signature, size_t num_nodes,
                                                   uint64_t objects_generation, uint64_t filter_skips) {
  ++clock_;
  Class* found = nullptr;
  for (Class& c : classes_) {
    if (c.signature == signature) {
      found = &c;
      break;
    }
  }
  if (found == nullptr) {
    ++misses_;
    if (classes_.size() < max_classes_) {
      found = &classes_.emplace_back();
    } else {
      found = &*std::min_element(classes_.begin(), classes_.end(),
                                 [](const Class& a, const Class& b) { return a.last_used < b.last_used; });
    }
    found->signature = signature;
    found->node_generation.clear();
  } else {
    ++hits_;
  }
  Class& c = *found;
  c.last_used = clock_;
  const size_t num_scores = profile_->score_plugins().size();
  if (c.node_generation.size() != num_nodes || c.objects_generation != objects_generation ||
      c.filter_skips != filter_skips) {
    c.objects_generation = objects_generation;
    c.filter_skips = filter_skips;
    c.node_generation.assign(num_nodes, 0);
    c.verdict.assign(num_nodes, PluginStatus::Success());
    c.scored.assign(num_nodes, 0);
    c.raw.assign(num_nodes * num_scores, 0);
  }
  return c;
}

void EquivalenceCache::SetScoreSkips(Class& c, uint64_t score_skips) const {
  if (c.score_skips == score_skips) return;
  c.score_skips = score_skips;
  std::fill(c.scored.begin(), c.scored.end(), 0);
}

}  // namespace podflow::scheduler
