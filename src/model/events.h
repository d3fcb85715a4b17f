// Every Event podflow creates is built here, whichever stage records it:
// kubelet events from runtime reports (status stage), Scheduled and
// FailedScheduling (scheduling / binding stages). Shapes follow what
// Kubernetes 1.32 stores:
//  - kubelet events use the core/v1 recorder: source {kubelet, node},
//    firstTimestamp = lastTimestamp, count 1, reportingComponent kubelet,
//    reportingInstance node, involvedObject.fieldPath spec.containers{c};
//  - scheduler events use the events/v1 recorder: eventTime (micro), action
//    Binding / Scheduling, reportingComponent = scheduler name, empty source,
//    no first/lastTimestamp, count 0.
// Names are "<object>.<16 hex>" as client-go makes them (hex of UnixNano).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "event_generated.h"
#include "model/report.h"
#include "pod_generated.h"

namespace podflow::model {

// Makes event names unique within a process: the name is the time in Unix
// nanoseconds, in hex, bumped past the last one this namer gave. `instance`
// (0..999) fills the sub-millisecond microseconds so that namers of distinct
// stages do not collide with each other either (times are whole ms).
// Thread safety: none.
class EventNamer {
 public:
  explicit EventNamer(uint32_t instance = 0) : instance_(instance % 1000) {}
  // "nginx-pod.17f0c3a2b4d5e600"
  std::string Next(std::string_view object_name, SimTime t);

 private:
  uint32_t instance_;
  uint64_t last_ns_ = 0;
};

// What identifies the pod an event is about.
struct PodRef {
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
};
PodRef RefOf(const api::PodT& pod);

// A kubelet event, from one ReportEvent of `node`.
api::EventT KubeletEvent(const PodRef& pod, std::string_view node,
                         const ReportEvent& event, std::string name);

inline constexpr char kDefaultScheduler[] = "default-scheduler";

// The scheduler that reports about `pod`: its spec.schedulerName, or the
// default one when unset.
inline std::string_view SchedulerOf(const api::PodT& pod) {
  return pod.spec && !pod.spec->scheduler_name.empty() ? std::string_view(pod.spec->scheduler_name)
                                                       : std::string_view(kDefaultScheduler);
}

// "Successfully assigned default/nginx-pod to node-2"
std::string ScheduledMessage(std::string_view namespace_, std::string_view pod,
                             std::string_view node);

// Normal Scheduled, action Binding.
api::EventT ScheduledEvent(const api::PodT& pod, std::string_view node, SimTime t,
                           EventNamer& namer, std::string_view scheduler = kDefaultScheduler);

// Warning FailedScheduling, action Scheduling; `message` is the scheduler's
// "0/5 nodes are available: ..." text.
api::EventT FailedSchedulingEvent(const api::PodT& pod, std::string message, SimTime t,
                                  EventNamer& namer,
                                  std::string_view scheduler = kDefaultScheduler);

// Normal Preempted, action Preempting, about the victim: "Preempted by pod
// <preemptor uid> on node <node>", as kube-scheduler's preemption records it.
api::EventT PreemptedEvent(const api::PodT& victim, std::string_view preemptor_uid,
                           std::string_view node, SimTime t, EventNamer& namer,
                           std::string_view scheduler = kDefaultScheduler);

// What a controller's event is about (its involvedObject).
struct ObjectRef {
  std::string kind;  // "Node", "Pod"
  std::string api_version = "v1";
  std::string namespace_;  // "" for a cluster-scoped object
  std::string name;
  std::string uid;
};

// An event of a kube-controller-manager controller, as its core/v1
// recorder makes one: source {component}, reportingComponent the same,
// first = last timestamp, count 1. An event about a cluster-scoped object
// (a Node) lives in the default namespace.
api::EventT ControllerEvent(const ObjectRef& about, std::string_view component, std::string_view type,
                            std::string_view reason, std::string message, SimTime t, EventNamer& namer);

// How long Events live in the log: kube-apiserver's default --event-ttl.
inline constexpr int64_t kEventTtlSeconds = 3600;

// An event ready to write (with TTL kEventTtlSeconds): its log key
// (/registry/events/<ns>/<name>) and its packed bytes.
struct PackedEvent {
  std::string key;
  std::string bytes;
};
PackedEvent PackEvent(const api::EventT& event);

}  // namespace podflow::model
