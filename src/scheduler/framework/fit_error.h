// The FailedScheduling message, worded as kube-scheduler words it
// (framework.FitError.Error and the DefaultPreemption PostFilter):
//
//   0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu.
//   preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling,
//   2 No preemption victims found for incoming pod..
//
// (one line). Each node contributes every reason of its verdict; reasons are
// counted across nodes, written "<count> <reason>" and sorted as strings
// (so "10 x" sorts before "2 y", as Go's sort.Strings does), joined with ", ".
// Every part ends with "."; the preemption part is itself such a message, so
// the event ends with "..", exactly as kube-scheduler's events do.
#pragma once

#include <span>
#include <string>

#include "scheduler/framework/decision.h"
#include "scheduler/framework/pod_info.h"

namespace podflow::scheduler {

// kube-scheduler's ErrNoNodesAvailable, the message when the cluster has no node.
inline constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

// "0/<num_all_nodes> nodes are available: <histogram>."
std::string FitErrorMessage(size_t num_all_nodes, std::span<const NodeVerdict> verdicts);

// What DefaultPreemption says when it cannot help, without "preemption: ".
// Preemption itself is not implemented yet, so this is its answer when no
// victim would help: "not eligible due to preemptionPolicy=Never." for pods
// that may not preempt; otherwise a FitError over the nodes where nodes
// rejected as UnschedulableAndUnresolvable count as "Preemption is not
// helpful for scheduling" and nodes rejected as Unschedulable count as
// "No preemption victims found for incoming pod".
std::string PreemptionMessage(const PodInfo& pod, size_t num_all_nodes,
                              std::span<const NodeVerdict> verdicts);

// The whole event message: FitErrorMessage + " preemption: " + PreemptionMessage + ".".
std::string FailedSchedulingMessage(const PodInfo& pod, size_t num_all_nodes,
                                    std::span<const NodeVerdict> verdicts);

}  // namespace podflow::scheduler
