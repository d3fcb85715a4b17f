// ServiceInfo: what the scheduler needs of a Service — which pods it
// selects — so that PodTopologySpread's default spreading can group a pod
// with the other pods of its Services (kube-scheduler's DefaultSelector).
#pragma once

#include <string>

#include "scheduler/framework/labels.h"
#include "service_generated.h"

namespace podflow::scheduler {

struct ServiceInfo {
  std::string namespace_;
  std::string name;
  // spec.selector; empty (null or {}) adds nothing to a pod's group.
  Labels selector;
};

// Copies a verified stored Service.
ServiceInfo ServiceInfoFromService(const api::Service& service);

// Whether the service selects a pod with `pod_labels`: a non-empty selector
// whose every key the pod has with the same value. An empty selector
// selects nothing here (kube-scheduler: a nil selector matches nothing,
// and an empty one contributes no label).
bool SelectsPod(const ServiceInfo& service, const Labels& pod_labels);

}  // namespace podflow::scheduler
