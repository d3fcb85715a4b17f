// Chaos: the pipeline under publisher load, killed with SIGKILL at random
// points and restarted, then checked against what it acknowledged. Used by
// `podflow-bench chaos` (the long run) and by a test (a few cycles).
//
// Two shapes:
//  - "single": the whole pipeline in one process (`podflow run`), killed
//    whole every cycle;
//  - "stages": one process per stage (`podflow stage NAME`); each cycle
//    kills one stage at random, or (one cycle in eight) all of them, and
//    restarts only what it killed.
// After the cycles the load stops and every acknowledged pod gets `settle`
// to be Running. Then the pipeline is stopped and its event log is read
// back whole.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace podflow::bench {

struct ChaosOptions {
  std::string podflow;         // the podflow program
  std::string work_dir;        // where the scratch directory is made
  std::string mode = "single"; // "single" or "stages"
  int cycles = 50;
  double rate = 50;            // pods submitted per second
  uint64_t seed = 1;           // where the kills fall, and what they hit
  std::chrono::seconds settle{30};
};

struct ChaosResult {
  std::string error;  // non-empty: the run could not be carried out
  int64_t acknowledged = 0;   // pods admission answered Success for
  int64_t lost = 0;           // acknowledged, and not in the log
  int64_t stuck = 0;          // acknowledged, and not Running `settle` after the load
  int64_t bound_twice = 0;    // pods whose spec.nodeName changed once set
  int64_t revisions = 0;      // revisions in the log at the end
  int64_t revision_gaps = 0;  // revisions missing between the first kept and the head
  int64_t kills = 0;          // processes killed with SIGKILL
  int64_t recovery_timeouts = 0;  // cycles after which no new pod ran within `settle`
  // Per cycle: from the restart until a pod submitted after it is Running.
  std::vector<double> recovery_ms;
  std::vector<std::string> examples;  // a few lost or stuck pods, for the reader
};

ChaosResult RunChaos(const ChaosOptions& options);

}  // namespace podflow::bench
