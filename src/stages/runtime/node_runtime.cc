#include "stages/runtime/node_runtime.h"

#include <algorithm>

namespace podflow::runtime {
namespace {

const ConfigSources kNoSources;
const DnsSettings kDefaultDns;

}  // namespace

NodeRuntime::NodeRuntime(SimNode node, const ImageCatalog* catalog, const RuntimeTiming* timing,
                         const ConfigSources* sources, ContainerHost* host, std::string network,
                         const DnsSettings* dns)
    : node_(std::move(node)),
      host_ip_(FormatIpv4(node_.internal_ip)),
      catalog_(catalog),
      timing_(timing),
      sources_(sources != nullptr ? sources : &kNoSources),
      host_(host),
      network_(std::move(network)),
      dns_(dns != nullptr ? dns : &kDefaultDns),
      ip_pool_(node_.pod_cidr),
      puller_free_at_(static_cast<size_t>(std::max(timing->max_parallel_pulls, 0)), SimTime{}) {
  KeepImages(node_.images);
}

NodeRuntime::~NodeRuntime() {
  if (host_ != nullptr && !network_.empty()) host_->RemoveNodeNetwork(node_.name);
}

void NodeRuntime::Store(const ResolvedImage& image, SimTime ready_at) {
  images_[image.canonical] = Stored{CachedImage{image.canonical, image.image_id, image.size_bytes}, ready_at};
}

void NodeRuntime::KeepImages(const std::vector<std::string>& refs) {
  for (const std::string& ref : refs) {
    std::optional<ResolvedImage> image = catalog_->Resolve(ref);
    if (!image) continue;
    auto it = images_.find(image->canonical);
    if (it == images_.end() || it->second.ready_at > SimTime::min()) Store(*image, SimTime::min());
  }
}

bool NodeRuntime::HasImage(const std::string& canonical, SimTime now) const {
  auto it = images_.find(canonical);
  return it != images_.end() && it->second.ready_at <= now;
}

std::vector<CachedImage> NodeRuntime::Images(SimTime now) const {
  std::vector<CachedImage> out;
  for (const auto& [canonical, stored] : images_) {
    if (stored.ready_at <= now) out.push_back(stored.image);
  }
  return out;
}

PullTicket NodeRuntime::RequestPull(const ResolvedImage& image, SimTime now) {
  auto it = images_.find(image.canonical);
  if (it != images_.end() && it->second.ready_at > now) {
    return PullTicket{it->second.ready_at, it->second.ready_at - now};  // joined a pull in flight
  }
  SimTime start = now;
  if (!puller_free_at_.empty()) {
    auto slot = std::min_element(puller_free_at_.begin(), puller_free_at_.end());
    start = std::max(now, *slot);
    *slot = start + image.pull_time;
  }
  const SimTime done = start + image.pull_time;
  // A re-pull (policy Always) of a present image leaves it present meanwhile.
  if (it == images_.end()) Store(image, done);
  return PullTicket{done, image.pull_time};
}

}  // namespace podflow::runtime
