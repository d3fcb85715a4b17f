#include "scheduler/framework/labels.h"

#include <algorithm>

namespace podflow::scheduler {

const std::string* FindLabel(const Labels& labels, std::string_view key) {
  // Most label maps are small: a scan comparing lengths first touches fewer
  // bytes than a binary search comparing strings.
  if (labels.size() <= 8) {
    for (const auto& [k, v] : labels) {
      if (k.size() == key.size() && k == key) return &v;
    }
    return nullptr;
  }
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

LabelSelector LabelSelector::Everything() {
  LabelSelector s;
  s.nothing_ = false;
  return s;
}

namespace {

std::string_view OperatorName(api::LabelSelectorOperator op) {
  switch (op) {
    case api::LabelSelectorOperator::In: return "In";
    case api::LabelSelectorOperator::NotIn: return "NotIn";
    case api::LabelSelectorOperator::Exists: return "Exists";
    case api::LabelSelectorOperator::DoesNotExist: return "DoesNotExist";
    case api::LabelSelectorOperator::Unset: break;
  }
  return "";
}

bool RequirementLess(const LabelSelectorRequirement& a, const LabelSelectorRequirement& b) {
  if (a.key != b.key) return a.key < b.key;
  if (a.op != b.op) return a.op < b.op;
  return a.values < b.values;
}

}  // namespace

Result<LabelSelector> LabelSelector::FromApi(const api::LabelSelector* selector) {
  if (selector == nullptr) return Nothing();
  LabelSelector out = Everything();
  if (selector->match_labels() != nullptr) {
    for (const api::StringEntry* e : *selector->match_labels()) {
      if (e->key() == nullptr) continue;
      out.Add({e->key()->str(), api::LabelSelectorOperator::In,
               {e->value() != nullptr ? e->value()->str() : std::string()}});
    }
  }
  if (selector->match_expressions() != nullptr) {
    for (flatbuffers::uoffset_t i = 0; i < selector->match_expressions()->size(); ++i) {
      const api::LabelSelectorRequirement* e = selector->match_expressions()->Get(i);
      LabelSelectorRequirement r;
      r.key = e->key() != nullptr ? e->key()->str() : std::string();
      r.op = e->operator_();
      if (e->values() != nullptr) {
        for (const flatbuffers::String* v : *e->values()) r.values.push_back(v->str());
      }
      const std::string where = "matchExpressions[" + std::to_string(i) + "]: ";
      switch (r.op) {
        case api::LabelSelectorOperator::In:
        case api::LabelSelectorOperator::NotIn:
          if (r.values.empty()) {
            return Status::Invalid(where + "values must be non-empty for operator " +
                                   std::string(OperatorName(r.op)));
          }
          break;
        case api::LabelSelectorOperator::Exists:
        case api::LabelSelectorOperator::DoesNotExist:
          if (!r.values.empty()) {
            return Status::Invalid(where + "values must be empty for operator " +
                                   std::string(OperatorName(r.op)));
          }
          break;
        case api::LabelSelectorOperator::Unset:
          return Status::Invalid(where + "operator is not one of In, NotIn, Exists, DoesNotExist");
      }
      out.Add(std::move(r));
    }
  }
  return out;
}

void LabelSelector::Add(LabelSelectorRequirement r) {
  if (nothing_) return;
  std::sort(r.values.begin(), r.values.end());
  r.values.erase(std::unique(r.values.begin(), r.values.end()), r.values.end());
  auto at = std::upper_bound(requirements_.begin(), requirements_.end(), r, RequirementLess);
  requirements_.insert(at, std::move(r));
}

bool Matches(const LabelSelectorRequirement& r, const Labels& labels) {
  const std::string* value = FindLabel(labels, r.key);
  switch (r.op) {
    case api::LabelSelectorOperator::In:
      return value != nullptr && std::binary_search(r.values.begin(), r.values.end(), *value);
    case api::LabelSelectorOperator::NotIn:
      return value == nullptr || !std::binary_search(r.values.begin(), r.values.end(), *value);
    case api::LabelSelectorOperator::Exists:
      return value != nullptr;
    case api::LabelSelectorOperator::DoesNotExist:
      return value == nullptr;
    case api::LabelSelectorOperator::Unset:
      break;
  }
  return false;
}

bool LabelSelector::Matches(const Labels& labels) const {
  if (nothing_) return false;
  for (const LabelSelectorRequirement& r : requirements_) {
    if (!scheduler::Matches(r, labels)) return false;
  }
  return true;
}

std::string LabelSelector::String() const {
  if (nothing_) return "<none>";
  std::string out;
  for (const LabelSelectorRequirement& r : requirements_) {
    if (!out.empty()) out += ",";
    auto list = [&] {
      std::string l = "(";
      for (size_t i = 0; i < r.values.size(); ++i) l += (i ? "," : "") + r.values[i];
      return l + ")";
    };
    switch (r.op) {
      case api::LabelSelectorOperator::In:
        out += r.values.size() == 1 ? r.key + "=" + r.values[0] : r.key + " in " + list();
        break;
      case api::LabelSelectorOperator::NotIn:
        out += r.values.size() == 1 ? r.key + "!=" + r.values[0] : r.key + " notin " + list();
        break;
      case api::LabelSelectorOperator::Exists: out += r.key; break;
      case api::LabelSelectorOperator::DoesNotExist: out += "!" + r.key; break;
      case api::LabelSelectorOperator::Unset: break;
    }
  }
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
