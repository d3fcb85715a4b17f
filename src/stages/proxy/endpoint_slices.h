// The EndpointSlices of a Service, as Kubernetes' EndpointSlice controller
// keeps them: the pods of its namespace its selector matches that have an
// IP and have not ended, one endpoint each with its conditions (serving:
// the pod is Ready; terminating: it is being deleted; ready: serving and
// not terminating, or publishNotReadyAddresses), its hostname (the pod's,
// when its subdomain is the service's name), node, zone and pod; grouped
// by their resolved port set, at most `max_per_slice` to a slice; one empty
// placeholder slice when no pod matches. Each slice is labelled
// kubernetes.io/service-name and managed-by the controller (with the
// Service's own labels but those reserved keys), owned by the Service, and
// named by generateName "<service>-".
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "api_generated.h"

namespace podflow::proxy {

inline constexpr char kServiceNameLabel[] = "kubernetes.io/service-name";
inline constexpr char kManagedByLabel[] = "endpointslice.kubernetes.io/managed-by";
inline constexpr char kManagedBy[] = "endpointslice-controller.k8s.io";
inline constexpr size_t kMaxEndpointsPerSlice = 100;

// The zone (topology.kubernetes.io/zone) of a node, "" when it has none;
// nullopt when there is no such node. A pod on a node that does not exist
// is left out unless the service publishes not-ready addresses (no
// function: every node exists, without a zone).
using ZoneOf = std::function<std::optional<std::string>(const std::string& node)>;

// The slices `service` should have, without names or server fields.
std::vector<api::EndpointSliceT> DesiredSlices(const api::Service& service, const std::vector<const api::Pod*>& pods,
                                               const ZoneOf& zone_of, size_t max_per_slice = kMaxEndpointsPerSlice);

// What to write to make the stored slices of a service (`existing`: name
// -> packed EndpointSlice, the ones labelled with its name and managed by
// the controller) the `desired` ones: a stored slice with the same ports
// is reused (name, uid and creation time kept; left alone when equal), a
// new one gets a generated name, a uid and `now`; the rest are deleted.
struct SliceChanges {
  std::vector<api::EndpointSliceT> put;
  std::vector<std::string> deleted;  // names
};
SliceChanges ReconcileSlices(std::vector<api::EndpointSliceT> desired,
                             const std::map<std::string, std::string>& existing, const std::string& now,
                             std::mt19937_64& rng);

}  // namespace podflow::proxy
