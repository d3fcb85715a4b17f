#include "model/events.h"

#include <algorithm>
#include <cstdio>

#include "model/objects.h"

namespace podflow::model {
namespace {

std::unique_ptr<api::ObjectReferenceT> PodObjectReference(const PodRef& pod) {
  auto ref = std::make_unique<api::ObjectReferenceT>();
  ref->kind = "Pod";
  ref->namespace_ = pod.namespace_;
  ref->name = pod.name;
  ref->uid = pod.uid;
  ref->api_version = "v1";
  ref->resource_version = pod.resource_version;
  return ref;
}

api::EventT BaseEvent(const PodRef& pod, std::string name, std::string_view creation_time) {
  api::EventT e;
  e.api_version = "v1";
  e.kind = "Event";
  e.metadata = std::make_unique<api::ObjectMetaT>();
  e.metadata->name = std::move(name);
  e.metadata->namespace_ = pod.namespace_;
  e.metadata->creation_timestamp = std::string(creation_time);
  e.involved_object = PodObjectReference(pod);
  return e;
}

api::EventT SchedulerEvent(const api::PodT& pod, const char* type, const char* reason,
                           const char* action, std::string message, SimTime t, EventNamer& namer,
                           std::string_view scheduler) {
  const PodRef ref = RefOf(pod);
  api::EventT e = BaseEvent(ref, namer.Next(ref.name, t), FormatRfc3339(t));
  e.reason = reason;
  e.message = std::move(message);
  e.type = type;
  e.action = action;
  e.event_time = FormatRfc3339Micro(t);
  e.source = std::make_unique<api::EventSourceT>();
  e.reporting_component = std::string(scheduler);
  e.reporting_instance = std::string(scheduler) + "-podflow";
  return e;
}

}  // namespace

std::string EventNamer::Next(std::string_view object_name, SimTime t) {
  const uint64_t ms = static_cast<uint64_t>(std::max<int64_t>(0, ToUnixMillis(t)));
  const uint64_t ns = std::max(ms * 1'000'000 + uint64_t{instance_} * 1000, last_ns_ + 1);
  last_ns_ = ns;
  char hex[24];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(ns));
  return std::string(object_name) + "." + hex;
}

PodRef RefOf(const api::PodT& pod) {
  PodRef ref;
  if (pod.metadata) {
    ref.namespace_ = pod.metadata->namespace_.empty() ? "default" : pod.metadata->namespace_;
    ref.name = pod.metadata->name;
    ref.uid = pod.metadata->uid;
    ref.resource_version = pod.metadata->resource_version;
  }
  return ref;
}

api::EventT KubeletEvent(const PodRef& pod, std::string_view node,
                         const ReportEvent& event, std::string name) {
  api::EventT e = BaseEvent(pod, std::move(name), event.time);
  e.involved_object->field_path = event.field_path;
  e.reason = event.reason;
  e.message = event.message;
  e.type = event.type;
  e.source = std::make_unique<api::EventSourceT>();
  e.source->component = "kubelet";
  e.source->host = std::string(node);
  e.first_timestamp = event.time;
  e.last_timestamp = event.time;
  e.count = 1;
  e.reporting_component = "kubelet";
  e.reporting_instance = std::string(node);
  return e;
}

api::EventT ControllerEvent(const ObjectRef& about, std::string_view component, std::string_view type,
                            std::string_view reason, std::string message, SimTime t, EventNamer& namer) {
  const std::string time = FormatRfc3339(t);
  api::EventT e;
  e.api_version = "v1";
  e.kind = "Event";
  e.metadata = std::make_unique<api::ObjectMetaT>();
  e.metadata->name = namer.Next(about.name, t);
  e.metadata->namespace_ = about.namespace_.empty() ? "default" : about.namespace_;
  e.metadata->creation_timestamp = time;
  e.involved_object = std::make_unique<api::ObjectReferenceT>();
  e.involved_object->kind = about.kind;
  e.involved_object->api_version = about.api_version;
  e.involved_object->namespace_ = about.namespace_;
  e.involved_object->name = about.name;
  e.involved_object->uid = about.uid;
  e.reason = std::string(reason);
  e.message = std::move(message);
  e.type = std::string(type);
  e.source = std::make_unique<api::EventSourceT>();
  e.source->component = std::string(component);
  e.first_timestamp = time;
  e.last_timestamp = time;
  e.count = 1;
  e.reporting_component = std::string(component);
  return e;
}

std::string ScheduledMessage(std::string_view namespace_, std::string_view pod,
                             std::string_view node) {
  return "Successfully assigned " + std::string(namespace_) + "/" + std::string(pod) + " to " +
         std::string(node);
}

api::EventT ScheduledEvent(const api::PodT& pod, std::string_view node, SimTime t,
                           EventNamer& namer, std::string_view scheduler) {
  const PodRef ref = RefOf(pod);
  return SchedulerEvent(pod, "Normal", "Scheduled", "Binding",
                        ScheduledMessage(ref.namespace_, ref.name, node), t, namer, scheduler);
}

api::EventT FailedSchedulingEvent(const api::PodT& pod, std::string message, SimTime t,
                                  EventNamer& namer, std::string_view scheduler) {
  return SchedulerEvent(pod, "Warning", "FailedScheduling", "Scheduling", std::move(message), t,
                        namer, scheduler);
}

api::EventT PreemptedEvent(const api::PodT& victim, std::string_view preemptor_uid,
                           std::string_view node, SimTime t, EventNamer& namer,
                           std::string_view scheduler) {
  return SchedulerEvent(victim, "Normal", "Preempted", "Preempting",
                        "Preempted by pod " + std::string(preemptor_uid) + " on node " +
                            std::string(node),
                        t, namer, scheduler);
}

PackedEvent PackEvent(const api::EventT& event) {
  return PackedEvent{
      model::ObjectKey(model::Kind("Event"), event.metadata->namespace_, event.metadata->name),
      model::Pack(event)};
}

}  // namespace podflow::model
