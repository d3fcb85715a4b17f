// Taints and tolerations as plain values, with Kubernetes' matching rules
// (v1helper.TolerationsTolerateTaint): what the scheduler filters and scores
// on and what taint-based eviction reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "node_generated.h"
#include "pod_generated.h"

namespace podflow::model {

struct Taint {
  std::string key;
  std::string value;
  api::TaintEffect effect = api::TaintEffect::Unset;
  std::string time_added;  // RFC 3339; NoExecute taints the node controller adds carry it
};

struct Toleration {
  std::string key;
  api::TolerationOperator op = api::TolerationOperator::Unset;  // Unset means Equal
  std::string value;
  api::TaintEffect effect = api::TaintEffect::Unset;  // Unset matches every effect
  std::optional<int64_t> toleration_seconds;          // NoExecute: how long it tolerates
};

// Kubernetes' Toleration.ToleratesTaint: the effect matches (or the
// toleration names none), the key matches (or the toleration names none),
// and the value is equal (operator Equal or unset) or anything (Exists).
bool ToleratesTaint(const Toleration& toleration, const Taint& taint);
bool TolerationsTolerateTaint(const std::vector<Toleration>& tolerations, const Taint& taint);

// The stored objects' taints and tolerations, as these values.
std::vector<Taint> TaintsOf(const api::NodeSpec* spec);
std::vector<Toleration> TolerationsOf(const api::PodSpec* spec);

}  // namespace podflow::model
