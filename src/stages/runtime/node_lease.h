// kubelet's node lease: each node's agent holds the Lease named after its
// node in the kube-node-lease namespace (coordination.k8s.io/v1) and renews
// it every quarter of its duration (10 s of kubelet's default 40 s). The
// node lifecycle controller takes a lease renewed as the node's heartbeat;
// the Node's own status is written only when it changes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cluster_generated.h"

namespace podflow::runtime {

inline constexpr char kNodeLeaseNamespace[] = "kube-node-lease";

// The leases of the nodes one runtime hosts, and when each is due. Not
// thread-safe; the stage's loop owns it.
class NodeLeases {
 public:
  // `duration_seconds`: kubelet's nodeLeaseDurationSeconds (RuntimeTiming).
  explicit NodeLeases(int duration_seconds);

  // Hosts `node` (Node uid `node_uid`, the lease's owner): its lease is due
  // at once. A lease stored before (`stored`, a verified Lease: this agent's
  // restart) keeps its uid and creationTimestamp, as kubelet updates the
  // lease it finds instead of making a new one.
  void Add(const std::string& node, const std::string& node_uid, SimTime now,
           const api::Lease* stored = nullptr);
  void Remove(const std::string& node);

  struct Write {
    std::string node;
    std::string key;    // Key(node)
    std::string bytes;  // the Lease renewed at `now`, packed
  };
  // Every lease due at `now`, renewed; each is due again a renew interval
  // later (after its first write, a share of the interval fixed by the
  // node's name, so that nodes added together spread their renewals). The
  // stage writes them unguarded: a node's agent is its lease's one writer.
  std::vector<Write> Renew(SimTime now);
  // Writing `failed` did not succeed: they are due again `delay` after `now`.
  void RetryAfter(const std::vector<Write>& failed, SimDuration delay, SimTime now);

  // The earliest due lease (nullopt: none held).
  std::optional<SimTime> NextDue() const { return next_due_; }
  SimDuration renew_interval() const { return renew_interval_; }
  size_t size() const { return leases_.size(); }

  // "/registry/leases/kube-node-lease/NODE".
  static std::string Key(const std::string& node);

 private:
  struct Held {
    std::string node_uid;
    std::string uid;
    std::string created;  // creationTimestamp
    SimTime due;
    bool first = true;  // not written yet by this agent
  };
  std::string Build(const std::string& node, const Held& held, SimTime now) const;

  int duration_seconds_;
  SimDuration renew_interval_;
  std::map<std::string, Held> leases_;  // by node name
  std::optional<SimTime> next_due_;     // no lease is due before it
};

}  // namespace podflow::runtime
