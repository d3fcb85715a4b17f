#include "stages/proxy/dns/from_objects.h"

#include <set>

namespace podflow::proxy::dns {
namespace {

std::string Str(const flatbuffers::String* s) { return s ? s->str() : ""; }

}  // namespace

DnsService DnsServiceOf(const api::Service& service, const std::vector<const api::EndpointSlice*>& slices) {
  DnsService out;
  if (service.metadata()) {
    out.namespace_ = Str(service.metadata()->namespace_());
    if (out.namespace_.empty()) out.namespace_ = "default";
    out.name = Str(service.metadata()->name());
  }
  const api::ServiceSpec* spec = service.spec();
  if (spec == nullptr) return out;
  if (spec->type() == api::ServiceType::ExternalName) {
    out.external_name = Str(spec->external_name());
    return out;
  }
  out.cluster_ip = Str(spec->cluster_ip());
  if (spec->ports()) {
    for (const api::ServicePort* p : *spec->ports()) {
      const std::string protocol = p->protocol() == api::Protocol::UDP    ? "udp"
                                   : p->protocol() == api::Protocol::SCTP ? "sctp"
                                                                          : "tcp";
      out.ports.push_back({Str(p->name()), protocol, p->port()});
    }
  }
  std::set<std::string> seen;
  for (const api::EndpointSlice* slice : slices) {
    if (slice->address_type() != api::AddressType::IPv4 || slice->endpoints() == nullptr) continue;
    for (const api::Endpoint* e : *slice->endpoints()) {
      if (e->addresses() == nullptr) continue;
      const bool ready = e->conditions() == nullptr || e->conditions()->ready().value_or(true);
      for (const auto* address : *e->addresses()) {
        if (seen.insert(address->str()).second) out.endpoints.push_back({address->str(), Str(e->hostname()), ready});
      }
    }
  }
  return out;
}

}  // namespace podflow::proxy::dns
