// build/podflow-bench NAME: each NAME is one file defining one entry point.
// A benchmark prints `key=value` lines only on stdout (diagnostics go to
// stderr), bounds its phases by time so a run stays under about a minute,
// and returns a process exit code.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace podflow::bench {

// Entry points, one per file (log_bench.cc, ...).
int RunLogBench(const std::vector<std::string>& args);
int RunE2eBench(const std::vector<std::string>& args);
int RunSchedulerBench(const std::vector<std::string>& args);
int RunChaosBench(const std::vector<std::string>& args);
int RunAdmissionBench(const std::vector<std::string>& args);
int RunRuntimeBench(const std::vector<std::string>& args);
int RunProxyBench(const std::vector<std::string>& args);
int RunControllersBench(const std::vector<std::string>& args);

// The p-th percentile (0..100) of `v` (sorted in place); 0 when empty.
inline double Percentile(std::vector<double>* v, double p) {
  if (v->empty()) return 0;
  std::sort(v->begin(), v->end());
  size_t i = static_cast<size_t>(p / 100.0 * static_cast<double>(v->size() - 1) + 0.5);
  return (*v)[std::min(i, v->size() - 1)];
}

inline void Emit(const std::string& key, double value) {
  std::printf("%s=%.2f\n", key.c_str(), value);
  std::fflush(stdout);
}

inline double MicrosSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace podflow::bench
