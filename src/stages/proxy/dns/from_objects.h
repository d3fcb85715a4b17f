// A Service and its EndpointSlices as cluster DNS sees them.
#pragma once

#include <vector>

#include "api_generated.h"
#include "stages/proxy/dns/cluster_records.h"

namespace podflow::proxy::dns {

// `service` with the endpoints of `slices` (its managed slices): each
// address once, with the slice's hostname and ready condition (unset:
// ready), IPv4 slices only.
DnsService DnsServiceOf(const api::Service& service, const std::vector<const api::EndpointSlice*>& slices);

}  // namespace podflow::proxy::dns
