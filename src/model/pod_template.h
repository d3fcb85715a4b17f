// A workload's pod template as the deployment controller and kubectl's
// rollout compare two of them: its spec.template, without the
// pod-template-hash label the controller adds to a ReplicaSet's.
#pragma once

#include <string>
#include <string_view>

#include "model/codec.h"
#include "model/value.h"

namespace podflow::model {

inline constexpr char kPodTemplateHashLabel[] = "pod-template-hash";

// `object` (a Deployment or ReplicaSet as ToValue reads it): its
// spec.template without the pod-template-hash label; null when it has none.
Value PodTemplateWithoutHash(const Value& object);

// The same of the stored object `bytes` of `kind`, as canonical JSON: equal
// for a Deployment and the ReplicaSets made from its template.
std::string PodTemplateKey(const KindInfo& kind, std::string_view bytes);

}  // namespace podflow::model
