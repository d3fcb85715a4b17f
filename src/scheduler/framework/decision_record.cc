#include "scheduler/framework/decision_record.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <tuple>

namespace podflow::scheduler {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

// Persisted codes mirror PluginCode value for value.
static_assert(static_cast<int>(explain::VerdictCode::Success) == static_cast<int>(PluginCode::kSuccess));
static_assert(static_cast<int>(explain::VerdictCode::Unschedulable) ==
              static_cast<int>(PluginCode::kUnschedulable));
static_assert(static_cast<int>(explain::VerdictCode::UnschedulableAndUnresolvable) ==
              static_cast<int>(PluginCode::kUnschedulableAndUnresolvable));
static_assert(static_cast<int>(explain::VerdictCode::Error) == static_cast<int>(PluginCode::kError));

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

// "default/nginx" from "/registry/pods/default/nginx".
std::string PodName(std::string_view pod_key) {
  size_t slash = pod_key.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return std::string(pod_key);
  size_t ns = pod_key.rfind('/', slash - 1);
  return std::string(pod_key.substr(ns == std::string_view::npos ? 0 : ns + 1));
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

std::string DecisionKey(std::string_view namespace_, std::string_view name) {
  return std::string(kDecisionPrefix) + std::string(namespace_.empty() ? "default" : namespace_) + "/" +
         std::string(name);
}

std::string DecisionKeyOfPod(std::string_view pod_key) {
  return std::string(kDecisionPrefix) + PodName(pod_key);
}

std::string SchedulerRunKey(uint64_t run) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(run));
  return std::string(kSchedulerRunPrefix) + hex;
}

std::string EncodeDecisionRecord(const Decision& d, const DecisionContext& c) {
  FlatBufferBuilder fbb(1024);
  // Score plugins: the profile's score order, as every NodeScores has it.
  std::vector<Offset<explain::ScorePlugin>> plugins;
  if (!d.scores.empty()) {
    for (const PluginScore& p : d.scores[0].plugins) {
      plugins.push_back(explain::CreateScorePlugin(fbb, fbb.CreateString(p.plugin), p.weight));
    }
  }
  // Feasible nodes: the selected one first (the tie-break may have chosen
  // any of the best), then by total; equal totals keep the visit order.
  std::vector<size_t> order(d.scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool sa = d.scores[a].node == d.node, sb = d.scores[b].node == d.node;
    if (sa != sb) return sa;
    return d.scores[a].total > d.scores[b].total;
  });
  if (order.size() > kMaxRecordedScoredNodes) order.resize(kMaxRecordedScoredNodes);
  std::vector<Offset<explain::NodeScore>> scores;
  for (size_t i : order) {
    const NodeScores& s = d.scores[i];
    std::vector<int64_t> raw, normalized, weighted;
    for (const PluginScore& p : s.plugins) {
      raw.push_back(p.raw);
      normalized.push_back(p.normalized);
      weighted.push_back(p.weighted);
    }
    scores.push_back(explain::CreateNodeScore(fbb, fbb.CreateString(s.node), s.total, fbb.CreateVector(raw),
                                              fbb.CreateVector(normalized), fbb.CreateVector(weighted)));
  }
  if (d.scores.empty() && d.scheduled()) {
    // One feasible node: chosen unscored.
    scores.push_back(explain::CreateNodeScore(fbb, fbb.CreateString(d.node)));
  }
  // Rejected nodes: the first ones in visit order, and a count per verdict.
  std::vector<Offset<explain::RejectedNode>> rejected;
  using VerdictKey = std::tuple<int, std::string, std::vector<std::string>>;
  std::map<VerdictKey, int64_t> counts;
  for (const NodeVerdict& v : d.verdicts) {
    if (v.status.IsSuccess()) continue;
    const std::vector<std::string>& reasons = v.status.reasons();
    if (rejected.size() < kMaxRecordedRejectedNodes) {
      rejected.push_back(explain::CreateRejectedNode(fbb, fbb.CreateString(v.node),
                                                     static_cast<explain::VerdictCode>(v.status.code()),
                                                     fbb.CreateString(v.status.plugin()),
                                                     fbb.CreateVectorOfStrings(reasons)));
    }
    ++counts[VerdictKey(static_cast<int>(v.status.code()), std::string(v.status.plugin()), reasons)];
  }
  std::vector<std::pair<VerdictKey, int64_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<Offset<explain::RejectionCount>> rejection_counts;
  for (const auto& [key, count] : sorted) {
    rejection_counts.push_back(explain::CreateRejectionCount(
        fbb, static_cast<explain::VerdictCode>(std::get<0>(key)), fbb.CreateString(std::get<1>(key)),
        fbb.CreateVectorOfStrings(std::get<2>(key)), count));
  }
  std::vector<Offset<explain::CacheSource>> sources;
  int64_t revision = 0;
  for (const CacheSourceState& s : c.sources) {
    sources.push_back(explain::CreateCacheSource(fbb, fbb.CreateString(s.prefix), s.list_revision, s.revision));
    revision = std::max(revision, s.revision);
  }
  auto root = explain::CreateSchedulingDecision(
      fbb, fbb.CreateString(c.pod_key), fbb.CreateString(c.pod_uid), c.pod_mod_revision,
      fbb.CreateString(c.profile), fbb.CreateString(d.node), fbb.CreateString(d.message),
      fbb.CreateString(d.nominated_node), fbb.CreateVectorOfStrings(d.victims),
      static_cast<int64_t>(d.num_all_nodes), static_cast<int64_t>(d.feasible_nodes),
      static_cast<int64_t>(d.tied_nodes), d.tie_break_seed, static_cast<int64_t>(c.start_node_index),
      static_cast<int64_t>(d.next_start_node_index), revision, fbb.CreateVector(sources),
      fbb.CreateVector(plugins), fbb.CreateVector(scores), fbb.CreateVector(rejected),
      fbb.CreateVector(rejection_counts), c.run, c.seq, c.assumed_pods, c.decided_at_ms);
  fbb.Finish(root);
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

Result<const explain::SchedulingDecision*> ReadDecisionRecord(std::string_view bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (bytes.empty() || !verifier.VerifyBuffer<explain::SchedulingDecision>(nullptr)) {
    return Status::Invalid("not a scheduling decision record (" + std::to_string(bytes.size()) + " bytes)");
  }
  return flatbuffers::GetRoot<explain::SchedulingDecision>(bytes.data());
}

std::string EncodeSchedulerRun(uint64_t run, int64_t started_at_ms, std::string_view config_yaml) {
  FlatBufferBuilder fbb(256);
  fbb.Finish(explain::CreateSchedulerRun(fbb, run, started_at_ms, fbb.CreateString(config_yaml)));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

Result<const explain::SchedulerRun*> ReadSchedulerRun(std::string_view bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (bytes.empty() || !verifier.VerifyBuffer<explain::SchedulerRun>(nullptr)) {
    return Status::Invalid("not a scheduler run record (" + std::to_string(bytes.size()) + " bytes)");
  }
  return flatbuffers::GetRoot<explain::SchedulerRun>(bytes.data());
}

model::Value DecisionValue(const explain::SchedulingDecision& r) {
  using model::Value;
  auto str_or_null = [](const flatbuffers::String* s) {
    return s && s->size() > 0 ? Value::String(s->str()) : Value();
  };
  Value doc = Value::Object();
  doc.Set("pod", Value::String(PodName(Str(r.pod_key()))));
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
  head.push_back({"Pod:", PodName(Str(r.pod_key())) + " (uid " + Str(r.pod_uid()) + ", revision " +
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

std::string DescribeSchedulingSection(const explain::SchedulingDecision& r, size_t top) {
  std::string out = "Scheduling:\n";
  std::vector<std::vector<std::string>> head;
  head.push_back({"Profile:", Str(r.profile())});
  const std::string node = Str(r.node());
  head.push_back({"Node:", (node.empty() ? std::string("<none>") : node) + " (" +
                               std::to_string(r.feasible_nodes()) + " of " + std::to_string(r.num_all_nodes()) +
                               " nodes feasible)"});
  if (node.empty()) head.push_back({"Message:", Str(r.message())});
  out += Columns(head, "  ");
  if (r.scores() && r.scores()->size() > 0 && Size(r.score_plugins()) > 0) {
    out += "  Scores:\n";
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header{"NODE", "TOTAL"};
    for (const explain::ScorePlugin* p : *r.score_plugins()) {
      header.push_back(Str(p->name()) + "(x" + std::to_string(p->weight()) + ")");
    }
    rows.push_back(std::move(header));
    for (size_t i = 0; i < r.scores()->size() && i < top; ++i) {
      const explain::NodeScore* s = r.scores()->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::vector<std::string> row{Str(s->node()), std::to_string(s->total())};
      for (size_t p = 0; p < Size(r.score_plugins()); ++p) row.push_back(std::to_string(At(s->weighted(), p)));
      rows.push_back(std::move(row));
    }
    out += Columns(rows, "    ");
  }
  if (r.rejection_counts() && r.rejection_counts()->size() > 0) {
    out += "  Filtered Out:\n";
    for (const explain::RejectionCount* c : *r.rejection_counts()) out += "    " + FilteredOutLine(*c) + "\n";
  }
  return out;
}

}  // namespace podflow::scheduler
