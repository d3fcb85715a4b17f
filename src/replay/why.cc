// podflow-replay --why: a stored scheduling decision record
// (scheduler::ReadDecisionRecord) as a JSON document and as text.
#include <algorithm>

#include "replay/replay.h"
#include "scheduler/scheduler.h"

namespace podflow::replay {
namespace {

using flatbuffers::Offset;

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

std::string JoinReasons(const flatbuffers::Vector<Offset<flatbuffers::String>>* reasons) {
  std::string out;
  if (reasons == nullptr) return out;
  for (const auto* r : *reasons) {
    if (!out.empty()) out += ", ";
    out += r->str();
  }
  return out;
}

int64_t At(const flatbuffers::Vector<int64_t>* v, size_t i) {
  return v != nullptr && i < v->size() ? v->Get(static_cast<flatbuffers::uoffset_t>(i)) : 0;
}

template <typename T>
size_t Size(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

// Left-aligned columns separated by two spaces; every row is prefixed.
std::string Columns(const std::vector<std::vector<std::string>>& rows, std::string_view indent) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size());
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string FilteredOutLine(const explain::RejectionCount& c) {
  std::string line = std::to_string(c.count()) + " " + JoinReasons(c.reasons());
  line += " (" + Str(c.plugin()) + ")";
  return line;
}

}  // namespace

model::Value DecisionValue(const explain::SchedulingDecision& r) {
  using model::Value;
  auto str_or_null = [](const flatbuffers::String* s) {
    return s && s->size() > 0 ? Value::String(s->str()) : Value();
  };
  Value doc = Value::Object();
  doc.Set("pod", Value::String(scheduler::PodNameOfKey(Str(r.pod_key()))));
  doc.Set("uid", Value::String(Str(r.pod_uid())));
  doc.Set("profile", Value::String(Str(r.profile())));
  doc.Set("podRevision", Value::Int(r.pod_mod_revision()));
  doc.Set("revision", Value::Int(r.revision()));
  doc.Set("selected", str_or_null(r.node()));
  doc.Set("message", str_or_null(r.message()));
  doc.Set("nominatedNode", str_or_null(r.nominated_node()));
  doc.Set("allNodes", Value::Int(r.num_all_nodes()));
  doc.Set("feasibleNodes", Value::Int(r.feasible_nodes()));
  doc.Set("tiedNodes", Value::Int(r.tied_nodes()));
  // As a string: JSON numbers lose 64-bit precision in many readers.
  doc.Set("tieBreakSeed", Value::String(std::to_string(r.tie_break_seed())));
  doc.Set("startNodeIndex", Value::Int(r.start_node_index()));
  Value nodes = Value::Array();
  const auto* plugins = r.score_plugins();
  if (r.scores()) {
    for (const explain::NodeScore* s : *r.scores()) {
      Value node = Value::Object();
      node.Set("name", Value::String(Str(s->node())));
      node.Set("passed", Value::Bool(true));
      node.Set("plugin", Value());
      node.Set("reason", Value());
      Value scores = Value::Array();
      for (size_t p = 0; p < Size(plugins) && p < Size(s->weighted()); ++p) {
        const explain::ScorePlugin* plugin = plugins->Get(static_cast<flatbuffers::uoffset_t>(p));
        Value score = Value::Object();
        score.Set("plugin", Value::String(Str(plugin->name())));
        score.Set("raw", Value::Int(At(s->raw(), p)));
        score.Set("normalized", Value::Int(At(s->normalized(), p)));
        score.Set("weight", Value::Int(plugin->weight()));
        score.Set("weighted", Value::Int(At(s->weighted(), p)));
        scores.Append(std::move(score));
      }
      node.Set("scores", std::move(scores));
      node.Set("total", Value::Int(s->total()));
      nodes.Append(std::move(node));
    }
  }
  if (r.rejected()) {
    for (const explain::RejectedNode* v : *r.rejected()) {
      Value node = Value::Object();
      node.Set("name", Value::String(Str(v->node())));
      node.Set("passed", Value::Bool(false));
      node.Set("plugin", Value::String(Str(v->plugin())));
      node.Set("reason", Value::String(JoinReasons(v->reasons())));
      node.Set("scores", Value::Array());
      node.Set("total", Value());
      nodes.Append(std::move(node));
    }
  }
  doc.Set("nodes", std::move(nodes));
  Value filtered = Value::Array();
  if (r.rejection_counts()) {
    for (const explain::RejectionCount* c : *r.rejection_counts()) {
      Value entry = Value::Object();
      entry.Set("plugin", Value::String(Str(c->plugin())));
      entry.Set("reason", Value::String(JoinReasons(c->reasons())));
      entry.Set("count", Value::Int(c->count()));
      filtered.Append(std::move(entry));
    }
  }
  doc.Set("filteredOut", std::move(filtered));
  return doc;
}

std::string DecisionText(const explain::SchedulingDecision& r) {
  std::string out;
  const std::string node = Str(r.node());
  std::vector<std::vector<std::string>> head;
  head.push_back({"Pod:", scheduler::PodNameOfKey(Str(r.pod_key())) + " (uid " + Str(r.pod_uid()) + ", revision " +
                              std::to_string(r.pod_mod_revision()) + ")"});
  head.push_back({"Profile:", Str(r.profile())});
  head.push_back({"Decided on:", "revision " + std::to_string(r.revision())});
  std::string selected = node.empty() ? "<none>" : node;
  selected += " (" + std::to_string(r.feasible_nodes()) + " feasible of " + std::to_string(r.num_all_nodes()) +
              " nodes";
  if (r.tied_nodes() > 1) selected += ", " + std::to_string(r.tied_nodes()) + " tied";
  selected += ")";
  head.push_back({"Selected:", selected});
  if (node.empty()) head.push_back({"Message:", Str(r.message())});
  if (r.nominated_node() && r.nominated_node()->size() > 0) {
    head.push_back({"Nominated:", Str(r.nominated_node())});
  }
  head.push_back({"Tie-break:", "seed " + std::to_string(r.tie_break_seed()) + ", start node index " +
                                    std::to_string(r.start_node_index())});
  out += Columns(head, "");
  // Scores: one column per plugin, "weighted (raw R, normalized N, weight W)".
  if (r.scores() && r.scores()->size() > 0) {
    out += "Scores:\n";
    for (const explain::NodeScore* s : *r.scores()) {
      out += "  " + Str(s->node()) + "  total " + std::to_string(s->total()) + "\n";
      std::vector<std::vector<std::string>> rows;
      for (size_t p = 0; p < Size(r.score_plugins()) && p < Size(s->weighted()); ++p) {
        const explain::ScorePlugin* plugin = r.score_plugins()->Get(static_cast<flatbuffers::uoffset_t>(p));
        rows.push_back({Str(plugin->name()), std::to_string(At(s->weighted(), p)),
                        "raw " + std::to_string(At(s->raw(), p)),
                        "normalized " + std::to_string(At(s->normalized(), p)),
                        "weight " + std::to_string(plugin->weight())});
      }
      out += Columns(rows, "    ");
    }
    if (static_cast<int64_t>(r.scores()->size()) < r.feasible_nodes()) {
      out += "  (" + std::to_string(r.feasible_nodes() - static_cast<int64_t>(r.scores()->size())) +
             " more feasible nodes not recorded)\n";
    }
  }
  if (r.rejected() && r.rejected()->size() > 0) {
    out += "Filtered out:\n";
    std::vector<std::vector<std::string>> rows;
    for (const explain::RejectedNode* v : *r.rejected()) {
      rows.push_back({Str(v->node()), Str(v->plugin()), JoinReasons(v->reasons())});
    }
    out += Columns(rows, "  ");
    int64_t total = 0;
    if (r.rejection_counts()) {
      for (const explain::RejectionCount* c : *r.rejection_counts()) total += c->count();
    }
    if (total > static_cast<int64_t>(r.rejected()->size())) {
      out += "  (" + std::to_string(total - static_cast<int64_t>(r.rejected()->size())) +
             " more rejected nodes not recorded)\n";
    }
  }
  if (r.rejection_counts() && r.rejection_counts()->size() > 0) {
    out += "Filtered out by reason:\n";
    for (const explain::RejectionCount* c : *r.rejection_counts()) out += "  " + FilteredOutLine(*c) + "\n";
  }
  return out;
}

}  // namespace podflow::replay
