// podflow-bench scheduler: the scheduler's core (informer cache,
// queue, cycle, assume) without the bus, on kube-scheduler's scheduler_perf
// shapes: 5,000 nodes (4 cpu, 32Gi, 110 pods, 10 zones) and 10,000 pending
// pods (100m cpu, 500Mi), in variants that exercise one plugin family each.
// Every variant starts from an empty cache and the default profile.
//
// Per variant it prints <variant>_pods_per_s (cycles over wall time),
// <variant>_p50_us / _p99_us (one cycle: pop, filter, score, select,
// assume), <variant>_scheduled / _unschedulable, <variant>_cache_mb (heap
// held by the cache and queue after the run) and
// <variant>_equivalence_hit_pct (cycles that found their pod's class in the
// equivalence cache).
//
// Then the comparison: the same pods go through two fresh cores in lockstep,
// one with the equivalence cache and one evaluating every plugin on every
// visited node, and each pair of decisions is compared field by field
// (every verdict, every kept score): <variant>_compared,
// <variant>_differences (the first ones are described on stderr) and
// <variant>_reference_pods_per_s (the full evaluation's speed).
//
// Flags: --nodes N --pods N --only VARIANT --seconds S (bound per phase)
// --no-compare.
#include <malloc.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench.h"
#include "model/codec.h"
#include "model/objects.h"
#include "scheduler/scheduler.h"

namespace podflow::bench {
namespace {

using Clock = scheduler::SchedulerCore::Clock;
constexpr int kZones = 10;

struct Variant {
  std::string name;
  // Extra node YAML (labels / taints) for node i, and the pod manifest of pod i.
  std::function<std::string(int)> node_spec;
  std::function<std::string(int)> pod_extra;  // labels block + spec additions
  int32_t percentage = 0;
};

scheduler::StoredObject Stored(const std::string& yaml, int64_t revision) {
  auto docs = model::DecodeManifests(yaml);
  if (!docs.ok() || docs->size() != 1 || !(*docs)[0].status.ok()) {
    std::fprintf(stderr, "podflow-bench scheduler: bad manifest:\n%s\n", yaml.c_str());
    std::exit(1);
  }
  const model::Decoded& d = (*docs)[0];
  return {model::ObjectKey(*d.object.kind, d.object.namespace_, d.object.name), d.object.bytes,
          Revision(revision)};
}

std::string NodeYaml(int i, const Variant& v) {
  std::string name = "node-" + std::to_string(i);
  std::string out = "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
                    "\n  labels:\n    kubernetes.io/hostname: " + name +
                    "\n    topology.kubernetes.io/zone: zone-" + std::to_string(i % kZones) + "\n";
  out += v.node_spec ? v.node_spec(i) : "";
  out += "status:\n  allocatable: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n"
         "  capacity: {cpu: \"4\", memory: 32Gi, pods: \"110\"}\n";
  return out;
}

// pod_extra returns "labels:...\n" lines under metadata (prefixed "L:") and
// spec lines (prefixed "S:"); split here to keep the variants short.
std::string PodYaml(int i, const Variant& v) {
  std::string labels, spec;
  if (v.pod_extra) {
    std::string extra = v.pod_extra(i);
    size_t at = 0;
    while (at < extra.size()) {
      size_t end = extra.find('\n', at);
      if (end == std::string::npos) end = extra.size();
      std::string line = extra.substr(at, end - at);
      if (line.rfind("L:", 0) == 0) labels += "    " + line.substr(2) + "\n";
      if (line.rfind("S:", 0) == 0) spec += "  " + line.substr(2) + "\n";
      at = end + 1;
    }
  }
  std::string name = "pod-" + std::to_string(i);
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: default\n  uid: uid-" + name +
         "\n  creationTimestamp: \"2026-01-01T00:00:00Z\"\n" + (labels.empty() ? "" : "  labels:\n" + labels) +
         "spec:\n" + spec +
         "  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.9\n"
         "    resources: {requests: {cpu: 100m, memory: 500Mi}}\n";
}

size_t HeapInUse() { return mallinfo2().uordblks; }

// Runs `cached` and `reference` in lockstep and compares each decision;
// returns the number of differences and errors.
size_t Compare(const std::string& name, std::unique_ptr<scheduler::SchedulerCore> cached,
               std::unique_ptr<scheduler::SchedulerCore> reference, Clock::time_point now,
               double seconds) {
  size_t compared = 0, differences = 0;
  double reference_us = 0;
  for (;;) {
    if (reference_us > seconds * 1e6) {
      std::fprintf(stderr, "podflow-bench scheduler: %s comparison stopped at the %.0f s bound\n", name.c_str(),
                   seconds);
      break;
    }
    auto a = cached->Next(now);
    const auto t = std::chrono::steady_clock::now();
    auto b = reference->Next(now);
    reference_us += MicrosSince(t);
    if (!a || !b) {
      if (a.has_value() != b.has_value()) {
        ++differences;
        std::fprintf(stderr, "podflow-bench scheduler: %s: one core ran out of pods first\n", name.c_str());
      }
      break;
    }
    ++compared;
    if (!a->ok() || !b->ok()) {
      ++differences;
      std::fprintf(stderr, "podflow-bench scheduler: %s: %s / %s\n", name.c_str(), a->status().ToString().c_str(),
                   b->status().ToString().c_str());
      continue;
    }
    std::vector<std::string> why = scheduler::DecisionDifferences((*b)->decision, (*a)->decision);
    if ((*a)->key != (*b)->key) why.insert(why.begin(), "pod: " + (*b)->key + " -> " + (*a)->key);
    if (why.empty()) continue;
    if (++differences <= 3) {
      std::fprintf(stderr, "podflow-bench scheduler: %s: %s decided differently with the cache:\n", name.c_str(),
                   (*b)->key.c_str());
      for (const std::string& w : why) std::fprintf(stderr, "  %s\n", w.c_str());
    }
  }
  Emit(name + "_compared", static_cast<double>(compared));
  Emit(name + "_differences", static_cast<double>(differences));
  Emit(name + "_reference_pods_per_s", reference_us > 0 ? static_cast<double>(compared) / (reference_us / 1e6) : 0);
  return differences;
}

int RunVariant(const Variant& v, int num_nodes, int num_pods, double seconds, bool compare) {
  // Manifests are decoded before the clock starts: the figure is the
  // scheduler's, not the YAML codec's.
  std::vector<scheduler::StoredObject> nodes, pods;
  nodes.reserve(num_nodes);
  pods.reserve(num_pods);
  int64_t revision = 1;
  for (int i = 0; i < num_nodes; ++i) nodes.push_back(Stored(NodeYaml(i, v), ++revision));
  for (int i = 0; i < num_pods; ++i) pods.push_back(Stored(PodYaml(i, v), ++revision));

  const size_t heap_before = HeapInUse();
  auto registry = scheduler::plugins::NewInTreeRegistry();
  if (!registry.ok()) return 1;
  scheduler::ProfileConfig config = scheduler::DefaultProfileConfig();
  config.seed = 1;
  config.percentage_of_nodes_to_score = v.percentage;
  auto profile = scheduler::Profile::Build(*registry, config);
  if (!profile.ok()) {
    std::fprintf(stderr, "podflow-bench scheduler: %s\n", profile.status().ToString().c_str());
    return 1;
  }
  const Clock::time_point now = Clock::now();
  auto new_core = [&](bool equivalence_cache) {
    auto core = std::make_unique<scheduler::SchedulerCore>(*profile);
    core->set_equivalence_cache(equivalence_cache);
    for (const scheduler::StoredObject& node : nodes) core->UpsertNode(node, now);
    for (const scheduler::StoredObject& pod : pods) core->UpsertPod(pod, now);
    return core;
  };
  auto core = new_core(true);

  std::vector<double> cycle_us;
  cycle_us.reserve(num_pods);
  size_t scheduled = 0, unschedulable = 0, errors = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(seconds);
  for (;;) {
    const auto t = std::chrono::steady_clock::now();
    if (t > deadline) {
      std::fprintf(stderr, "podflow-bench scheduler: %s stopped at the %.0f s bound\n", v.name.c_str(), seconds);
      break;
    }
    auto next = core->Next(now);
    if (!next) break;
    cycle_us.push_back(MicrosSince(t));
    if (!next->ok()) {
      ++errors;
      std::fprintf(stderr, "podflow-bench scheduler: %s\n", next->status().ToString().c_str());
      continue;
    }
    if ((*next)->decision.scheduled()) {
      ++scheduled;
    } else {
      ++unschedulable;
    }
  }
  const double elapsed = MicrosSince(start) / 1e6;
  const size_t cycles = cycle_us.size();
  Emit(v.name + "_pods_per_s", elapsed > 0 ? static_cast<double>(cycles) / elapsed : 0);
  Emit(v.name + "_p50_us", Percentile(&cycle_us, 50));
  Emit(v.name + "_p99_us", Percentile(&cycle_us, 99));
  Emit(v.name + "_scheduled", static_cast<double>(scheduled));
  Emit(v.name + "_unschedulable", static_cast<double>(unschedulable));
  if (errors > 0) Emit(v.name + "_errors", static_cast<double>(errors));
  Emit(v.name + "_cache_mb", static_cast<double>(HeapInUse() - std::min(HeapInUse(), heap_before)) / (1 << 20));
  // Where a cycle's time went (every cycle per extension point; plugins on
  // the sampled cycles), per scheduled pod.
  const scheduler::SchedulerMetrics& m = core->metrics();
  for (size_t p = 0; p < scheduler::kNumExtensionPoints; ++p) {
    const auto point = static_cast<scheduler::ExtensionPoint>(p);
    std::string name(scheduler::ExtensionPointName(point));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    Emit(v.name + "_" + name + "_us_per_cycle",
         m.total_attempts() > 0 ? m.point(point).total_us / static_cast<double>(m.total_attempts()) : 0);
  }
  std::vector<std::pair<double, std::string>> plugins;
  for (const auto& [key, timing] : m.plugins()) plugins.emplace_back(timing.MeanUs(), key);
  std::sort(plugins.begin(), plugins.end(), std::greater<>());
  for (size_t i = 0; i < plugins.size() && i < 3; ++i) {
    std::string key = plugins[i].second;
    std::replace(key.begin(), key.end(), '/', '_');
    Emit(v.name + "_slowest" + std::to_string(i + 1) + "_" + key + "_us", plugins[i].first);
  }
  const uint64_t lookups = core->equivalence_hits() + core->equivalence_misses();
  Emit(v.name + "_equivalence_hit_pct",
       lookups > 0 ? 100.0 * static_cast<double>(core->equivalence_hits()) / static_cast<double>(lookups) : 0);
  core.reset();
  if (compare) errors += Compare(v.name, new_core(true), new_core(false), now, seconds);
  return errors > 0 ? 1 : 0;
}

std::vector<Variant> Variants() {
  std::vector<Variant> out;
  out.push_back({"basic", nullptr, nullptr, 0});
  out.push_back({"basic_all_nodes", nullptr, nullptr, 100});
  // Half the nodes carry the label the pods require.
  out.push_back({"node_affinity",
                 [](int i) { return i % 2 == 0 ? "    tier: gold\n" : ""; },
                 [](int) {
                   return std::string(
                       "S:affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                       "{nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: In, values: [gold]}]}]}}}\n");
                 },
                 0});
  // A third of the nodes NoSchedule-tainted, a third PreferNoSchedule.
  out.push_back({"taints",
                 [](int i) -> std::string {
                   if (i % 3 == 0) return "spec:\n  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n";
                   if (i % 3 == 1) return "spec:\n  taints: [{key: spot, value: \"true\", effect: PreferNoSchedule}]\n";
                   return "";
                 },
                 nullptr, 0});
  // Four groups; a pod keeps off any node already running one of its group.
  out.push_back({"anti_affinity", nullptr,
                 [](int i) {
                   std::string g = "g" + std::to_string(i % 4);
                   return "L:group: " + g +
                          "\nS:affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
                          "[{labelSelector: {matchLabels: {group: " +
                          g + "}}, topologyKey: kubernetes.io/hostname}]}}\n";
                 },
                 0});
  // One app spread evenly over the zones.
  out.push_back({"topology_spread", nullptr,
                 [](int) {
                   return std::string(
                       "L:app: web\nS:topologySpreadConstraints: [{maxSkew: 1, topologyKey: "
                       "topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: "
                       "{matchLabels: {app: web}}}]\n");
                 },
                 0});
  return out;
}

}  // namespace

int RunSchedulerBench(const std::vector<std::string>& args) {
  int nodes = 5000, pods = 10000;
  double seconds = 60;
  std::string only;
  bool compare = true;
  std::vector<std::string> pairs;
  for (const std::string& a : args) {
    if (a == "--no-compare") {
      compare = false;
    } else {
      pairs.push_back(a);
    }
  }
  for (size_t i = 0; i + 1 < pairs.size(); i += 2) {
    const std::vector<std::string>& args = pairs;
    if (args[i] == "--nodes") {
      nodes = std::stoi(args[i + 1]);
    } else if (args[i] == "--pods") {
      pods = std::stoi(args[i + 1]);
    } else if (args[i] == "--seconds") {
      seconds = std::stod(args[i + 1]);
    } else if (args[i] == "--only") {
      only = args[i + 1];
    } else {
      std::fprintf(stderr, "podflow-bench scheduler: unknown flag %s\n", args[i].c_str());
      return 2;
    }
  }
  if (pairs.size() % 2 != 0 || nodes <= 0 || pods <= 0) {
    std::fprintf(stderr,
                 "usage: podflow-bench scheduler [--nodes N] [--pods N] [--seconds S] [--only VARIANT] "
                 "[--no-compare]\n");
    return 2;
  }
  Emit("nodes", nodes);
  Emit("pods", pods);
  int code = 0;
  bool ran = false;
  for (const Variant& v : Variants()) {
    if (!only.empty() && v.name != only) continue;
    ran = true;
    code |= RunVariant(v, nodes, pods, seconds, compare);
  }
  if (!ran) {
    std::fprintf(stderr, "podflow-bench scheduler: no variant named %s\n", only.c_str());
    return 2;
  }
  return code;
}

}  // namespace podflow::bench
