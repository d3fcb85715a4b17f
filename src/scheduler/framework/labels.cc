#include "scheduler/framework/labels.h"

#include <algorithm>

namespace podflow::scheduler {

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
