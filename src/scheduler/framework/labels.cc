#include "scheduler/framework/labels.h"

#include <algorithm>

namespace podflow::scheduler {

const std::string* FindLabel(const Labels& labels, std::string_view key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& entry, std::string_view k) { return entry.first < k; });
  return it != labels.end() && it->first == key ? &it->second : nullptr;
}

Labels LabelsFromEntries(
    const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* entries) {
  Labels out;
  if (entries == nullptr) return out;
  out.reserve(entries->size());
  for (const api::StringEntry* e : *entries) {
    if (e->key() == nullptr) continue;
    out.emplace_back(e->key()->str(), e->value() != nullptr ? e->value()->str() : std::string());
  }
  // Stored maps are sorted by key already; sorting again keeps FindLabel
  // correct for hand-built buffers too.
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const auto& a, const auto& b) { return a.first == b.first; }),
            out.end());
  return out;
}

bool ToleratesTaint(const Toleration& t, const Taint& taint) {
  if (t.effect != api::TaintEffect::Unset && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  switch (t.op) {
    case api::TolerationOperator::Unset:
    case api::TolerationOperator::Equal:
      return t.value == taint.value;
    case api::TolerationOperator::Exists:
      return true;
  }
  return false;
}

bool TolerationsTolerateTaint(const std::vector<Toleration>& tolerations, const Taint& taint) {
  return std::any_of(tolerations.begin(), tolerations.end(),
                     [&](const Toleration& t) { return ToleratesTaint(t, taint); });
}

}  // namespace podflow::scheduler
