#include "scheduler/framework/decision.h"

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

}  // namespace podflow::scheduler
