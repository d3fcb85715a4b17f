// Field selectors as kube-apiserver takes them (`--field-selector`):
// requirements joined by commas, each `field=value`, `field==value` or
// `field!=value`, over the fields each kind supports for selection:
// metadata.name and metadata.namespace on every kind, and per kind the ones
// Kubernetes adds (a pod's spec.nodeName and status.phase, an event's
// involvedObject.*, reason and type, ...).
//
// Thread safety: value types and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/codec.h"
#include "model/labels.h"
#include "model/value.h"

namespace podflow::model {

class FieldSelector {
 public:
  // Everything.
  FieldSelector() = default;
  // Invalid "field label not supported: F" for a field `kind` cannot be
  // selected by, or naming the requirement that does not parse.
  static Result<FieldSelector> Parse(const KindInfo& kind, std::string_view text);

  // Whether `object` (as ToValue gives it) satisfies every requirement.
  bool Matches(const Value& object) const;
  bool empty() const { return requirements_.empty(); }

 private:
  struct Requirement {
    std::string path;           // where the value is, as ToValue lays it out
    std::string absent;         // the value when the path holds nothing ("", "false")
    std::string value;
    bool equal = true;
  };
  std::vector<Requirement> requirements_;
};

// The labels of an object as ToValue gives it.
Labels LabelsOf(const Value& object);

}  // namespace podflow::model
