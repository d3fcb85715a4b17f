#include "stages/runtime/node_runtime.h"

#include <algorithm>

namespace podflow::runtime {
namespace {

const ConfigSources kNoSources;

}  // namespace

NodeRuntime::NodeRuntime(SimNode node, const ImageCatalog* catalog, const RuntimeTiming* timing,
                         const ConfigSources* sources, ContainerHost* host)
    : node_(std::move(node)),
      host_ip_(FormatIpv4(node_.internal_ip)),
      catalog_(catalog),
      timing_(timing),
      sources_(sources != nullptr ? sources : &kNoSources),
      host_(host),
      ip_pool_(node_.pod_cidr),
      puller_free_at_(static_cast<size_t>(std::max(timing->max_parallel_pulls, 0)), SimTime{}) {
  for (const std::string& ref : node_.images) {
    if (auto image = catalog_->Resolve(ref)) image_ready_at_[image->canonical] = SimTime::min();
  }
}

bool NodeRuntime::HasImage(const std::string& canonical, SimTime now) const {
  auto it = image_ready_at_.find(canonical);
  return it != image_ready_at_.end() && it->second <= now;
}

PullTicket NodeRuntime::RequestPull(const ResolvedImage& image, SimTime now) {
  auto it = image_ready_at_.find(image.canonical);
  if (it != image_ready_at_.end() && it->second > now) {
    return PullTicket{it->second, it->second - now};  // joined a pull in flight
  }
  SimTime start = now;
  if (!puller_free_at_.empty()) {
    auto slot = std::min_element(puller_free_at_.begin(), puller_free_at_.end());
    start = std::max(now, *slot);
    *slot = start + image.pull_time;
  }
  const SimTime done = start + image.pull_time;
  // A re-pull (policy Always) of a present image leaves it present meanwhile.
  if (it == image_ready_at_.end()) image_ready_at_[image.canonical] = done;
  return PullTicket{done, image.pull_time};
}

}  // namespace podflow::runtime
