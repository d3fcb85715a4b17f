// What kube-proxy reads from the API, turned into the renderer's input: a
// Service's ports, each with the endpoints its EndpointSlices give that
// port (matched by port name and protocol; one address once per port).
#pragma once

#include <vector>

#include "api_generated.h"
#include "stages/proxy/rules/iptables.h"

namespace podflow::proxy::rules {

// A port's protocol as the rules write it: "tcp" (also when unset), "udp", "sctp".
std::string ProtocolName(api::Protocol protocol);

// The ports of `service` with the endpoints of `slices` (the slices
// labelled kubernetes.io/service-name with its name, in its namespace).
// A headless or ExternalName service's ports come with no cluster IP, and
// render nothing.
std::vector<ServicePort> ServicePortsOf(const api::Service& service,
                                        const std::vector<const api::EndpointSlice*>& slices);

}  // namespace podflow::proxy::rules
