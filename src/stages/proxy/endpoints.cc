#include "stages/proxy/endpoints.h"

#include <algorithm>
#include <map>
#include <string>

#include "model/conditions.h"

namespace podflow::proxy {
namespace {

std::string Str(const flatbuffers::String* s) { return s ? s->str() : ""; }

}  // namespace

int32_t ResolvePort(const api::ServicePort& port, const api::Pod& pod) {
  const api::IntOrString* target = port.target_port();
  if (target == nullptr) return port.port();
  if (target->type() == api::IntOrStringType::Int) return target->int_val() != 0 ? target->int_val() : port.port();
  std::string name = Str(target->str_val());
  if (!pod.spec() || !pod.spec()->containers()) return 0;
  for (const api::Container* c : *pod.spec()->containers()) {
    if (!c->ports()) continue;
    for (const api::ContainerPort* p : *c->ports()) {
      api::Protocol protocol = p->protocol() == api::Protocol::Unset ? api::Protocol::TCP : p->protocol();
      api::Protocol wanted = port.protocol() == api::Protocol::Unset ? api::Protocol::TCP : port.protocol();
      if (Str(p->name()) == name && protocol == wanted) return p->container_port();
    }
  }
  return 0;
}

bool SelectorMatches(const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* selector,
                     const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* labels) {
  if (selector == nullptr || selector->size() == 0) return false;
  for (const api::StringEntry* want : *selector) {
    const api::StringEntry* have = labels ? labels->LookupByKey(want->key()->c_str()) : nullptr;
    if (have == nullptr || Str(have->value()) != Str(want->value())) return false;
  }
  return true;
}

api::EndpointsT ComputeEndpoints(const api::Service& service, const std::vector<const api::Pod*>& pods) {
  api::EndpointsT out;
  out.api_version = "v1";
  out.kind = "Endpoints";
  out.metadata = std::make_unique<api::ObjectMetaT>();
  std::string ns = service.metadata() ? Str(service.metadata()->namespace_()) : "";
  if (ns.empty()) ns = "default";
  out.metadata->name = service.metadata() ? Str(service.metadata()->name()) : "";
  out.metadata->namespace_ = ns;
  // The service's labels; service.kubernetes.io/headless as the
  // endpoints controller sets it: "" on a headless service's, never on
  // another's.
  const api::ServiceSpec* spec = service.spec();
  std::map<std::string, std::string> labels;
  if (service.metadata() && service.metadata()->labels()) {
    for (const api::StringEntry* l : *service.metadata()->labels()) labels[Str(l->key())] = Str(l->value());
  }
  labels.erase(kHeadlessLabel);
  if (spec && Str(spec->cluster_ip()) == "None") labels[kHeadlessLabel] = "";
  for (auto& [key, value] : labels) {
    auto entry = std::make_unique<api::StringEntryT>();
    entry->key = key;
    entry->value = value;
    out.metadata->labels.push_back(std::move(entry));
  }
  if (spec == nullptr || !spec->ports()) return out;

  // Pods grouped by their resolved port list (name, port, protocol).
  using PortKey = std::vector<std::tuple<std::string, int32_t, api::Protocol>>;
  struct Group {
    std::vector<std::pair<std::string, const api::Pod*>> ready, not_ready;
  };
  std::map<PortKey, Group> groups;
  for (const api::Pod* pod : pods) {
    if (!pod->metadata() || !pod->status()) continue;
    std::string pod_ns = Str(pod->metadata()->namespace_());
    if ((pod_ns.empty() ? "default" : pod_ns) != ns) continue;
    if (!SelectorMatches(spec->selector(), pod->metadata()->labels())) continue;
    std::string ip = Str(pod->status()->pod_ip());
    // A terminating pod leaves the Endpoints unless not-ready addresses are published.
    if (ip.empty() || (pod->metadata()->deletion_timestamp() && !spec->publish_not_ready_addresses())) continue;
    api::PodPhase phase = pod->status()->phase();
    if (phase == api::PodPhase::Succeeded || phase == api::PodPhase::Failed) continue;
    PortKey key;
    for (const api::ServicePort* sp : *spec->ports()) {
      int32_t port = ResolvePort(*sp, *pod);
      if (port == 0) continue;
      api::Protocol protocol = sp->protocol() == api::Protocol::Unset ? api::Protocol::TCP : sp->protocol();
      key.emplace_back(Str(sp->name()), port, protocol);
    }
    if (key.empty()) continue;
    bool ready = model::ConditionIsTrue(*pod, "Ready") || spec->publish_not_ready_addresses();
    (ready ? groups[key].ready : groups[key].not_ready).emplace_back(ip, pod);
  }
  auto address = [&](const std::string& ip, const api::Pod* pod) {
    auto a = std::make_unique<api::EndpointAddressT>();
    a->ip = ip;
    if (pod->spec()) a->node_name = Str(pod->spec()->node_name());
    a->target_ref = std::make_unique<api::ObjectReferenceT>();
    a->target_ref->kind = "Pod";
    a->target_ref->namespace_ = ns;
    a->target_ref->name = Str(pod->metadata()->name());
    a->target_ref->uid = Str(pod->metadata()->uid());
    return a;
  };
  for (auto& [ports, group] : groups) {
    auto subset = std::make_unique<api::EndpointSubsetT>();
    std::sort(group.ready.begin(), group.ready.end());
    std::sort(group.not_ready.begin(), group.not_ready.end());
    for (auto& [ip, pod] : group.ready) subset->addresses.push_back(address(ip, pod));
    for (auto& [ip, pod] : group.not_ready) subset->not_ready_addresses.push_back(address(ip, pod));
    for (const auto& [name, port, protocol] : ports) {
      auto p = std::make_unique<api::EndpointPortT>();
      p->name = name;
      p->port = port;
      p->protocol = protocol;
      subset->ports.push_back(std::move(p));
    }
    out.subsets.push_back(std::move(subset));
  }
  return out;
}

}  // namespace podflow::proxy
