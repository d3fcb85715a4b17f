#include "stages/runtime/node_lease.h"

#include <algorithm>
#include <functional>

#include "model/codec.h"
#include "model/objects.h"
#include "stages/runtime/node_object.h"

namespace podflow::runtime {

NodeLeases::NodeLeases(int duration_seconds)
    : duration_seconds_(duration_seconds),
      // kubelet renews at a quarter of the duration (its renewIntervalFraction).
      renew_interval_(SimDuration(int64_t{duration_seconds} * 1000 / 4)) {}

std::string NodeLeases::Key(const std::string& node) {
  return model::ObjectKey(model::Kind("Lease"), kNodeLeaseNamespace, node);
}

void NodeLeases::Add(const std::string& node, const std::string& node_uid, SimTime now, const api::Lease* stored) {
  Held held{node_uid, DeterministicUid("lease/" + node), FormatRfc3339(now), now};
  if (stored != nullptr && stored->metadata() != nullptr) {
    if (stored->metadata()->uid() && stored->metadata()->uid()->size() > 0) held.uid = stored->metadata()->uid()->str();
    if (stored->metadata()->creation_timestamp() && stored->metadata()->creation_timestamp()->size() > 0) {
      held.created = stored->metadata()->creation_timestamp()->str();
    }
  }
  leases_[node] = std::move(held);
  next_due_ = std::min(next_due_.value_or(now), now);
}

void NodeLeases::Remove(const std::string& node) { leases_.erase(node); }

std::string NodeLeases::Build(const std::string& node, const Held& held, SimTime now) const {
  api::LeaseT lease;
  lease.api_version = "coordination.k8s.io/v1";
  lease.kind = "Lease";
  lease.metadata = std::make_unique<api::ObjectMetaT>();
  lease.metadata->name = node;
  lease.metadata->namespace_ = kNodeLeaseNamespace;
  lease.metadata->uid = held.uid;
  lease.metadata->creation_timestamp = held.created;
  // Owned by its Node, as kubelet sets it (the garbage collector's link).
  auto owner = std::make_unique<api::OwnerReferenceT>();
  owner->api_version = "v1";
  owner->kind = "Node";
  owner->name = node;
  owner->uid = held.node_uid;
  lease.metadata->owner_references.push_back(std::move(owner));
  lease.spec = std::make_unique<api::LeaseSpecT>();
  lease.spec->holder_identity = node;
  lease.spec->lease_duration_seconds = duration_seconds_;
  lease.spec->renew_time = FormatRfc3339Micro(now);
  return model::Pack(lease);
}

std::vector<NodeLeases::Write> NodeLeases::Renew(SimTime now) {
  std::vector<Write> out;
  if (!next_due_ || *next_due_ > now) return out;
  next_due_.reset();
  for (auto& [node, held] : leases_) {
    if (held.due <= now) {
      out.push_back({node, Key(node), Build(node, held, now)});
      held.due = now + renew_interval_;
      // Nodes registered together would renew together for ever: after the
      // first write each gets a share of the interval of its own (the same
      // one for the same name), as kubelets started at different times do.
      if (held.first) {
        held.first = false;
        const SimDuration share(renew_interval_.count() *
                                static_cast<int64_t>(std::hash<std::string>{}(node) % 1000) / 1000);
        held.due = now + share;
      }
    }
    next_due_ = std::min(next_due_.value_or(held.due), held.due);
  }
  return out;
}

void NodeLeases::RetryAfter(const std::vector<Write>& failed, SimDuration delay, SimTime now) {
  for (const Write& w : failed) {
    auto it = leases_.find(w.node);
    if (it == leases_.end()) continue;
    it->second.due = std::min(it->second.due, now + delay);
    next_due_ = std::min(next_due_.value_or(it->second.due), it->second.due);
  }
}

}  // namespace podflow::runtime
