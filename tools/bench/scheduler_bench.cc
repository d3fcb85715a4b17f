// podflow-bench scheduler: the scheduler's core (informer cache,
// queue, cycle, assume) without the bus, on kube-scheduler's scheduler_perf
// shapes: 5,000 nodes (4 cpu, 32Gi, 110 pods, 10 zones) and 10,000 pending
// pods (100m cpu, 500Mi), in variants that exercise one plugin family each;
// the distinct variants (scheduler_distinct.cc) draw varied nodes and pods
// instead. Every variant starts from an empty cache and the default profile.
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
// <variant>_signatures counts the equivalence classes among the pods (1
// where all pods are alike; the pod count for "distinct", whose pods no
// two share one: scheduler_distinct.cc).
//
// Arguments: VARIANT... (or --only VARIANT) runs those variants; without,
// every variant but the ones run only on request (distinct, 5,000 nodes,
// and distinct_50k, 50,000 nodes whatever --nodes says: minutes each).
// Flags: --nodes N --pods N --seconds S (bound per phase; 60, or 600 for
// the variants run on request) --no-compare.
#include <jemalloc/jemalloc.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "bench.h"
#include "model/codec.h"
#include "model/objects.h"
#include "scheduler/scheduler.h"
#include "scheduler_variants.h"

namespace podflow::bench {
namespace {

using Clock = scheduler::SchedulerCore::Clock;
constexpr int kZones = 10;

using Variant = SchedulerVariant;

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
  const std::string size =
      v.node_size ? v.node_size(i) : "{cpu: \"4\", memory: 32Gi, pods: \"110\"}";
  out += "status:\n  allocatable: " + size + "\n  capacity: " + size + "\n";
  return out;
}

// pod_extra's lines (scheduler_variants.h) split into their places.
std::string PodYaml(int i, const Variant& v) {
  std::string labels, spec, requests = "{cpu: 100m, memory: 500Mi}";
  if (v.pod_extra) {
    std::string extra = v.pod_extra(i);
    size_t at = 0;
    while (at < extra.size()) {
      size_t end = extra.find('\n', at);
      if (end == std::string::npos) end = extra.size();
      std::string line = extra.substr(at, end - at);
      if (line.rfind("L:", 0) == 0) labels += "    " + line.substr(2) + "\n";
      if (line.rfind("S:", 0) == 0) spec += "  " + line.substr(2) + "\n";
      if (line.rfind("R:", 0) == 0) requests = line.substr(2);
      at = end + 1;
    }
  }
  std::string name = "pod-" + std::to_string(i);
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\n  namespace: default\n  uid: uid-" + name +
         "\n  creationTimestamp: \"2026-01-01T00:00:00Z\"\n" +
         (labels.empty() ? "" : "  labels:\n" + labels) + "spec:\n" + spec +
         "  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.9\n"
         "    resources: {requests: " +
         requests + "}\n";
}

// Bytes the allocator (jemalloc, as in every podflow program) has handed
// out and not had back; 0 when it cannot tell.
size_t HeapInUse() {
  uint64_t epoch = 1;  // stats are a snapshot taken at each new epoch
  size_t size = sizeof(epoch);
  if (mallctl("epoch", &epoch, &size, &epoch, size) != 0) return 0;
  size_t allocated = 0;
  size = sizeof(allocated);
  return mallctl("stats.allocated", &allocated, &size, nullptr, 0) == 0 ? allocated : 0;
}

// Runs `cached` and `reference` in lockstep and compares each decision;
// returns the number of differences and errors.
size_t Compare(const std::string& name, std::unique_ptr<scheduler::SchedulerCore> cached,
               std::unique_ptr<scheduler::SchedulerCore> reference, Clock::time_point now,
               double seconds) {
  size_t compared = 0, differences = 0;
  double reference_us = 0;
  for (;;) {
    if (reference_us > seconds * 1e6) {
      std::fprintf(stderr, "podflow-bench scheduler: %s comparison stopped at the %.0f s bound\n",
                   name.c_str(), seconds);
      break;
    }
    auto a = cached->Next(now);
    const auto t = std::chrono::steady_clock::now();
    auto b = reference->Next(now);
    reference_us += MicrosSince(t);
    if (!a || !b) {
      if (a.has_value() != b.has_value()) {
        ++differences;
        std::fprintf(stderr, "podflow-bench scheduler: %s: one core ran out of pods first\n",
                     name.c_str());
      }
      break;
    }
    ++compared;
    if (!a->ok() || !b->ok()) {
      ++differences;
      std::fprintf(stderr, "podflow-bench scheduler: %s: %s / %s\n", name.c_str(),
                   a->status().ToString().c_str(), b->status().ToString().c_str());
      continue;
    }
    std::vector<std::string> why = scheduler::DecisionDifferences((*b)->decision, (*a)->decision);
    if ((*a)->key != (*b)->key) why.insert(why.begin(), "pod: " + (*b)->key + " -> " + (*a)->key);
    if (why.empty()) continue;
    if (++differences <= 3) {
      std::fprintf(stderr, "podflow-bench scheduler: %s: %s decided differently with the cache:\n",
                   name.c_str(), (*b)->key.c_str());
      for (const std::string& w : why) std::fprintf(stderr, "  %s\n", w.c_str());
    }
  }
  Emit(name + "_compared", static_cast<double>(compared));
  Emit(name + "_differences", static_cast<double>(differences));
  Emit(name + "_reference_pods_per_s",
       reference_us > 0 ? static_cast<double>(compared) / (reference_us / 1e6) : 0);
  return differences;
}

// How many equivalence classes `pods` fall in: the pods the equivalence
// cache could treat as one. A pod the scheduler could not read counts as
// a class of its own and is named on stderr.
size_t Signatures(const std::vector<scheduler::StoredObject>& pods) {
  std::unordered_set<std::string> out;
  size_t unreadable = 0;
  for (const scheduler::StoredObject& pod : pods) {
    Result<scheduler::PodInfo> info =
        model::VerifyObject(model::Kind("Pod"), pod.value).ok()
            ? scheduler::PodInfoFromPod(*flatbuffers::GetRoot<api::Pod>(pod.value.data()))
            : Status::Invalid("does not verify");
    if (!info.ok()) {
      ++unreadable;
      std::fprintf(stderr, "podflow-bench scheduler: %s: %s\n", pod.key.c_str(),
                   info.status().ToString().c_str());
      continue;
    }
    out.insert(scheduler::EquivalenceSignature(*info));
  }
  return out.size() + unreadable;
}

int RunVariant(const Variant& v, int num_nodes, int num_pods, double seconds, bool compare) {
  if (v.nodes > 0) num_nodes = v.nodes;
  // Manifests are decoded before the clock starts: the figure is the
  // scheduler's, not the YAML codec's.
  std::vector<scheduler::StoredObject> nodes, pods;
  nodes.reserve(num_nodes);
  pods.reserve(num_pods);
  int64_t revision = 1;
  for (int i = 0; i < num_nodes; ++i) nodes.push_back(Stored(NodeYaml(i, v), ++revision));
  for (int i = 0; i < num_pods; ++i) pods.push_back(Stored(PodYaml(i, v), ++revision));
  Emit(v.name + "_nodes", num_nodes);
  const size_t signatures = Signatures(pods);
  Emit(v.name + "_signatures", static_cast<double>(signatures));
  if (v.distinct_pods && signatures != pods.size()) {
    std::fprintf(stderr, "podflow-bench scheduler: %s: %zu pods share %zu signatures\n",
                 v.name.c_str(), pods.size(), signatures);
    return 1;
  }

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
      std::fprintf(stderr, "podflow-bench scheduler: %s stopped at the %.0f s bound\n",
                   v.name.c_str(), seconds);
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
  const size_t heap_after = HeapInUse();
  Emit(v.name + "_cache_mb",
       static_cast<double>(heap_after - std::min(heap_after, heap_before)) / (1 << 20));
  // Where a cycle's time went (every cycle per extension point; plugins on
  // the sampled cycles), per scheduled pod.
  const scheduler::SchedulerMetrics& m = core->metrics();
  for (size_t p = 0; p < scheduler::kNumExtensionPoints; ++p) {
    const auto point = static_cast<scheduler::ExtensionPoint>(p);
    std::string name(scheduler::ExtensionPointName(point));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    Emit(v.name + "_" + name + "_us_per_cycle",
         m.total_attempts() > 0 ? m.point(point).total_us / static_cast<double>(m.total_attempts())
                                : 0);
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
       lookups > 0
           ? 100.0 * static_cast<double>(core->equivalence_hits()) / static_cast<double>(lookups)
           : 0);
  core.reset();
  if (compare) errors += Compare(v.name, new_core(true), new_core(false), now, seconds);
  return errors > 0 ? 1 : 0;
}

std::vector<Variant> Variants() {
  std::vector<Variant> out;
  auto add = [&out](std::string name, std::function<std::string(int)> node_spec,
                    std::function<std::string(int)> pod_extra, int32_t percentage) {
    Variant v;
    v.name = std::move(name);
    v.node_spec = std::move(node_spec);
    v.pod_extra = std::move(pod_extra);
    v.percentage = percentage;
    out.push_back(std::move(v));
  };
  add("basic", nullptr, nullptr, 0);
  add("basic_all_nodes", nullptr, nullptr, 100);
  // Half the nodes carry the label the pods require.
  add(
      "node_affinity", [](int i) { return i % 2 == 0 ? "    tier: gold\n" : ""; },
      [](int) {
        return std::string(
            "S:affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
            "{nodeSelectorTerms: [{matchExpressions: [{key: tier, operator: In, values: "
            "[gold]}]}]}}}\n");
      },
      0);
  // A third of the nodes NoSchedule-tainted, a third PreferNoSchedule.
  add(
      "taints",
      [](int i) -> std::string {
        if (i % 3 == 0)
          return "spec:\n  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]\n";
        if (i % 3 == 1)
          return "spec:\n  taints: [{key: spot, value: \"true\", effect: PreferNoSchedule}]\n";
        return "";
      },
      nullptr, 0);
  // Four groups; a pod keeps off any node already running one of its group.
  add(
      "anti_affinity", nullptr,
      [](int i) {
        std::string g = "g" + std::to_string(i % 4);
        return "L:group: " + g +
               "\nS:affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
               "[{labelSelector: {matchLabels: {group: " +
               g + "}}, topologyKey: kubernetes.io/hostname}]}}\n";
      },
      0);
  // One app spread evenly over the zones.
  add(
      "topology_spread", nullptr,
      [](int) {
        return std::string(
            "L:app: web\nS:topologySpreadConstraints: [{maxSkew: 1, topologyKey: "
            "topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: "
            "{matchLabels: {app: web}}}]\n");
      },
      0);
  return out;
}

std::vector<Variant> AllVariants() {
  std::vector<Variant> out = Variants();
  for (Variant& v : DistinctVariants()) out.push_back(std::move(v));
  return out;
}

int Usage() {
  std::fprintf(stderr,
               "usage: podflow-bench scheduler [VARIANT...] [--nodes N] [--pods N] [--seconds S] "
               "[--only VARIANT] "
               "[--no-compare]\n  variants:");
  for (const Variant& v : AllVariants())
    std::fprintf(stderr, " %s%s", v.name.c_str(), v.on_request ? "*" : "");
  std::fprintf(stderr, "\n  (* only when named)\n");
  return 2;
}

// A positive number from a flag's value, or nullopt.
template <typename T>
std::optional<T> Positive(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || at != end || !(value > 0)) return std::nullopt;
  return value;
}

}  // namespace

int RunSchedulerBench(const std::vector<std::string>& args) {
  int nodes = 5000, pods = 10000;
  std::optional<double> seconds;  // default: 60 s, 600 s for variants run on request
  std::vector<std::string> named;
  bool compare = true;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == "--no-compare") {
      compare = false;
      continue;
    }
    if (flag.rfind("--", 0) != 0) {
      named.push_back(flag);
      continue;
    }
    if (flag != "--only" && flag != "--seconds" && flag != "--nodes" && flag != "--pods") {
      std::fprintf(stderr, "podflow-bench scheduler: unknown flag %s\n", flag.c_str());
      return Usage();
    }
    if (i + 1 == args.size()) {
      std::fprintf(stderr, "podflow-bench scheduler: %s needs a value\n", flag.c_str());
      return Usage();
    }
    const std::string& value = args[++i];
    std::optional<double> number = flag == "--seconds" ? Positive<double>(value) : std::nullopt;
    std::optional<int> count =
        flag == "--nodes" || flag == "--pods" ? Positive<int>(value) : std::nullopt;
    if (flag == "--only") {
      named.push_back(value);
    } else if (flag == "--seconds" && number) {
      seconds = *number;
    } else if (flag == "--nodes" && count) {
      nodes = *count;
    } else if (flag == "--pods" && count) {
      pods = *count;
    } else {
      std::fprintf(stderr, "podflow-bench scheduler: %s %s: not a positive number\n", flag.c_str(),
                   value.c_str());
      return Usage();
    }
  }
  const std::vector<Variant> variants = AllVariants();
  for (const std::string& name : named) {
    if (std::none_of(variants.begin(), variants.end(),
                     [&](const Variant& v) { return v.name == name; })) {
      std::fprintf(stderr, "podflow-bench scheduler: no variant named %s\n", name.c_str());
      return Usage();
    }
  }
  Emit("nodes", nodes);
  Emit("pods", pods);
  int code = 0;
  for (const Variant& v : variants) {
    const bool asked = std::find(named.begin(), named.end(), v.name) != named.end();
    if (named.empty() ? v.on_request : !asked) continue;
    code |= RunVariant(v, nodes, pods, seconds.value_or(v.on_request ? 600 : 60), compare);
  }
  return code;
}

}  // namespace podflow::bench
