// Objects by key: which kind a log key names, and a one-line summary of a
// stored object of each kind.
#include <string>

#include "model/objects.h"
#include "replay/replay.h"
#include "scheduler/scheduler.h"

namespace podflow::replay {

namespace {

constexpr std::string_view kRegistry = "/registry/";

// A scalar as text ("" for null, objects and arrays).
std::string Text(const model::Value* v) {
  if (v == nullptr) return "";
  switch (v->kind()) {
    case model::Value::Kind::kString:
      return v->string_value();
    case model::Value::Kind::kInt:
      return std::to_string(v->int_value());
    case model::Value::Kind::kBool:
      return v->bool_value() ? "true" : "false";
    case model::Value::Kind::kNumber: {
      std::string s = std::to_string(v->number_value());
      while (s.size() > 1 && s.back() == '0') s.pop_back();
      if (!s.empty() && s.back() == '.') s.pop_back();
      return s;
    }
    default:
      return "";
  }
}

// The member at a dotted path ("status.phase"), or nullptr.
const model::Value* At(const model::Value& root, std::string_view path) {
  const model::Value* v = &root;
  while (v != nullptr && !path.empty()) {
    const size_t dot = path.find('.');
    if (v->kind() != model::Value::Kind::kObject) return nullptr;
    v = v->Find(path.substr(0, dot));
    path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
  }
  return v;
}

std::string OrNone(std::string s) { return s.empty() ? "<none>" : s; }

std::string PodSummary(const model::Value& pod) {
  std::string out = "phase=" + OrNone(Text(At(pod, "status.phase")));
  out += " node=" + OrNone(Text(At(pod, "spec.nodeName")));
  const std::string ip = Text(At(pod, "status.podIP"));
  if (!ip.empty()) out += " ip=" + ip;
  if (At(pod, "metadata.deletionTimestamp") != nullptr) out += " (terminating)";
  return out;
}

std::string EventSummary(const model::Value& event) {
  std::string out = OrNone(Text(At(event, "type"))) + " " + OrNone(Text(At(event, "reason")));
  const std::string message = Text(At(event, "message"));
  if (!message.empty()) out += ": " + message;
  const model::Value* count = At(event, "count");
  if (count != nullptr && count->kind() == model::Value::Kind::kInt && count->int_value() > 1) {
    out += " (x" + std::to_string(count->int_value()) + ")";
  }
  return out;
}

std::string NodeSummary(const model::Value& node) {
  std::string ready = "Unknown";
  if (const model::Value* conds = At(node, "status.conditions");
      conds != nullptr && conds->kind() == model::Value::Kind::kArray) {
    for (const model::Value& c : conds->items()) {
      if (Text(c.Find("type")) != "Ready") continue;
      const std::string status = Text(c.Find("status"));
      ready = status == "True" ? "Ready" : status == "False" ? "NotReady" : "Unknown";
    }
  }
  const model::Value* unschedulable = At(node, "spec.unschedulable");
  if (unschedulable != nullptr && unschedulable->kind() == model::Value::Kind::kBool &&
      unschedulable->bool_value()) {
    ready += ",SchedulingDisabled";
  }
  std::string out = ready;
  for (std::string_view r : {"cpu", "memory", "pods"}) {
    const model::Value* capacity = At(node, "status.capacity");
    const std::string q = capacity != nullptr ? Text(capacity->Find(r)) : "";
    if (!q.empty()) out += " " + std::string(r) + "=" + q;
  }
  return out;
}

std::string ServiceSummary(const model::Value& svc) {
  std::string out = "type=" + OrNone(Text(At(svc, "spec.type")));
  const std::string ip = Text(At(svc, "spec.clusterIP"));
  if (!ip.empty()) out += " clusterIP=" + ip;
  if (const model::Value* ports = At(svc, "spec.ports");
      ports != nullptr && ports->kind() == model::Value::Kind::kArray && !ports->items().empty()) {
    out += " ports=";
    bool first = true;
    for (const model::Value& p : ports->items()) {
      if (!first) out += ",";
      first = false;
      const std::string protocol = Text(p.Find("protocol"));
      out += Text(p.Find("port")) + "/" + (protocol.empty() ? "TCP" : protocol);
    }
  }
  return out;
}

std::string EndpointsSummary(const model::Value& ep) {
  size_t ready = 0, not_ready = 0;
  if (const model::Value* subsets = ep.Find("subsets");
      subsets != nullptr && subsets->kind() == model::Value::Kind::kArray) {
    for (const model::Value& s : subsets->items()) {
      if (const model::Value* a = s.Find("addresses")) ready += a->items().size();
      if (const model::Value* a = s.Find("notReadyAddresses")) not_ready += a->items().size();
    }
  }
  return "ready=" + std::to_string(ready) + " notReady=" + std::to_string(not_ready);
}

}  // namespace

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
  }
  return "UNKNOWN";
}

const model::KindInfo* KindOfKey(std::string_view key) {
  if (!key.starts_with(kRegistry)) return nullptr;
  key.remove_prefix(kRegistry.size());
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos || slash == 0) return nullptr;
  return model::FindResource(key.substr(0, slash));
}

std::optional<model::Value> ObjectValue(std::string_view key, std::string_view value) {
  const model::KindInfo* kind = KindOfKey(key);
  if (kind == nullptr || value.empty()) return std::nullopt;
  if (!model::VerifyObject(*kind, value).ok()) return std::nullopt;
  return model::ToValue(*kind, value);
}

std::string Summarize(std::string_view key, std::string_view value) {
  const model::KindInfo* kind = KindOfKey(key);
  const std::string size = std::to_string(value.size()) + " bytes";
  if (kind == nullptr && key.starts_with(scheduler::kDecisionPrefix) && !value.empty()) {
    // "decision: node-2 (2 of 3 nodes feasible)", "decision: <none> (0 of 3 nodes feasible)"
    auto record = scheduler::ReadDecisionRecord(value);
    if (!record.ok()) return "<" + size + ", not a scheduling decision>";
    const auto& r = **record;
    const std::string node = r.node() && r.node()->size() > 0 ? r.node()->str() : "<none>";
    return "decision: " + node + " (" + std::to_string(r.feasible_nodes()) + " of " +
           std::to_string(r.num_all_nodes()) + " nodes feasible)";
  }
  if (kind == nullptr) return "<" + size + ">";
  std::optional<model::Value> v = ObjectValue(key, value);
  if (!v) {
    if (value.empty()) return "<unknown>";
    return "<" + size + ", not a valid " + std::string(kind->kind) + ">";
  }
  if (kind->kind == "Pod") return PodSummary(*v);
  if (kind->kind == "Event") return EventSummary(*v);
  if (kind->kind == "Node") return NodeSummary(*v);
  if (kind->kind == "Service") return ServiceSummary(*v);
  if (kind->kind == "Endpoints") return EndpointsSummary(*v);
  return std::string(kind->kind) + ", " + size;
}

}  // namespace podflow::replay
