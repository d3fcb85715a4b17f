// build/podflow-bench NAME [ARGS...]: runs one benchmark (see bench.h).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench.h"

namespace {

struct Entry {
  const char* name;
  int (*run)(const std::vector<std::string>& args);
  const char* what;
};

// Add a benchmark: one file with its entry point, one line here.
constexpr Entry kBenchmarks[] = {
    {"log", podflow::bench::RunLogBench,
     "event log: durable writes/s and commit latency, watch latency, raw RocksDB baseline"},
    {"e2e", podflow::bench::RunE2eBench,
     "the pipeline on 1,000 simulated nodes: pods/s submit->Running and latency percentiles"},
    {"scheduler", podflow::bench::RunSchedulerBench,
     "the scheduler core: 10,000 pods onto 5,000 nodes, basic and per-plugin variants"},
    {"admission", podflow::bench::RunAdmissionBench,
     "admission on one core: pods decoded, defaulted, validated per second (nginx, 30 containers), patches"},
    {"runtime", podflow::bench::RunRuntimeBench,
     "the runtime stage in a process of its own at 5,000 nodes: its resident memory with nodes only and with 20,000 pods"},
    {"proxy", podflow::bench::RunProxyBench,
     "kube-proxy's iptables ruleset for 5,000 Services x 10 endpoints: render, and render again after one change"},
    {"controllers", podflow::bench::RunControllersBench,
     "a 1,000-replica Deployment on 1,000 nodes: to Available, then a rolling update, against as many bare pods"},
    {"chaos", podflow::bench::RunChaosBench,
     "kill -9 of the pipeline and of each stage under load: lost, stuck, bound twice, recovery"},
};

int Usage() {
  std::fprintf(stderr, "usage: podflow-bench NAME\n");
  for (const Entry& e : kBenchmarks) std::fprintf(stderr, "  %-12s %s\n", e.name, e.what);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  for (const Entry& e : kBenchmarks) {
    if (std::strcmp(argv[1], e.name) == 0) {
      return e.run(std::vector<std::string>(argv + 2, argv + argc));
    }
  }
  std::fprintf(stderr, "podflow-bench: unknown benchmark '%s'\n", argv[1]);
  return Usage();
}
