#include "model/fields.h"

#include <algorithm>
#include <optional>

namespace podflow::model {
namespace {

// A field a kind may be selected by: its selector name, where ToValue puts
// it, and what it reads as when absent (booleans read "false").
struct SelectableField {
  std::string_view kind;  // "" for every kind
  std::string_view name;
  std::string_view path;
  std::string_view absent;
};

constexpr SelectableField kFields[] = {
    {"", "metadata.name", "metadata.name", ""},
    {"", "metadata.namespace", "metadata.namespace", ""},
    {"Pod", "spec.nodeName", "spec.nodeName", ""},
    {"Pod", "spec.restartPolicy", "spec.restartPolicy", ""},
    {"Pod", "spec.schedulerName", "spec.schedulerName", ""},
    {"Pod", "spec.serviceAccountName", "spec.serviceAccountName", ""},
    {"Pod", "spec.hostNetwork", "spec.hostNetwork", "false"},
    {"Pod", "status.phase", "status.phase", ""},
    {"Pod", "status.podIP", "status.podIP", ""},
    {"Pod", "status.nominatedNodeName", "status.nominatedNodeName", ""},
    {"Event", "involvedObject.kind", "involvedObject.kind", ""},
    {"Event", "involvedObject.namespace", "involvedObject.namespace", ""},
    {"Event", "involvedObject.name", "involvedObject.name", ""},
    {"Event", "involvedObject.uid", "involvedObject.uid", ""},
    {"Event", "involvedObject.apiVersion", "involvedObject.apiVersion", ""},
    {"Event", "involvedObject.resourceVersion", "involvedObject.resourceVersion", ""},
    {"Event", "involvedObject.fieldPath", "involvedObject.fieldPath", ""},
    {"Event", "reason", "reason", ""},
    {"Event", "reportingComponent", "reportingComponent", ""},
    {"Event", "source", "source.component", ""},
    {"Event", "type", "type", ""},
    {"Node", "spec.unschedulable", "spec.unschedulable", "false"},
    {"Namespace", "status.phase", "status.phase", ""},
    {"Secret", "type", "type", ""},
    {"ReplicaSet", "status.replicas", "status.replicas", "0"},
    {"Job", "status.successful", "status.succeeded", "0"},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The scalar at a dotted path, as text; nullopt when nothing is there.
std::optional<std::string> ScalarAt(const Value& object, std::string_view path) {
  const Value* v = &object;
  while (!path.empty()) {
    size_t dot = path.find('.');
    std::string_view key = path.substr(0, dot);
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
    if (v->kind() != Value::Kind::kObject) return std::nullopt;
    v = v->Find(key);
    if (v == nullptr) return std::nullopt;
  }
  switch (v->kind()) {
    case Value::Kind::kString: return v->string_value();
    case Value::Kind::kBool: return std::string(v->bool_value() ? "true" : "false");
    case Value::Kind::kInt: return std::to_string(v->int_value());
    default: return std::nullopt;
  }
}

}  // namespace

Result<FieldSelector> FieldSelector::Parse(const KindInfo& kind, std::string_view text) {
  FieldSelector out;
  if (Trim(text).empty()) return out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != ',') continue;
    std::string_view part = Trim(text.substr(start, i - start));
    start = i + 1;
    Requirement r;
    size_t op = part.find_first_of("!=");
    if (op == std::string_view::npos || op == 0) {
      return Status::Invalid("invalid selector: '" + std::string(part) + "'; can't understand '" + std::string(part) +
                             "'");
    }
    std::string_view field = Trim(part.substr(0, op));
    std::string_view rest = part.substr(op);
    if (rest.starts_with("!=")) {
      r.equal = false;
      rest.remove_prefix(2);
    } else if (rest.starts_with("==")) {
      rest.remove_prefix(2);
    } else if (rest.starts_with("=")) {
      rest.remove_prefix(1);
    } else {
      return Status::Invalid("invalid selector: '" + std::string(part) + "'; can't understand '" + std::string(part) +
                             "'");
    }
    r.value = std::string(Trim(rest));
    const SelectableField* found = nullptr;
    for (const SelectableField& f : kFields) {
      if ((f.kind.empty() || f.kind == kind.kind) && f.name == field) found = &f;
    }
    if (found == nullptr) return Status::Invalid("field label not supported: " + std::string(field));
    r.path = std::string(found->path);
    r.absent = std::string(found->absent);
    out.requirements_.push_back(std::move(r));
  }
  return out;
}

bool FieldSelector::Matches(const Value& object) const {
  return std::all_of(requirements_.begin(), requirements_.end(), [&](const Requirement& r) {
    std::string actual = ScalarAt(object, r.path).value_or(r.absent);
    return (actual == r.value) == r.equal;
  });
}

Labels LabelsOf(const Value& object) {
  Labels out;
  const Value* meta = object.Find("metadata");
  const Value* labels = meta != nullptr && meta->kind() == Value::Kind::kObject ? meta->Find("labels") : nullptr;
  if (labels == nullptr || labels->kind() != Value::Kind::kObject) return out;
  for (const auto& [k, v] : labels->members()) {
    if (v.kind() == Value::Kind::kString) out.emplace_back(k, v.string_value());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace podflow::model
