// One simulated node's shared machinery: its pod IP pool and its image store.
// Pulls run one at a time per node (kubelet's default serializeImagePulls),
// or up to maxParallelImagePulls at once, or all at once; a request for an
// image already being pulled waits for that pull.
//
// Thread safety: none; a node and its pods are advanced by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "model/image_catalog.h"
#include "stages/runtime/config.h"
#include "stages/runtime/pod_dns.h"
#include "stages/runtime/container_host.h"
#include "stages/runtime/ip_pool.h"
#include "stages/runtime/pod_config.h"

namespace podflow::runtime {

// An image in the node's store: what Node.status.images lists.
struct CachedImage {
  std::string canonical;  // "docker.io/library/nginx:1.14.2"
  std::string image_id;   // "docker.io/library/nginx@sha256:<64 hex>"
  int64_t size_bytes = 0;
};

struct PullTicket {
  SimTime done;         // when the image is present
  SimDuration pulling;  // the pull itself ("in 500ms")
};

class NodeRuntime {
 public:
  // `catalog`, `timing` and `sources` must outlive the node; without
  // `sources` no ConfigMap or Secret exists.
  // `host`, when given, runs the node's containers as real processes; it
  // must outlive the node.
  // `network`: the node's namespace on `host`'s pod network (its pods get
  // theirs on its bridge; it is taken off the network with the node);
  // empty: its pods are on this machine's network.
  // `dns`: kubelet's clusterDNS and clusterDomain (none: the defaults).
  NodeRuntime(SimNode node, const ImageCatalog* catalog, const RuntimeTiming* timing,
              const ConfigSources* sources = nullptr, ContainerHost* host = nullptr, std::string network = "",
              const DnsSettings* dns = nullptr);
  ~NodeRuntime();
  NodeRuntime(const NodeRuntime&) = delete;
  NodeRuntime& operator=(const NodeRuntime&) = delete;

  const SimNode& node() const { return node_; }
  const std::string& host_ip() const { return host_ip_; }
  const ImageCatalog& catalog() const { return *catalog_; }
  const RuntimeTiming& timing() const { return *timing_; }
  const ConfigSources& sources() const { return *sources_; }
  const DnsSettings& dns() const { return *dns_; }
  PodIpPool& ip_pool() { return ip_pool_; }
  // What really runs its containers; nullptr: they are simulated.
  ContainerHost* host() const { return host_; }
  const std::string& network() const { return network_; }

  // Whether the image (canonical name) is on the node at `now`.
  bool HasImage(const std::string& canonical, SimTime now) const;

  // A pull of `image` asked for at `now`. Joins a pull of the same image in
  // flight; otherwise queues behind the node's previous pull.
  PullTicket RequestPull(const ResolvedImage& image, SimTime now);

  // Images found in the node's store (a runtime restarting finds what it
  // pulled before): present from now on.
  void KeepImages(const std::vector<std::string>& refs);
  // The images present at `now`, pulls finished included, in no order; one
  // image pulled by its digest and by a tag is there under both.
  std::vector<CachedImage> Images(SimTime now) const;

 private:
  SimNode node_;
  std::string host_ip_;
  const ImageCatalog* catalog_;
  const RuntimeTiming* timing_;
  const ConfigSources* sources_;
  ContainerHost* host_;
  std::string network_;
  const DnsSettings* dns_;
  PodIpPool ip_pool_;
  struct Stored {
    CachedImage image;
    SimTime ready_at;  // present from
  };
  void Store(const ResolvedImage& image, SimTime ready_at);
  std::unordered_map<std::string, Stored> images_;  // by canonical name
  std::vector<SimTime> puller_free_at_;  // per pull slot; empty: no limit
};

}  // namespace podflow::runtime
