// Label maps, label selectors and taints/tolerations as plain values, with
// Kubernetes' matching rules (labels.Selector, v1helper.TolerationsTolerateTaint).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "meta_generated.h"
#include "pod_generated.h"

namespace podflow::scheduler {

// map[string]string, sorted by key, no duplicate keys.
using Labels = std::vector<std::pair<std::string, std::string>>;

// The value of `key`, or nullptr.
const std::string* FindLabel(const Labels& labels, std::string_view key);

// Copies a FlatBuffers StringEntry vector (nullptr: empty) into sorted Labels.
Labels LabelsFromEntries(const flatbuffers::Vector<flatbuffers::Offset<api::StringEntry>>* entries);

// One requirement of a label selector. Values are sorted and unique.
struct LabelSelectorRequirement {
  std::string key;
  api::LabelSelectorOperator op = api::LabelSelectorOperator::Unset;
  std::vector<std::string> values;
  friend bool operator==(const LabelSelectorRequirement&, const LabelSelectorRequirement&) = default;
};

// A compiled metav1.LabelSelector (labels.Selector): requirements ANDed.
// Kubernetes' LabelSelectorAsSelector: a null selector matches nothing; an
// empty one (no matchLabels, no matchExpressions) matches everything;
// matchLabels k: v is "k In (v)". Requirement semantics:
//   In: the label is present and its value listed;  NotIn: absent, or value
//   not listed;  Exists: present;  DoesNotExist: absent.
// Default-constructed: matches nothing. Copyable value type.
class LabelSelector {
 public:
  LabelSelector() = default;
  static LabelSelector Nothing() { return LabelSelector(); }
  static LabelSelector Everything();

  // From a stored selector (nullptr: Nothing). Invalid, naming the
  // requirement, for an unknown operator, In / NotIn without values or
  // Exists / DoesNotExist with values (metav1 validation's rules).
  static Result<LabelSelector> FromApi(const api::LabelSelector* selector);

  // Adds a requirement (ANDed). A Nothing selector stays Nothing.
  // REQUIRES: the requirement is valid as FromApi checks.
  void Add(LabelSelectorRequirement requirement);

  bool Matches(const Labels& labels) const;
  bool MatchesNothing() const { return nothing_; }
  bool MatchesEverything() const { return !nothing_ && requirements_.empty(); }
  // Sorted by key, then operator, then values.
  const std::vector<LabelSelectorRequirement>& requirements() const { return requirements_; }

  // labels.Selector.String(): "app=web,tier in (a,b),!gpu", "" for
  // everything, "<none>" for nothing.
  std::string String() const;

  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;

 private:
  bool nothing_ = true;
  std::vector<LabelSelectorRequirement> requirements_;
};

bool Matches(const LabelSelectorRequirement& r, const Labels& labels);

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
