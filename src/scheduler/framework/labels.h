// Label maps and taints/tolerations as plain values, with Kubernetes'
// matching rules (v1helper.TolerationsTolerateTaint).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "meta_generated.h"
#include "pod_generated.h"

namespace podflow::scheduler {

// map[string]string, sorted by key, no duplicate keys.
using Labels = std::vector<std::pair<std::string, std::string>>;

// The value of `key`, or nullptr.
const std::string* FindLabel(const Labels& labels, std::string_view key);

// Copies a FlatBuffers StringEntry vector (nullptr: empty) into sorted Labels.
Labels LabelsFromEntries(const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* entries);

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
