#include "stages/proxy/endpoint_slices.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "base/hex_id.h"
#include "model/conditions.h"
#include "model/objects.h"
#include "stages/proxy/endpoints.h"

namespace podflow::proxy {
namespace {

std::string Str(const flatbuffers::String* s) { return s ? s->str() : ""; }

std::unique_ptr<api::StringEntryT> Entry(std::string key, std::string value) {
  auto e = std::make_unique<api::StringEntryT>();
  e->key = std::move(key);
  e->value = std::move(value);
  return e;
}

using PortKey = std::vector<std::tuple<std::string, api::Protocol, int32_t, std::string>>;  // name, protocol, port, appProtocol

// Metadata every slice of `service` carries.
std::unique_ptr<api::ObjectMetaT> SliceMeta(const api::Service& service, const std::string& ns) {
  auto meta = std::make_unique<api::ObjectMetaT>();
  const std::string name = Str(service.metadata()->name());
  meta->namespace_ = ns;
  meta->generate_name = name + "-";
  std::map<std::string, std::string> labels;
  // The service's labels, but for the keys the controller sets itself.
  static const std::set<std::string> kReserved = {kServiceNameLabel, kManagedByLabel, kHeadlessLabel};
  if (service.metadata()->labels()) {
    for (const api::StringEntry* l : *service.metadata()->labels()) {
      if (!kReserved.contains(Str(l->key()))) labels[Str(l->key())] = Str(l->value());
    }
  }
  labels[kServiceNameLabel] = name;
  labels[kManagedByLabel] = kManagedBy;
  if (service.spec() && Str(service.spec()->cluster_ip()) == "None") labels[kHeadlessLabel] = "";
  for (auto& [k, v] : labels) meta->labels.push_back(Entry(k, v));
  auto owner = std::make_unique<api::OwnerReferenceT>();
  owner->api_version = "v1";
  owner->kind = "Service";
  owner->name = name;
  owner->uid = Str(service.metadata()->uid());
  owner->controller = true;
  owner->block_owner_deletion = true;
  meta->owner_references.push_back(std::move(owner));
  return meta;
}

std::unique_ptr<api::EndpointT> EndpointOf(const api::Pod& pod, const api::Service& service, const std::string& ip,
                                           const std::string& zone) {
  auto e = std::make_unique<api::EndpointT>();
  e->addresses.push_back(ip);
  const bool serving = model::ConditionIsTrue(pod, "Ready");
  const bool terminating = pod.metadata()->deletion_timestamp() != nullptr &&
                           pod.metadata()->deletion_timestamp()->size() > 0;
  e->conditions = std::make_unique<api::EndpointConditionsT>();
  e->conditions->ready = service.spec()->publish_not_ready_addresses() || (serving && !terminating);
  e->conditions->serving = serving;
  e->conditions->terminating = terminating;
  const api::PodSpec* spec = pod.spec();
  if (spec && spec->hostname() && spec->hostname()->size() > 0 &&
      Str(spec->subdomain()) == Str(service.metadata()->name())) {
    e->hostname = spec->hostname()->str();
  }
  if (spec && spec->node_name()) {
    e->node_name = spec->node_name()->str();
    e->zone = zone;
  }
  e->target_ref = std::make_unique<api::ObjectReferenceT>();
  e->target_ref->kind = "Pod";
  e->target_ref->namespace_ = Str(pod.metadata()->namespace_());
  if (e->target_ref->namespace_.empty()) e->target_ref->namespace_ = "default";
  e->target_ref->name = Str(pod.metadata()->name());
  e->target_ref->uid = Str(pod.metadata()->uid());
  return e;
}

// The slice without the server's fields (name, uid, times, revision):
// what decides whether a stored slice must be written again.
std::string Content(const api::EndpointSliceT& slice) {
  api::EndpointSliceT copy = slice;
  if (copy.metadata) {
    auto meta = std::make_unique<api::ObjectMetaT>();
    meta->namespace_ = copy.metadata->namespace_;
    for (const auto& l : copy.metadata->labels) meta->labels.push_back(std::make_unique<api::StringEntryT>(*l));
    for (const auto& o : copy.metadata->owner_references) {
      meta->owner_references.push_back(std::make_unique<api::OwnerReferenceT>(*o));
    }
    copy.metadata = std::move(meta);
  }
  return model::Pack(copy);
}

PortKey KeyOf(const api::EndpointSliceT& slice) {
  PortKey key;
  for (const auto& p : slice.ports) key.emplace_back(p->name, p->protocol, p->port.value_or(0), p->app_protocol);
  return key;
}

}  // namespace

std::vector<api::EndpointSliceT> DesiredSlices(const api::Service& service, const std::vector<const api::Pod*>& pods,
                                               const ZoneOf& zone_of, size_t max_per_slice) {
  std::vector<api::EndpointSliceT> out;
  const api::ServiceSpec* spec = service.spec();
  if (spec == nullptr || service.metadata() == nullptr || spec->type() == api::ServiceType::ExternalName ||
      spec->selector() == nullptr || spec->selector()->size() == 0) {
    return out;
  }
  std::string ns = Str(service.metadata()->namespace_());
  if (ns.empty()) ns = "default";
  struct Member {
    std::string ip;
    const api::Pod* pod;
    std::string zone;
  };
  std::map<PortKey, std::vector<Member>> groups;  // by resolved ports
  for (const api::Pod* pod : pods) {
    if (!pod->metadata() || !pod->status()) continue;
    const std::string pod_ns = Str(pod->metadata()->namespace_());
    if ((pod_ns.empty() ? "default" : pod_ns) != ns) continue;
    if (!SelectorMatches(spec->selector(), pod->metadata()->labels())) continue;
    const std::string ip = Str(pod->status()->pod_ip());
    const api::PodPhase phase = pod->status()->phase();
    if (ip.empty() || phase == api::PodPhase::Succeeded || phase == api::PodPhase::Failed) continue;
    std::string zone;
    if (const std::string node = Str(pod->spec() ? pod->spec()->node_name() : nullptr); zone_of && !node.empty()) {
      std::optional<std::string> known = zone_of(node);
      if (!known && !spec->publish_not_ready_addresses()) continue;
      zone = known.value_or("");
    }
    PortKey key;
    if (spec->ports()) {
      for (const api::ServicePort* sp : *spec->ports()) {
        const int32_t port = ResolvePort(*sp, *pod);
        if (port == 0) continue;
        const api::Protocol protocol = sp->protocol() == api::Protocol::Unset ? api::Protocol::TCP : sp->protocol();
        key.emplace_back(Str(sp->name()), protocol, port, Str(sp->app_protocol()));
      }
    }
    groups[key].push_back(Member{ip, pod, std::move(zone)});
  }
  auto slice_for = [&](const PortKey& key) {
    api::EndpointSliceT slice;
    slice.api_version = "discovery.k8s.io/v1";
    slice.kind = "EndpointSlice";
    slice.metadata = SliceMeta(service, ns);
    slice.address_type = api::AddressType::IPv4;
    for (const auto& [name, protocol, port, app_protocol] : key) {
      auto p = std::make_unique<api::EndpointSlicePortT>();
      p->name = name;
      p->protocol = protocol;
      p->port = port;
      p->app_protocol = app_protocol;
      slice.ports.push_back(std::move(p));
    }
    return slice;
  };
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end(), [](const Member& a, const Member& b) { return a.ip < b.ip; });
    for (size_t i = 0; i < members.size(); i += max_per_slice) {
      api::EndpointSliceT slice = slice_for(key);
      for (size_t j = i; j < std::min(members.size(), i + max_per_slice); ++j) {
        slice.endpoints.push_back(EndpointOf(*members[j].pod, service, members[j].ip, members[j].zone));
      }
      out.push_back(std::move(slice));
    }
  }
  if (out.empty()) out.push_back(slice_for({}));  // the placeholder: no ports, no endpoints
  return out;
}

SliceChanges ReconcileSlices(std::vector<api::EndpointSliceT> desired,
                             const std::map<std::string, std::string>& existing, const std::string& now,
                             std::mt19937_64& rng) {
  SliceChanges out;
  struct Stored {
    std::unique_ptr<api::EndpointSliceT> slice;
    std::string content;
    bool taken = false;
  };
  std::map<std::string, Stored> stored;
  for (const auto& [name, bytes] : existing) {
    auto slice = model::Unpack<api::EndpointSlice>(bytes);
    if (slice == nullptr || slice->metadata == nullptr) continue;
    std::string content = Content(*slice);
    stored.emplace(name, Stored{std::move(slice), std::move(content)});
  }
  // First the desired slices an unchanged stored one already is, then the
  // others take a stored slice with the same ports, then new names.
  std::vector<bool> placed(desired.size(), false);
  for (size_t i = 0; i < desired.size(); ++i) {
    const std::string content = Content(desired[i]);
    for (auto& [name, s] : stored) {
      if (!s.taken && s.content == content) {
        s.taken = placed[i] = true;
        break;
      }
    }
  }
  for (size_t i = 0; i < desired.size(); ++i) {
    if (placed[i]) continue;
    api::EndpointSliceT& slice = desired[i];
    Stored* reuse = nullptr;
    for (auto& [name, s] : stored) {
      if (!s.taken && KeyOf(*s.slice) == KeyOf(slice)) {
        reuse = &s;
        break;
      }
    }
    if (reuse == nullptr) {
      for (auto& [name, s] : stored) {
        if (!s.taken) {
          reuse = &s;
          break;
        }
      }
    }
    if (reuse != nullptr) {
      reuse->taken = true;
      slice.metadata->name = reuse->slice->metadata->name;
      slice.metadata->uid = reuse->slice->metadata->uid;
      slice.metadata->creation_timestamp = reuse->slice->metadata->creation_timestamp;
      slice.metadata->generate_name = reuse->slice->metadata->generate_name;
    } else {
      slice.metadata->name = GenerateName(slice.metadata->generate_name, rng);
      slice.metadata->uid = NewUuid(rng);
      slice.metadata->creation_timestamp = now;
    }
    out.put.push_back(std::move(slice));
  }
  for (auto& [name, s] : stored) {
    if (!s.taken) out.deleted.push_back(name);
  }
  return out;
}

}  // namespace podflow::proxy
