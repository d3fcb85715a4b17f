// The stored explanation of a scheduling decision (schemas/scheduling.fbs):
// encoding a Decision with the context it was made in, reading it back, and
// the keys it is stored under. How it is shown belongs to who shows it:
// podflow-replay --why (text and JSON) in src/replay, describe pod's
// Scheduling section in src/cli.
//
// Size: a record keeps every score plugin's raw, normalized and weighted
// score for kMaxRecordedScoredNodes feasible nodes (the selected one, then
// the best) and the verdicts of the first kMaxRecordedRejectedNodes rejected
// nodes (visit order); every rejected node is still counted per verdict in
// rejection_counts. A record is written with every binding, so it stays
// about 2-4 kB however large the cluster (a 5,000-node cycle scores up to
// 500 nodes; 50 of them with 7 score plugins would be 11 kB).
//
// Thread safety: all functions are safe to call concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "scheduler/framework/decision.h"
#include "scheduling_generated.h"

namespace podflow::scheduler {

inline constexpr std::string_view kDecisionPrefix = "/registry/scheduling.podflow.io/decisions/";
inline constexpr std::string_view kSchedulerRunPrefix = "/registry/scheduling.podflow.io/runs/";
inline constexpr size_t kMaxRecordedScoredNodes = 10;
inline constexpr size_t kMaxRecordedRejectedNodes = 20;

// /registry/scheduling.podflow.io/decisions/<ns>/<name>
std::string DecisionKey(std::string_view namespace_, std::string_view name);
// The decision key of the pod stored at `pod_key` (/registry/pods/<ns>/<name>).
std::string DecisionKeyOfPod(std::string_view pod_key);
// "<ns>/<name>" of a pod key ("default/nginx" from /registry/pods/default/nginx):
// the part of it a decision key repeats.
std::string PodNameOfKey(std::string_view pod_key);
// /registry/scheduling.podflow.io/runs/<run, 16 hex digits>
std::string SchedulerRunKey(uint64_t run);

// What the cache held of one followed prefix (explain::CacheSource).
struct CacheSourceState {
  std::string prefix;
  int64_t list_revision = 0;
  int64_t revision = 0;
};

// What a Decision alone does not say: which pod, on what state, when.
struct DecisionContext {
  std::string pod_key;
  std::string pod_uid;
  int64_t pod_mod_revision = 0;
  std::string profile;  // schedulerName
  size_t start_node_index = 0;
  std::vector<CacheSourceState> sources;
  uint64_t run = 0;
  uint64_t seq = 0;
  int64_t assumed_pods = 0;
  int64_t decided_at_ms = 0;
};

// The record's bytes (a finished explain::SchedulingDecision).
std::string EncodeDecisionRecord(const Decision& decision, const DecisionContext& context);
// The verified record in `bytes` (which must outlive it); Invalid when the
// bytes are not one.
Result<const explain::SchedulingDecision*> ReadDecisionRecord(std::string_view bytes);

std::string EncodeSchedulerRun(uint64_t run, int64_t started_at_ms, std::string_view config_yaml);
Result<const explain::SchedulerRun*> ReadSchedulerRun(std::string_view bytes);

}  // namespace podflow::scheduler
