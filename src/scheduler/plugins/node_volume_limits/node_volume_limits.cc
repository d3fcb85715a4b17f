#include "scheduler/plugins/node_volume_limits/node_volume_limits.h"

#include <algorithm>
#include <set>
#include <utility>

namespace podflow::scheduler::plugins {
namespace {

constexpr std::string_view kStateKey = "PreFilterNodeVolumeLimits";
constexpr std::string_view kLabelInstanceType = "node.kubernetes.io/instance-type";
constexpr std::string_view kLabelInstanceTypeBeta = "beta.kubernetes.io/instance-type";

// A volume the node attaches: (limit key, identity within that key).
using Attached = std::pair<std::string, std::string>;
using AttachedSet = std::set<Attached>;

struct State {
  bool skip = false;       // the pod has no volume that could count
  PluginStatus rejection;  // a claim of the pod does not exist
  AttachedSet volumes;     // the pod's countable volumes
  const VolumeCatalog* catalog = nullptr;
};

// The limit key of an in-tree disk kind; empty for other kinds.
std::string_view InTreeKey(VolumeSourceKind kind) {
  switch (kind) {
    case VolumeSourceKind::kAwsElasticBlockStore: return kEbsVolumeLimitKey;
    case VolumeSourceKind::kGcePersistentDisk: return kGcePdVolumeLimitKey;
    case VolumeSourceKind::kAzureDisk: return kAzureDiskVolumeLimitKey;
    case VolumeSourceKind::kCinder: return kCinderVolumeLimitKey;
    default: return {};
  }
}

bool IsClaim(const PodVolume& v) {
  return v.kind == VolumeSourceKind::kPersistentVolumeClaim || v.kind == VolumeSourceKind::kEphemeral;
}

// Adds the countable volumes of `pod` to `out`. For the new pod
// (`rejection` given) a missing claim is a rejection; for a pod already on
// the node it counts for nothing.
void Collect(const PodInfo& pod, const VolumeCatalog& catalog, AttachedSet& out,
             PluginStatus* rejection) {
  for (const PodVolume& v : pod.volumes) {
    if (std::string_view key = InTreeKey(v.kind); !key.empty()) {
      out.emplace(std::string(key), v.id);
      continue;
    }
    if (!IsClaim(v)) continue;
    const PersistentVolumeClaimInfo* claim = catalog.FindPersistentVolumeClaim(pod.namespace_, v.claim_name);
    if (claim == nullptr) {
      if (rejection != nullptr && rejection->IsSuccess()) {
        *rejection = PluginStatus::UnschedulableAndUnresolvable(
            "looking up PVC " + pod.namespace_ + "/" + v.claim_name + ": " + ClaimNotFoundMessage(v.claim_name));
      }
      continue;
    }
    if (claim->volume_name.empty()) continue;
    const PersistentVolumeInfo* pv = catalog.FindPersistentVolume(claim->volume_name);
    if (pv == nullptr) continue;
    if (std::string_view key = InTreeKey(pv->kind); !key.empty()) {
      out.emplace(std::string(key), pv->id);
    } else if (pv->kind == VolumeSourceKind::kCsi && !pv->csi_driver.empty() && !pv->id.empty()) {
      out.emplace(std::string(kCsiAttachLimitPrefix) + pv->csi_driver, pv->csi_driver + "/" + pv->id);
    }
  }
}

}  // namespace

bool IsNitroInstanceType(std::string_view t) {
  return t.starts_with("c5") || t.starts_with("m5") || t.starts_with("r5") ||
         t.find("t3") != std::string_view::npos || t.find("z1d") != std::string_view::npos;
}

std::optional<int64_t> VolumeLimit(const NodeInfo& node, std::string_view limit_key, const VolumeCatalog& catalog) {
  // A CSI driver's count in the node's CSINode comes first, as in
  // kube-scheduler.
  if (limit_key.starts_with(kCsiAttachLimitPrefix)) {
    if (std::optional<int64_t> count = catalog.CsiAttachLimit(node.name, limit_key.substr(kCsiAttachLimitPrefix.size()))) {
      return count;
    }
  }
  const auto& scalar = node.allocatable.scalar;
  auto it = std::lower_bound(scalar.begin(), scalar.end(), limit_key,
                             [](const ScalarResource& r, std::string_view k) { return r.name < k; });
  if (it != scalar.end() && it->name == limit_key) return it->value;
  if (limit_key == kEbsVolumeLimitKey) {
    const std::string* type = FindLabel(node.labels, kLabelInstanceType);
    if (type == nullptr) type = FindLabel(node.labels, kLabelInstanceTypeBeta);
    return type != nullptr && IsNitroInstanceType(*type) ? kDefaultMaxEbsNitroVolumes : kDefaultMaxEbsVolumes;
  }
  if (limit_key == kGcePdVolumeLimitKey) return kDefaultMaxGcePdVolumes;
  if (limit_key == kAzureDiskVolumeLimitKey) return kDefaultMaxAzureDiskVolumes;
  if (limit_key == kCinderVolumeLimitKey) return kDefaultMaxCinderVolumes;
  return std::nullopt;
}

PreFilterResult NodeVolumeLimits::PreFilter(CycleState& state, const PodInfo& pod,
                                            const Snapshot& snapshot) const {
  auto s = std::make_shared<State>();
  s->catalog = &snapshot.volumes();
  s->skip = std::none_of(pod.volumes.begin(), pod.volumes.end(),
                         [](const PodVolume& v) { return IsClaim(v) || !InTreeKey(v.kind).empty(); });
  if (!s->skip) Collect(pod, snapshot.volumes(), s->volumes, &s->rejection);
  state.Write<State>(std::string(kStateKey), std::move(s));
  return {};
}

PluginStatus NodeVolumeLimits::Filter(const CycleState& state, const PodInfo&, const NodeInfo& node) const {
  const State* s = state.Read<State>(kStateKey);
  if (s == nullptr) return PluginStatus::Error("NodeVolumeLimits: no prefilter state (PreFilter did not run)");
  if (s->skip) return PluginStatus::Success();
  if (!s->rejection.IsSuccess()) return s->rejection;
  if (s->volumes.empty()) return PluginStatus::Success();

  AttachedSet attached;
  for (const auto& existing : node.pods()) Collect(*existing, *s->catalog, attached, nullptr);

  // Per limit key of the pod's volumes (keys sorted, so a fixed order).
  for (auto it = s->volumes.begin(); it != s->volumes.end();) {
    const std::string& key = it->first;
    int64_t added = 0;
    for (; it != s->volumes.end() && it->first == key; ++it) {
      if (!attached.contains(*it)) ++added;
    }
    const std::optional<int64_t> limit = VolumeLimit(node, key, *s->catalog);
    if (!limit.has_value()) continue;
    // A CSI driver's limit binds only volumes the node does not have yet;
    // the in-tree counters compare the total whenever the pod uses the kind.
    if (key.starts_with(kCsiAttachLimitPrefix) && added == 0) continue;
    auto first = attached.lower_bound(Attached{key, std::string()});
    int64_t present = 0;
    for (; first != attached.end() && first->first == key; ++first) ++present;
    if (present + added > *limit) {
      return PluginStatus::Unschedulable(std::string(kErrReasonMaxVolumeCountExceeded));
    }
  }
  return PluginStatus::Success();
}

}  // namespace podflow::scheduler::plugins
