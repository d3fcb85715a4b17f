// The names kube-proxy's iptables mode gives its per-service chains: the
// first 16 characters of the base32 (RFC 4648) SHA-256 of the service
// port's name and protocol (and, for an endpoint's chain, its "ip:port"),
// after KUBE-SVC-, KUBE-SVL-, KUBE-EXT-, KUBE-FW- or KUBE-SEP-.
#pragma once

#include <string>
#include <string_view>

namespace podflow::proxy::rules {

// "ns/name:port", or "ns/name" for an unnamed port: kube-proxy's
// ServicePortName, in chain hashes and rule comments.
std::string ServicePortName(std::string_view namespace_, std::string_view service, std::string_view port_name);

// The 16 characters shared by a service port's chains; `protocol` is
// lowercase ("tcp", "udp", "sctp").
std::string PortProtoHash(std::string_view service_port_name, std::string_view protocol);
// KUBE-SEP-... for the endpoint `ip_port` ("10.244.1.2:8080") of a service port.
std::string EndpointChain(std::string_view service_port_name, std::string_view protocol, std::string_view ip_port);

}  // namespace podflow::proxy::rules
