#include "stages/proxy/rules/from_objects.h"

#include <set>

namespace podflow::proxy::rules {
namespace {

std::string Str(const flatbuffers::String* s) { return s ? s->str() : ""; }

// kube-proxy's default ClientIP affinity timeout (3 hours).
constexpr int32_t kDefaultAffinitySeconds = 10800;

}  // namespace

std::string ProtocolName(api::Protocol p) {
  switch (p) {
    case api::Protocol::UDP:
      return "udp";
    case api::Protocol::SCTP:
      return "sctp";
    default:
      return "tcp";
  }
}

std::vector<ServicePort> ServicePortsOf(const api::Service& service,
                                        const std::vector<const api::EndpointSlice*>& slices) {
  std::vector<ServicePort> out;
  const api::ServiceSpec* spec = service.spec();
  if (spec == nullptr || spec->ports() == nullptr || service.metadata() == nullptr) return out;
  std::string ns = Str(service.metadata()->namespace_());
  if (ns.empty()) ns = "default";
  const bool external_name = spec->type() == api::ServiceType::ExternalName;
  const bool exposed = spec->type() == api::ServiceType::NodePort || spec->type() == api::ServiceType::LoadBalancer;
  for (const api::ServicePort* sp : *spec->ports()) {
    ServicePort port;
    port.namespace_ = ns;
    port.service = Str(service.metadata()->name());
    port.port_name = Str(sp->name());
    port.protocol = ProtocolName(sp->protocol());
    port.cluster_ip = external_name ? "" : Str(spec->cluster_ip());
    port.port = sp->port();
    port.node_port = sp->node_port();
    if (spec->external_ips()) {
      for (const auto* ip : *spec->external_ips()) port.external_ips.push_back(ip->str());
    }
    if (spec->session_affinity() == api::ServiceAffinity::ClientIP) {
      const api::SessionAffinityConfig* config = spec->session_affinity_config();
      port.affinity_seconds = config && config->client_ip() && config->client_ip()->timeout_seconds()
                                  ? *config->client_ip()->timeout_seconds()
                                  : kDefaultAffinitySeconds;
    }
    port.internal_local = spec->internal_traffic_policy() == api::ServiceInternalTrafficPolicy::Local;
    port.external_local = (exposed || !port.external_ips.empty()) &&
                          spec->external_traffic_policy() == api::ServiceExternalTrafficPolicy::Local;
    if (spec->type() == api::ServiceType::LoadBalancer &&
        spec->external_traffic_policy() == api::ServiceExternalTrafficPolicy::Local) {
      port.health_check_node_port = spec->health_check_node_port();
    }

    std::set<std::string> seen;  // "ip:port": one address in two slices counts once
    for (const api::EndpointSlice* slice : slices) {
      if (slice->ports() == nullptr || slice->endpoints() == nullptr) continue;
      if (slice->address_type() != api::AddressType::IPv4) continue;
      std::optional<int32_t> target;
      for (const api::EndpointSlicePort* p : *slice->ports()) {
        if (Str(p->name()) == port.port_name && ProtocolName(p->protocol()) == port.protocol && p->port()) {
          target = *p->port();
        }
      }
      if (!target) continue;
      for (const api::Endpoint* e : *slice->endpoints()) {
        if (e->addresses() == nullptr || e->addresses()->size() == 0) continue;
        Endpoint endpoint;
        endpoint.ip = e->addresses()->Get(0)->str();  // kube-proxy uses an endpoint's first address
        endpoint.port = *target;
        endpoint.node = Str(e->node_name());
        if (const api::EndpointConditions* c = e->conditions()) {
          endpoint.ready = c->ready().value_or(true);
          endpoint.serving = c->serving().value_or(true);
          endpoint.terminating = c->terminating().value_or(false);
        }
        if (!seen.insert(endpoint.ip + ":" + std::to_string(endpoint.port)).second) continue;
        port.endpoints.push_back(std::move(endpoint));
      }
    }
    out.push_back(std::move(port));
  }
  return out;
}

}  // namespace podflow::proxy::rules
