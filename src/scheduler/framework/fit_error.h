// The FailedScheduling message, worded as kube-scheduler words it
// (framework.FitError.Error):
//
//   0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu.
//   preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling,
//   2 No preemption victims found for incoming pod..
//
// (one line). Each node contributes every reason of its verdict; reasons are
// counted across nodes, written "<count> <reason>" and sorted as strings
// (so "10 x" sorts before "2 y", as Go's sort.Strings does), joined with ", ".
// Every part ends with ".": the runner appends the PostFilter plugins'
// reasons (DefaultPreemption's is itself such a message after "preemption: ")
// and a "." when no node was nominated, so the event ends with "..", exactly
// as kube-scheduler's events do. A profile without PostFilter plugins says
// nothing about preemption.
#pragma once

#include <span>
#include <string>

#include "scheduler/framework/decision.h"

namespace podflow::scheduler {

// kube-scheduler's ErrNoNodesAvailable, the message when the cluster has no node.
inline constexpr std::string_view kNoNodesAvailable = "no nodes available to schedule pods";

// "0/<num_all_nodes> nodes are available: <histogram>."
std::string FitErrorMessage(size_t num_all_nodes, std::span<const NodeVerdict> verdicts);

}  // namespace podflow::scheduler
