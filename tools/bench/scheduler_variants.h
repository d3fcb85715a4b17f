// The workloads of podflow-bench scheduler (scheduler_bench.cc runs them).
// A variant describes its nodes and pods as manifest text, node i and pod i
// at a time, in the order they are fed to the scheduler.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace podflow::bench {

struct SchedulerVariant {
  std::string name;
  // Node i's extra metadata.labels lines (four spaces in), optionally
  // followed by a top-level "spec:" block (taints).
  std::function<std::string(int)> node_spec;
  // Pod i's extras, one per line: "L:" a metadata.labels entry, "S:" a
  // spec entry, "R:" the container's resources.requests as a flow map
  // (default {cpu: 100m, memory: 500Mi}).
  std::function<std::string(int)> pod_extra;
  int32_t percentage = 0;  // percentageOfNodesToScore; 0: adaptive
  // Node i's allocatable and capacity as a flow map; empty: 4 cpu, 32Gi, 110 pods.
  std::function<std::string(int)> node_size;
  int nodes = 0;               // 0: --nodes (default 5,000)
  bool on_request = false;     // runs only when named: it takes minutes
  bool distinct_pods = false;  // no two pods may share a signature (checked)
};

// "distinct" (5,000 nodes) and "distinct_50k" (50,000 nodes): pods no two
// of which share an equivalence signature, on varied nodes, drawn from a
// seeded generator (scheduler_distinct.cc).
std::vector<SchedulerVariant> DistinctVariants();

}  // namespace podflow::bench
