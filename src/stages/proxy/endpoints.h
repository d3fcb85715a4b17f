// The Endpoints of a Service, as Kubernetes' endpoints controller computes
// them: the pods of the service's namespace that match its selector and have
// an IP, ready ones under addresses and the others under notReadyAddresses,
// each port's targetPort resolved per pod (by number, or by the container
// port's name), pods grouped into subsets by their resolved port set.
#pragma once

#include <vector>

#include "api_generated.h"

namespace podflow::proxy {

// The label the controllers put on a headless service's Endpoints and
// EndpointSlices.
inline constexpr char kHeadlessLabel[] = "service.kubernetes.io/headless";

// Whether `labels` satisfy `selector` (every selector pair present and
// equal). An empty selector selects nothing, as for Services.
bool SelectorMatches(const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* selector,
                     const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* labels);

// The pod's port for a service port: its targetPort by number (the port
// itself when unset), or by the name of a container port of the same
// protocol; 0 when the pod has no such port.
int32_t ResolvePort(const api::ServicePort& port, const api::Pod& pod);

// The Endpoints object for `service` given candidate `pods` (any namespace;
// others are ignored). Deterministic: addresses sorted by IP.
api::EndpointsT ComputeEndpoints(const api::Service& service, const std::vector<const api::Pod*>& pods);

}  // namespace podflow::proxy
