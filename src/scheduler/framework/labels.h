// Taints and tolerations as plain values, with Kubernetes' matching rules
// (v1helper.TolerationsTolerateTaint), beside the model's labels.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/labels.h"
#include "pod_generated.h"

namespace podflow::scheduler {

// Labels and selectors are the model's (model/labels.h), spoken
// unqualified here.
using model::FindLabel;
using model::Labels;
using model::LabelsFromEntries;
using model::LabelSelector;
using model::LabelSelectorRequirement;
using model::Matches;

struct Taint {
  std::string key;
  std::string value;
  api::TaintEffect effect = api::TaintEffect::Unset;
};

struct Toleration {
  std::string key;
  api::TolerationOperator op = api::TolerationOperator::Unset;  // Unset means Equal
  std::string value;
  api::TaintEffect effect = api::TaintEffect::Unset;  // Unset matches every effect
};

// Kubernetes' Toleration.ToleratesTaint: the effect matches (or the
// toleration names none), the key matches (or the toleration names none),
// and the value is equal (operator Equal or unset) or anything (Exists).
bool ToleratesTaint(const Toleration& toleration, const Taint& taint);
bool TolerationsTolerateTaint(const std::vector<Toleration>& tolerations, const Taint& taint);

}  // namespace podflow::scheduler
