// NodeAgentSet: many simulated nodes and their pods in one object, driven by
// the caller's clock. No threads: a priority queue of (due time, pod) hands
// out the steps due at `now`, so thousands of nodes x pods cost only the
// steps that actually happen.
//
// Typical use by the runtime stage: AddNode for each configured node
// (register NodeObject bytes), AddPod when the watch shows a pod bound to one
// of them, RemovePod when it is deleted, and on each tick send the reports
// of Advance(now) and sleep until NextDue().
//
// Thread safety: none; one thread owns the set.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "model/report.h"
#include "model/image_catalog.h"
#include "stages/runtime/config.h"
#include "stages/runtime/node_runtime.h"
#include "stages/runtime/pod_runner.h"

namespace podflow::runtime {

class NodeAgentSet {
 public:
  // `catalog` must outlive the set.
  NodeAgentSet(const ImageCatalog* catalog, RuntimeTiming timing);
  NodeAgentSet(const NodeAgentSet&) = delete;
  NodeAgentSet& operator=(const NodeAgentSet&) = delete;

  // What runs the containers of process nodes (SimNode::type kProcess);
  // must outlive the set. Without one a process node is refused.
  void SetContainerHost(ContainerHost* host) { host_ = host; }
  // kubelet's clusterDNS and clusterDomain (every node reads them here).
  void SetClusterDns(std::vector<std::string> servers, std::string domain) {
    dns_.cluster_dns = std::move(servers);
    dns_.cluster_domain = std::move(domain);
  }
  // AlreadyExists when a node of that name is hosted; Unavailable for
  // a process node without a container host. A process node is put on the
  // host's pod network when it has one (its InternalIP must be in its
  // nodeIPRange); when that fails the node is hosted all the same, its
  // pods on this machine's network (its InternalIP this machine's
  // loopback unless one was given: FindNode tells), and the error says
  // why.
  Status AddNode(SimNode node);
  // Stops every pod on the node (no further reports) and forgets it.
  void RemoveNode(const std::string& name);
  bool HasNode(const std::string& name) const { return nodes_.contains(name); }
  // Whether the node's containers are real processes (a ContainerHost runs them).
  bool RunsProcesses(const std::string& name) const {
    auto it = nodes_.find(name);
    return it != nodes_.end() && it->second->host() != nullptr;
  }

  // Starts running a pod on `node_name` at `now`. NotFound for a node not
  // hosted; a pod key already running is updated (ObserveRevision) when the
  // uid matches, and replaced (restarted) when it does not.
  Status AddPod(const std::string& node_name, PodAssignment assignment, SimTime now);
  // Takes over a pod that was already running on `node_name` before this
  // runtime (re)started, as kubelet finds its containers still running: no
  // step is replayed and no report sent; its pod IP (`pod_ip`, may be empty)
  // is kept out of the pool. A later AddPod of the same uid is then a no-op.
  // NotFound for a node not hosted.
  Status AdoptPod(const std::string& node_name, const std::string& pod_key, const std::string& uid,
                  const std::string& pod_ip);
  // The pod was deleted (or moved): stop it and free its IP. No-op if unknown.
  void RemovePod(const std::string& pod_key);
  // The pod has a deletionTimestamp: its containers are stopped gracefully
  // from `now` within `grace` (PodRunner::Terminate); the steps report as
  // usual. NotFound when no runner has it (unknown, or adopted).
  Status TerminatePod(const std::string& pod_key, SimDuration grace, SimTime now, int64_t mod_revision);

  // When the earliest pending step is due; nullopt when idle.
  std::optional<SimTime> NextDue();
  // Hands the container exits the host saw to their pods, then runs every
  // step due at or before `now`, in time order (ties: the order the work
  // was scheduled in); one report per pod step.
  std::vector<model::Report> Advance(SimTime now);

  // The ConfigMaps and Secrets every node's pods read (the stage keeps
  // them current; a change is seen at the next container creation or
  // volume set-up, as kubelet's watch-based managers see it).
  ConfigSources& sources() { return sources_; }
  // A ConfigMap or Secret of `namespace_` was created or changed: the
  // volumes process nodes made from them are brought up to date
  // (PodRunner::RefreshVolumes).
  void SourceChanged(std::string_view namespace_);

  // A hosted node's runtime (its image store), or nullptr.
  NodeRuntime* FindNode(const std::string& name) {
    auto it = nodes_.find(name);
    return it == nodes_.end() ? nullptr : it->second.get();
  }

  size_t node_count() const { return nodes_.size(); }
  size_t pod_count() const { return pods_.size() + adopted_.size(); }
  // The runner of a pod, or nullptr (for inspection and tests).
  const PodRunner* FindPod(const std::string& pod_key) const;

 private:
  struct Hosted {
    std::string node_name;
    std::string uid;
    std::unique_ptr<PodRunner> runner;
    // Set anew from the set-wide counter on every (re)schedule, so a number
    // is never reused for a key: queue entries of an earlier pod under the
    // same key can never look current.
    uint64_t generation = 0;
  };
  struct Due {
    SimTime at;
    uint64_t seq;
    std::string pod_key;
    uint64_t generation;
    bool operator>(const Due& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  void Schedule(const std::string& pod_key, Hosted& hosted);
  void DropStale();

  void DeliverExits();

  const ImageCatalog* catalog_;
  ContainerHost* host_ = nullptr;
  DnsSettings dns_;
  RuntimeTiming timing_;
  ConfigSources sources_;
  std::unordered_map<std::string, std::unique_ptr<NodeRuntime>> nodes_;
  std::unordered_map<std::string, Hosted> pods_;
  struct Adopted {
    std::string node_name;
    std::string uid;
    std::optional<Ipv4> ip;
  };
  void ForgetAdopted(const std::string& pod_key);
  std::unordered_map<std::string, Adopted> adopted_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> queue_;
  uint64_t seq_ = 0;
  uint64_t next_generation_ = 0;
};

}  // namespace podflow::runtime
