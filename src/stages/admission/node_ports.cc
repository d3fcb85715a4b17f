// Service node ports, as kube-apiserver hands them out: a port asked for
// must be in the range and free; one left to the allocator comes from the
// range's upper band (a random start, scanning up and wrapping), the lower
// band kept for ports users choose until the upper one is full.
#include <algorithm>
#include <charconv>
#include <map>

#include "model/field_error.h"
#include "stages/admission/kind_rules.h"

namespace podflow::admission {
namespace {

std::optional<int32_t> ParsePort(std::string_view s) {
  int32_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value < 1 || value > 65535) return std::nullopt;
  return value;
}

}  // namespace

NodePortAllocator::NodePortAllocator() : NodePortAllocator(std::string(kDefaultRange), 30000, 2768) {}

NodePortAllocator::NodePortAllocator(std::string text, int32_t base, int32_t size)
    : text_(std::move(text)), base_(base), size_(size) {
  // kube-apiserver's reserved band: size/32, at least 16 and at most 128
  // ports (never more than the range).
  static_band_ = std::min(size_, std::clamp(size_ / 32, 16, 128));
}

Result<NodePortAllocator> NodePortAllocator::Create(std::string_view range) {
  auto bad = [&](std::string_view why) {
    return Status::Invalid("service node port range \"" + std::string(range) + "\": " + std::string(why));
  };
  // "30000-32767", or a single port.
  const size_t dash = range.find('-');
  std::optional<int32_t> low = ParsePort(range.substr(0, dash));
  std::optional<int32_t> high = dash == std::string_view::npos ? low : ParsePort(range.substr(dash + 1));
  if (!low || !high) return bad("not a port range of 1..65535 (e.g. 30000-32767)");
  if (*high < *low) return bad("the range's end is below its start");
  return NodePortAllocator(std::string(range), *low, *high - *low + 1);
}

Result<int32_t> NodePortAllocator::Allocate(const std::set<int32_t>& taken, std::mt19937_64& rng) const {
  const auto port = [&](uint64_t offset) { return base_ + static_cast<int32_t>(offset); };
  std::optional<uint64_t> offset = PickInBands(static_cast<uint64_t>(size_), static_cast<uint64_t>(static_band_), rng,
                                               [&](uint64_t o) { return taken.contains(port(o)); });
  if (!offset) return Status::Unavailable("range is full");
  return port(*offset);
}

Status NodePortAllocator::Check(int32_t port, const std::set<int32_t>& taken) const {
  if (port < base_ || port >= base_ + size_) {
    return Status::Invalid("provided port is not in the valid range. The range of valid ports is " + text_);
  }
  if (taken.contains(port)) return Status::Invalid("provided port is already allocated");
  return Status::Ok();
}

bool HasNodePorts(const api::ServiceSpecT& spec) {
  return spec.type == api::ServiceType::NodePort ||
         (spec.type == api::ServiceType::LoadBalancer && spec.allocate_load_balancer_node_ports.value_or(true));
}

bool NeedsHealthCheck(const api::ServiceSpecT& spec) {
  return spec.type == api::ServiceType::LoadBalancer &&
         spec.external_traffic_policy == api::ServiceExternalTrafficPolicy::Local;
}

std::optional<model::ApiStatusInfo> AssignNodePorts(const model::KindInfo& kind, api::ServiceT& service,
                                                    const NodePortAllocator& allocator, std::set<int32_t>& taken,
                                                    std::mt19937_64& rng, const api::ServiceSpecT* old) {
  api::ServiceSpecT& spec = *service.spec;
  // Only NodePort and LoadBalancer services take node ports; on any other
  // type a nodePort is left for validation to refuse. The first refusal
  // ends the request, as the server's allocation does.
  const bool typed = spec.type == api::ServiceType::NodePort || spec.type == api::ServiceType::LoadBalancer;
  std::set<int32_t> held;  // the stored service's: not checked again
  if (old != nullptr) {
    for (const auto& p : old->ports) {
      if (p->node_port != 0) held.insert(p->node_port);
    }
  }
  // On a create, ports of one service with the same number share a node
  // port (TCP and UDP 53 on one node port).
  std::map<int32_t, int32_t> by_port;
  std::set<int32_t> asked;  // allocated by this request already
  for (size_t i = 0; typed && i < spec.ports.size(); ++i) {
    api::ServicePortT& p = *spec.ports[i];
    if (p.node_port == 0) continue;
    auto shared = by_port.find(p.port);
    if (old == nullptr && shared != by_port.end() && shared->second == p.node_port) continue;
    if (old != nullptr && (held.contains(p.node_port) || asked.contains(p.node_port))) continue;
    if (Status s = allocator.Check(p.node_port, taken); !s.ok()) {
      return InvalidStatus(kind, service.metadata->name,
                           {FieldError::InvalidInt("spec.ports[" + std::to_string(i) + "].nodePort", p.node_port,
                                                   s.message())});
    }
    taken.insert(p.node_port);
    asked.insert(p.node_port);
    if (old == nullptr) by_port.emplace(p.port, p.node_port);
  }
  // The health check port: the server's own failure when it cannot have
  // it (an internal error, not a field's).
  const bool health_check = NeedsHealthCheck(spec) && (old == nullptr || !NeedsHealthCheck(*old));
  if (health_check && spec.health_check_node_port != 0) {
    if (Status s = allocator.Check(spec.health_check_node_port, taken); !s.ok()) {
      return InternalErrorStatus("failed to allocate requested HealthCheck NodePort " +
                                 std::to_string(spec.health_check_node_port) + ": " + s.message());
    }
    taken.insert(spec.health_check_node_port);
  }
  if (!HasNodePorts(spec) && !health_check) return std::nullopt;
  auto allocate = [&](int32_t& into) -> bool {
    Result<int32_t> port = allocator.Allocate(taken, rng);
    if (!port.ok()) return false;
    into = *port;
    taken.insert(*port);
    return true;
  };
  if (HasNodePorts(spec)) {
    for (auto& p : spec.ports) {
      if (p->node_port != 0) continue;
      if (auto shared = by_port.find(p->port); shared != by_port.end()) {
        p->node_port = shared->second;
      } else if (allocate(p->node_port)) {
        if (old == nullptr) by_port.emplace(p->port, p->node_port);
      } else {
        return InternalErrorStatus("failed to allocate a nodePort: range is full");
      }
    }
  }
  if (health_check && spec.health_check_node_port == 0 && !allocate(spec.health_check_node_port)) {
    return InternalErrorStatus("failed to allocate a HealthCheck NodePort 0: range is full");
  }
  return std::nullopt;
}

}  // namespace podflow::admission
