// The "distinct" workloads of podflow-bench scheduler: pods that differ in
// everything the scheduler reads, so that no two share an equivalence
// signature and no cycle can reuse another's verdicts (the cost when pods
// differ, which the identical-pod variants hide).
//
// Nodes come in three sizes and carry a disk type, one of 20 pools and the
// zone (node i is in zone i % 10); one in ten is tainted NoSchedule for one
// of five teams, one in ten PreferNoSchedule as spot capacity. Pods draw
// their requests (50m-1000m cpu, 64Mi-2Gi memory), labels (one of 200
// apps, a tier, a team), required node affinity (none, or on disk type,
// pool, zone or instance type) and, one in three, preferred node affinity
// with random weights, tolerations of their team's taint or of spot nodes,
// and, one in ten each, required anti-affinity against their own app per
// node or a zone topology spread constraint over their app (DoNotSchedule
// or ScheduleAnyway); one in twenty has preferred pod affinity to the
// zones running its team's pods. A draw that repeats an earlier pod's is
// drawn again.
// Everything comes from fixed seeds: every run schedules the same pods on
// the same nodes.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "scheduler_variants.h"

namespace podflow::bench {
namespace {

constexpr uint64_t kNodeSeed = 0x6e6f646573ULL;
constexpr uint64_t kPodSeed = 0x706f6473ULL;
constexpr int kPools = 20;
constexpr int kTeams = 5;
constexpr int kApps = 200;

struct Draw {
  std::mt19937_64 rng;
  explicit Draw(uint64_t seed) : rng(seed) {}
  int Below(int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); }
  bool OneIn(int n) { return Below(n) == 0; }
};

// Node i's draws, a function of i alone: its labels and its size are asked
// for separately.
Draw NodeDraw(int i) {
  return Draw(kNodeSeed ^ (static_cast<uint64_t>(i) * 0x9e3779b97f4a7c15ULL));
}

std::string NodeSpec(int i) {
  Draw d = NodeDraw(i);
  const int size = d.Below(3);
  static const char* const kTypes[] = {"m.large", "m.xlarge", "m.2xlarge"};
  std::string out = std::string("    node.kubernetes.io/instance-type: ") + kTypes[size] + "\n";
  out += std::string("    disktype: ") + (d.OneIn(2) ? "ssd" : "hdd") + "\n";
  out += "    pool: pool-" + std::to_string(d.Below(kPools)) + "\n";
  const int taint = d.Below(10);
  if (taint == 0) {
    out += "spec:\n  taints: [{key: dedicated, value: team-" + std::to_string(d.Below(kTeams)) +
           ", effect: NoSchedule}]\n";
  } else if (taint == 1) {
    out += "spec:\n  taints: [{key: spot, value: \"true\", effect: PreferNoSchedule}]\n";
  }
  return out;
}

std::string NodeSize(int i) {
  Draw d = NodeDraw(i);
  const int size = d.Below(3);  // the first draw, as in NodeSpec
  static const char* const kSizes[] = {
      "{cpu: \"4\", memory: 16Gi, pods: \"110\"}",
      "{cpu: \"8\", memory: 32Gi, pods: \"110\"}",
      "{cpu: \"16\", memory: 64Gi, pods: \"110\"}",
  };
  return kSizes[size];
}

std::string Match(const std::string& key, const char* op, const std::vector<std::string>& values) {
  std::string out = "{key: " + key + ", operator: " + op;
  if (!values.empty()) {
    out += ", values: [";
    for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i];
    out += "]";
  }
  return out + "}";
}

std::string Pool(Draw& d) { return "pool-" + std::to_string(d.Below(kPools)); }

std::string NodeAffinity(Draw& d) {
  std::string required;
  switch (d.Below(8)) {
    case 0:
      required = Match("disktype", "In", {"ssd"});
      break;
    case 1: {
      std::vector<std::string> pools;
      while (pools.size() < 3) {
        std::string p = Pool(d);
        bool seen = false;
        for (const std::string& q : pools) seen = seen || q == p;
        if (!seen) pools.push_back(p);
      }
      required = Match("pool", "In", pools);
      break;
    }
    case 2:
      required =
          Match("topology.kubernetes.io/zone", "NotIn", {"zone-" + std::to_string(d.Below(10))});
      break;
    case 3:
      required = Match("node.kubernetes.io/instance-type", "In", {"m.xlarge", "m.2xlarge"});
      break;
    default:
      break;
  }
  std::string preferred;
  if (d.OneIn(3)) {
    // One draw per statement: the operands of + are evaluated in no fixed
    // order, and the pods must not depend on the compiler.
    const int ssd_weight = 1 + d.Below(100);
    const int pool_weight = 1 + d.Below(100);
    const std::string pool = Pool(d);
    preferred =
        "preferredDuringSchedulingIgnoredDuringExecution: [{weight: " + std::to_string(ssd_weight) +
        ", preference: {matchExpressions: [" + Match("disktype", "In", {"ssd"}) +
        "]}}, {weight: " + std::to_string(pool_weight) + ", preference: {matchExpressions: [" +
        Match("pool", "In", {pool}) + "]}}]";
  }
  if (required.empty() && preferred.empty()) return "";
  std::string out = "nodeAffinity: {";
  if (!required.empty()) {
    out +=
        "requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: "
        "[" +
        required + "]}]}";
  }
  if (!preferred.empty()) out += (required.empty() ? "" : ", ") + preferred;
  return out + "}";
}

std::string PodExtra(Draw& d) {
  const std::string app = "app-" + std::to_string(d.Below(kApps));
  const std::string team = "team-" + std::to_string(d.Below(kTeams));
  static const char* const kTiers[] = {"web", "api", "batch"};
  const char* tier = kTiers[d.Below(3)];
  const int milli_cpu = 50 + 10 * d.Below(96);
  const int memory_mi = 64 * (1 + d.Below(32));
  std::string out = "L:app: " + app + "\nL:tier: " + tier + "\nL:team: " + team + "\n";
  out +=
      "R:{cpu: " + std::to_string(milli_cpu) + "m, memory: " + std::to_string(memory_mi) + "Mi}\n";

  std::vector<std::string> affinity;
  if (std::string node = NodeAffinity(d); !node.empty()) affinity.push_back(node);
  if (d.OneIn(10)) {
    affinity.push_back(
        "podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: "
        "{matchLabels: {app: " +
        app + "}}, topologyKey: kubernetes.io/hostname}]}");
  }
  if (d.OneIn(20)) {
    affinity.push_back("podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: " +
                       std::to_string(1 + d.Below(100)) +
                       ", podAffinityTerm: {labelSelector: {matchLabels: {team: " + team +
                       "}}, topologyKey: topology.kubernetes.io/zone}}]}");
  }
  if (!affinity.empty()) {
    out += "S:affinity: {";
    for (size_t i = 0; i < affinity.size(); ++i) out += (i ? ", " : "") + affinity[i];
    out += "}\n";
  }

  std::vector<std::string> tolerations;
  if (d.OneIn(5))
    tolerations.push_back("{key: dedicated, operator: Equal, value: " + team +
                          ", effect: NoSchedule}");
  if (d.OneIn(5)) tolerations.push_back("{key: spot, operator: Exists, effect: PreferNoSchedule}");
  if (!tolerations.empty()) {
    out += "S:tolerations: [";
    for (size_t i = 0; i < tolerations.size(); ++i) out += (i ? ", " : "") + tolerations[i];
    out += "]\n";
  }

  if (d.OneIn(10)) {
    const int max_skew = 1 + d.Below(3);
    const char* when = d.OneIn(2) ? "DoNotSchedule" : "ScheduleAnyway";
    out += "S:topologySpreadConstraints: [{maxSkew: " + std::to_string(max_skew) +
           ", topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: " + when +
           ", labelSelector: {matchLabels: {app: " + app + "}}}]\n";
  }
  return out;
}

// Pods in the order asked for; pod i is the i-th draw that no earlier pod
// made.
class DistinctPods {
 public:
  std::string Pod(int i) {
    while (static_cast<int>(pods_.size()) <= i) {
      std::string extra = PodExtra(draw_);
      if (seen_.insert(extra).second) pods_.push_back(std::move(extra));
    }
    return pods_[static_cast<size_t>(i)];
  }

 private:
  Draw draw_{kPodSeed};
  std::unordered_set<std::string> seen_;
  std::vector<std::string> pods_;
};

SchedulerVariant Distinct(std::string name, int nodes) {
  auto pods = std::make_shared<DistinctPods>();
  SchedulerVariant v;
  v.name = std::move(name);
  v.node_spec = NodeSpec;
  v.node_size = NodeSize;
  v.pod_extra = [pods](int i) { return pods->Pod(i); };
  v.nodes = nodes;
  v.on_request = true;
  v.distinct_pods = true;
  return v;
}

}  // namespace

std::vector<SchedulerVariant> DistinctVariants() {
  return {Distinct("distinct", 0), Distinct("distinct_50k", 50000)};
}

}  // namespace podflow::bench
