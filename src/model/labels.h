// Label maps and label selectors as plain values, with Kubernetes' matching
// rules (labels.Selector): what selects pods for a Service, a workload, a
// PodDisruptionBudget, the scheduler's affinity terms and `get -l`.
//
// Thread safety: value types and pure functions.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "meta_generated.h"

namespace podflow::model {

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
  // The same from the native form (admission's objects).
  static Result<LabelSelector> FromNative(const api::LabelSelectorT* selector);

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

// A selector as kubectl's -l takes it (labels.Parse): requirements joined
// by commas, each `key=value`, `key==value`, `key!=value`, `key in (a,b)`,
// `key notin (a,b)`, `key` or `!key`; "" selects everything. Invalid,
// naming the requirement, otherwise.
Result<LabelSelector> ParseLabelSelector(std::string_view text);

// Copies a native StringEntry list into sorted Labels.
Labels LabelsFromNative(const std::vector<std::unique_ptr<api::StringEntryT>>& entries);

}  // namespace podflow::model
