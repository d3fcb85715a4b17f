#include "model/taints.h"

#include <algorithm>

namespace podflow::model {
namespace {

std::string Str(const flatbuffers::String* s) { return s != nullptr ? s->str() : std::string(); }

}  // namespace

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

std::vector<Taint> TaintsOf(const api::NodeSpec* spec) {
  std::vector<Taint> out;
  if (spec == nullptr || spec->taints() == nullptr) return out;
  for (const api::Taint* t : *spec->taints()) {
    out.push_back(Taint{Str(t->key()), Str(t->value()), t->effect(), Str(t->time_added())});
  }
  return out;
}

std::vector<Toleration> TolerationsOf(const api::PodSpec* spec) {
  std::vector<Toleration> out;
  if (spec == nullptr || spec->tolerations() == nullptr) return out;
  for (const api::Toleration* t : *spec->tolerations()) {
    Toleration tol{Str(t->key()), t->operator_(), Str(t->value()), t->effect(), std::nullopt};
    if (t->toleration_seconds().has_value()) tol.toleration_seconds = *t->toleration_seconds();
    out.push_back(std::move(tol));
  }
  return out;
}

}  // namespace podflow::model
