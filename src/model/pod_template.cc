#include "model/pod_template.h"

namespace podflow::model {
namespace {

// `object` with the member `key` replaced by what `change` makes of it.
template <typename F>
Value Rewritten(const Value& object, std::string_view key, F change) {
  Value out = Value::Object();
  for (const auto& [k, member] : object.members()) {
    if (k == key && member.kind() == Value::Kind::kObject) {
      out.Set(k, change(member));
    } else {
      out.Set(k, member);
    }
  }
  return out;
}

}  // namespace

Value PodTemplateWithoutHash(const Value& object) {
  const Value* spec = object.kind() == Value::Kind::kObject ? object.Find("spec") : nullptr;
  const Value* tmpl = spec != nullptr && spec->kind() == Value::Kind::kObject ? spec->Find("template") : nullptr;
  if (tmpl == nullptr || tmpl->kind() != Value::Kind::kObject) return Value();
  return Rewritten(*tmpl, "metadata", [](const Value& meta) {
    return Rewritten(meta, "labels", [](const Value& labels) {
      Value kept = Value::Object();
      for (const auto& [label, value] : labels.members()) {
        if (label != kPodTemplateHashLabel) kept.Set(label, value);
      }
      return kept;
    });
  });
}

std::string PodTemplateKey(const KindInfo& kind, std::string_view bytes) {
  return ToJson(PodTemplateWithoutHash(ToValue(kind, bytes)));
}

}  // namespace podflow::model
