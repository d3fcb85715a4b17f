#include "stages/controllers/replica_set.h"

#include <algorithm>

namespace podflow::controllers {

ReplicaCounts CountReplicas(const std::vector<const PodRecord*>& active, const model::Labels& template_labels,
                            int32_t min_ready_seconds, SimTime now) {
  ReplicaCounts out;
  for (const PodRecord* pod : active) {
    ++out.replicas;
    const bool labeled = std::ranges::all_of(template_labels, [&](const auto& label) {
      const std::string* value = model::FindLabel(pod->labels, label.first);
      return value != nullptr && *value == label.second;
    });
    out.fully_labeled += labeled;
    out.ready += pod->ready;
    out.available += IsAvailable(*pod, min_ready_seconds, now);
  }
  return out;
}

}  // namespace podflow::controllers
