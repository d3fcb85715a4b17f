// Printing replay results: aligned tables, JSON and YAML.
#include <algorithm>

#include "base/logging.h"
#include "replay/replay.h"

namespace podflow::replay {

namespace {

using model::Value;

constexpr size_t kMaxCell = 72;  // table cells of field values are cut here

// kubectl's layout: columns padded to the widest cell plus three spaces; the
// last column is not padded.
std::string Table(const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size());
  for (size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t i = 0; i < cells.size(); ++i) {
      l += cells[i];
      if (i + 1 < cells.size()) l.append(width[i] - cells[i].size() + 3, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
  return out;
}

std::string Cut(std::string s) {
  if (s.size() > kMaxCell) s = s.substr(0, kMaxCell - 3) + "...";
  return s;
}

std::string OrNone(const std::string& s) { return s.empty() ? "<none>" : s; }

std::string Since(const std::optional<int64_t>& ms) {
  if (!ms) return "-";
  if (*ms < 10'000) return "+" + std::to_string(*ms) + "ms";
  const int64_t s = *ms / 1000, rest = *ms % 1000;
  std::string frac = std::to_string(rest);
  frac.insert(0, 3 - frac.size(), '0');
  return "+" + std::to_string(s) + "." + frac + "s";
}

std::string Print(const Value& v, Output output) {
  if (output == Output::kYaml) return model::ToYaml(v);
  return model::ToJson(v, 2) + "\n";
}

Value Object(std::string_view key, std::string_view value) {
  std::optional<Value> v = ObjectValue(key, value);
  return v ? std::move(*v) : Value();
}

}  // namespace

std::string RenderEvents(const std::vector<Event>& events, Output output) {
  if (output == Output::kTable) {
    std::vector<std::vector<std::string>> rows;
    rows.reserve(events.size());
    for (const Event& e : events) {
      rows.push_back({std::to_string(e.revision.value()), std::string(EventTypeName(e.type)), e.key,
                      OrNone(e.writer), e.summary});
    }
    return Table({"REVISION", "TYPE", "KEY", "WRITER", "SUMMARY"}, rows);
  }
  Value list = Value::Array();
  for (const Event& e : events) {
    Value item = Value::Object();
    item.Set("revision", Value::Int(e.revision.value()));
    item.Set("type", Value::String(std::string(EventTypeName(e.type))));
    item.Set("key", Value::String(e.key));
    item.Set("writer", Value::String(e.writer));
    item.Set("committed_at_ms", Value::Int(e.committed_at_ms));
    item.Set("summary", Value::String(e.summary));
    item.Set("object", e.type == EventType::kDeleted ? Value() : Object(e.key, e.value));
    list.Append(std::move(item));
  }
  return Print(list, output);
}

std::string RenderState(const State& state, Output output) {
  if (output == Output::kTable) {
    std::vector<std::vector<std::string>> rows;
    rows.reserve(state.entries.size());
    for (const StateEntry& e : state.entries) {
      rows.push_back({e.kv.key, std::to_string(e.kv.mod_revision.value()), e.summary});
    }
    return Table({"KEY", "REVISION", "SUMMARY"}, rows);
  }
  Value list = Value::Object();
  list.Set("apiVersion", Value::String("v1"));
  list.Set("kind", Value::String("List"));
  Value items = Value::Array();
  for (const StateEntry& e : state.entries) {
    std::optional<Value> v = ObjectValue(e.kv.key, e.kv.value);
    if (!v) {
      Logger("replay")->warn("{}: not a known object ({}), left out", e.kv.key, e.summary);
      continue;
    }
    items.Append(std::move(*v));
  }
  list.Set("items", std::move(items));
  Value meta = Value::Object();
  meta.Set("resourceVersion", Value::String(std::to_string(state.revision.value())));
  list.Set("metadata", std::move(meta));
  return Print(list, output);
}

std::string RenderTimeline(const PodTimeline& t, Output output) {
  if (output == Output::kTable) {
    std::vector<std::vector<std::string>> rows;
    for (const TimelineEntry& e : t.entries) {
      const std::string type = e.is_event ? "EVENT" : std::string(EventTypeName(e.type));
      std::vector<std::string> row = {std::to_string(e.revision.value()),
                                      Since(e.since_creation_ms), OrNone(e.writer), type, ""};
      if (e.is_event || e.type != EventType::kModified) {
        row[4] = e.summary;
        rows.push_back(std::move(row));
        continue;
      }
      if (e.changes.empty()) {
        row[4] = "(no field changed) " + e.summary;
        rows.push_back(std::move(row));
        continue;
      }
      for (size_t i = 0; i < e.changes.size(); ++i) {
        const FieldChange& c = e.changes[i];
        std::string cell = c.path + ": " + Cut(c.before) + " -> " + Cut(c.after);
        if (i == 0) {
          row[4] = std::move(cell);
          rows.push_back(row);
        } else {
          rows.push_back({"", "", "", "", std::move(cell)});
        }
      }
    }
    return Table({"REVISION", "TIME", "WRITER", "TYPE", "CHANGE"}, rows);
  }
  Value doc = Value::Object();
  doc.Set("pod", Value::String(t.namespace_ + "/" + t.name));
  doc.Set("key", Value::String(t.key));
  Value entries = Value::Array();
  for (const TimelineEntry& e : t.entries) {
    Value item = Value::Object();
    item.Set("revision", Value::Int(e.revision.value()));
    item.Set("type", Value::String(std::string(EventTypeName(e.type))));
    item.Set("key", Value::String(e.key));
    item.Set("event", Value::Bool(e.is_event));
    item.Set("writer", Value::String(e.writer));
    item.Set("committed_at_ms", Value::Int(e.committed_at_ms));
    item.Set("since_creation_ms", e.since_creation_ms ? Value::Int(*e.since_creation_ms) : Value());
    item.Set("summary", Value::String(e.summary));
    Value changes = Value::Array();
    for (const FieldChange& c : e.changes) {
      Value change = Value::Object();
      change.Set("path", Value::String(c.path));
      change.Set("from", Value::String(c.before));
      change.Set("to", Value::String(c.after));
      changes.Append(std::move(change));
    }
    item.Set("changes", std::move(changes));
    entries.Append(std::move(item));
  }
  doc.Set("entries", std::move(entries));
  return Print(doc, output);
}

std::string RenderRollout(const RolloutTimeline& rollout, Output output) {
  if (output == Output::kTable) {
    std::vector<std::vector<std::string>> rows;
    const int64_t start = rollout.steps.empty() ? 0 : rollout.steps.front().committed_at_ms;
    for (const RolloutStep& step : rollout.steps) {
      std::string sets;
      for (const RolloutSet& set : step.sets) {
        sets += (sets.empty() ? "" : ", ") + set.name +
                (set.revision.empty() ? "" : "(r" + set.revision + ")") + "=" +
                std::to_string(set.replicas) + "/" + std::to_string(set.ready) + "/" +
                std::to_string(set.available);
      }
      const std::optional<int64_t> since =
          start > 0 && step.committed_at_ms > 0
              ? std::optional<int64_t>(step.committed_at_ms - start)
              : std::nullopt;
      rows.push_back({std::to_string(step.revision.value()), Since(since), OrNone(step.writer),
                      (step.deployment_revision.empty() ? std::string("-") : "r" + step.deployment_revision) + " " + std::to_string(step.desired) +
                          "/" + std::to_string(step.updated) + "/" + std::to_string(step.ready) +
                          "/" + std::to_string(step.available),
                      OrNone(sets)});
    }
    return Table({"REVISION", "TIME", "WRITER", "DEPLOYMENT (REV DESIRED/UPDATED/READY/AVAILABLE)",
                  "REPLICASETS (NAME(REV)=REPLICAS/READY/AVAILABLE)"},
                 rows);
  }
  Value doc = Value::Object();
  doc.Set("deployment", Value::String(rollout.namespace_ + "/" + rollout.name));
  Value steps = Value::Array();
  for (const RolloutStep& step : rollout.steps) {
    Value item = Value::Object();
    item.Set("revision", Value::Int(step.revision.value()));
    item.Set("committed_at_ms", Value::Int(step.committed_at_ms));
    item.Set("writer", Value::String(step.writer));
    item.Set("deploymentRevision", Value::String(step.deployment_revision));
    item.Set("desired", Value::Int(step.desired));
    item.Set("updated", Value::Int(step.updated));
    item.Set("ready", Value::Int(step.ready));
    item.Set("available", Value::Int(step.available));
    Value sets = Value::Array();
    for (const RolloutSet& set : step.sets) {
      Value s = Value::Object();
      s.Set("name", Value::String(set.name));
      s.Set("revision", Value::String(set.revision));
      s.Set("replicas", Value::Int(set.replicas));
      s.Set("ready", Value::Int(set.ready));
      s.Set("available", Value::Int(set.available));
      sets.Append(std::move(s));
    }
    item.Set("replicaSets", std::move(sets));
    steps.Append(std::move(item));
  }
  doc.Set("steps", std::move(steps));
  return Print(doc, output);
}

}  // namespace podflow::replay
