// kubectl describe's layouts (k8s.io/kubectl/pkg/describe, kubectl 1.32) for
// pods, nodes, services, deployments, replica sets, daemon sets and jobs, as pure functions over stored objects and a
// "now". get.cc fetches the objects; tests build them from YAML.
//
// Thread safety: all functions are safe to call concurrently.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/human_time.h"
#include "scheduling_generated.h"

namespace podflow::cli {

// Sections a later stage can add to `describe pod`, each printed only when
// present. Issue 4 fills `scheduling` with why the scheduler placed (or could
// not place) the pod; it is printed just before Events.
struct PodDescribeExtras {
  std::string scheduling;  // complete lines, e.g. "Scheduling:\n  Filter ...\n"
};

// `events` holds Event FlatBuffers; only those whose involvedObject is the
// described object are shown (EventsFor), oldest first.
std::string DescribePod(std::string_view pod_bytes, std::span<const std::string> events,
                        TimePoint now, const PodDescribeExtras& extras = {});
// describe pod's Scheduling section (PodDescribeExtras::scheduling) from the
// scheduler's stored decision record: "Scheduling:", then the profile, the
// selected node, a table of the best `top` nodes with their total and
// weighted score per plugin, and the nodes filtered out counted per reason.
std::string DescribeSchedulingSection(const explain::SchedulingDecision& record, size_t top = 5);
// `pods`: every pod; those bound to the node and not terminated are listed.
// `lease_bytes`: the node's Lease in kube-node-lease (its agent's
// heartbeat), or empty when it has none: then no Lease section.
std::string DescribeNode(std::string_view node_bytes, std::span<const std::string> pods,
                         std::span<const std::string> events, TimePoint now, std::string_view lease_bytes = {});
// `endpoints_bytes`: the service's Endpoints, or empty when there are none.
std::string DescribeService(std::string_view service_bytes, std::string_view endpoints_bytes,
                            std::span<const std::string> events, TimePoint now);

// `replica_sets`: the namespace's; those the Deployment controls are its
// old and new ReplicaSets.
std::string DescribeDeployment(std::string_view bytes, std::span<const std::string> replica_sets,
                               std::span<const std::string> events, TimePoint now);
// `pods`: the namespace's; those it controls are counted by phase.
std::string DescribeReplicaSet(std::string_view bytes, std::span<const std::string> pods,
                               std::span<const std::string> events, TimePoint now);
std::string DescribeDaemonSet(std::string_view bytes, std::span<const std::string> pods,
                              std::span<const std::string> events, TimePoint now);
std::string DescribeJob(std::string_view bytes, std::span<const std::string> events, TimePoint now);

// The events about one object: involvedObject kind (when set), namespace
// (empty = any), name, and uid when both sides have one.
std::vector<std::string> EventsFor(std::span<const std::string> events, std::string_view kind,
                                   std::string_view namespace_, std::string_view name,
                                   std::string_view uid);

}  // namespace podflow::cli
