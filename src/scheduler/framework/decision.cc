#include "scheduler/framework/decision.h"

#include <algorithm>
#include <type_traits>

namespace podflow::scheduler {

std::string Decision::Explain() const {
  std::string out;
  if (scheduled()) {
    out += "scheduled on " + node + " (" + std::to_string(feasible_nodes) + " feasible of " +
           std::to_string(num_all_nodes) + " nodes";
    if (tied_nodes > 1) out += ", " + std::to_string(tied_nodes) + " tied";
    out += ")\n";
  } else {
    out += "unschedulable: " + message + "\n";
  }
  for (const NodeVerdict& v : verdicts) {
    out += "  filter " + v.node + ": " + v.status.ToString() + "\n";
  }
  for (const NodeScores& s : scores) {
    out += "  score " + s.node + ": " + std::to_string(s.total);
    for (const PluginScore& p : s.plugins) {
      out += " ";
      out += p.plugin;
      out += "=" + std::to_string(p.raw) + "/" + std::to_string(p.normalized) + "*" +
             std::to_string(p.weight) + "=" + std::to_string(p.weighted);
    }
    out += "\n";
  }
  return out;
}

std::vector<std::string> DecisionDifferences(const Decision& a, const Decision& b, size_t max_lines) {
  std::vector<std::string> out;
  auto differ = [&](const std::string& field, const auto& x, const auto& y) {
    if (x == y || out.size() >= max_lines) return;
    auto text = [](const auto& v) {
      if constexpr (std::is_convertible_v<decltype(v), std::string_view>) {
        return std::string(v);
      } else {
        return std::to_string(v);
      }
    };
    out.push_back(field + ": " + text(x) + " -> " + text(y));
  };
  differ("node", a.node, b.node);
  differ("numAllNodes", a.num_all_nodes, b.num_all_nodes);
  differ("feasibleNodes", a.feasible_nodes, b.feasible_nodes);
  differ("verdicts", a.verdicts.size(), b.verdicts.size());
  for (size_t i = 0; i < std::min(a.verdicts.size(), b.verdicts.size()); ++i) {
    const std::string at = "verdicts[" + std::to_string(i) + "]";
    differ(at + ".node", a.verdicts[i].node, b.verdicts[i].node);
    differ(at + ".status", a.verdicts[i].status.ToString(), b.verdicts[i].status.ToString());
  }
  differ("scores", a.scores.size(), b.scores.size());
  for (size_t i = 0; i < std::min(a.scores.size(), b.scores.size()); ++i) {
    const NodeScores& x = a.scores[i];
    const NodeScores& y = b.scores[i];
    const std::string at = "scores[" + std::to_string(i) + "]";
    differ(at + ".node", x.node, y.node);
    differ(at + ".total", x.total, y.total);
    differ(at + ".plugins", x.plugins.size(), y.plugins.size());
    for (size_t p = 0; p < std::min(x.plugins.size(), y.plugins.size()); ++p) {
      const std::string pat = at + "." + std::string(x.plugins[p].plugin);
      differ(pat + ".plugin", x.plugins[p].plugin, y.plugins[p].plugin);
      differ(pat + ".raw", x.plugins[p].raw, y.plugins[p].raw);
      differ(pat + ".normalized", x.plugins[p].normalized, y.plugins[p].normalized);
      differ(pat + ".weighted", x.plugins[p].weighted, y.plugins[p].weighted);
    }
  }
  differ("tiedNodes", a.tied_nodes, b.tied_nodes);
  differ("tieBreakSeed", a.tie_break_seed, b.tie_break_seed);
  differ("nextStartNodeIndex", a.next_start_node_index, b.next_start_node_index);
  differ("nominatedNode", a.nominated_node, b.nominated_node);
  differ("victims", a.victims.size(), b.victims.size());
  for (size_t i = 0; i < std::min(a.victims.size(), b.victims.size()); ++i) {
    differ("victims[" + std::to_string(i) + "]", a.victims[i], b.victims[i]);
  }
  differ("clearedNominations", a.cleared_nominations.size(), b.cleared_nominations.size());
  for (size_t i = 0; i < std::min(a.cleared_nominations.size(), b.cleared_nominations.size()); ++i) {
    differ("clearedNominations[" + std::to_string(i) + "]", a.cleared_nominations[i], b.cleared_nominations[i]);
  }
  differ("clearNomination", a.clear_nomination ? 1 : 0, b.clear_nomination ? 1 : 0);
  differ("message", a.message, b.message);
  return out;
}

}  // namespace podflow::scheduler
