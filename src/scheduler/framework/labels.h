// The model's labels, selectors, taints and tolerations, spoken unqualified
// in the scheduler.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/labels.h"
#include "model/taints.h"
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

// So are taints and tolerations (model/taints.h).
using model::Taint;
using model::Toleration;
using model::ToleratesTaint;
using model::TolerationsTolerateTaint;

}  // namespace podflow::scheduler
