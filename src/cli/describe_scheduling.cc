// describe pod's Scheduling section: the scheduler's stored decision record
// (scheduler::ReadDecisionRecord) in describe's layout.
#include "cli/describe.h"
#include "cli/describe_util.h"
#include "cli/print_util.h"

namespace podflow::cli {
namespace {

std::string Text(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// The weighted score of plugin `p` in a recorded node's scores (0 when not
// recorded).
int64_t WeightedScore(const explain::NodeScore& node, size_t p) {
  const auto* weighted = node.weighted();
  return weighted != nullptr && p < weighted->size()
             ? weighted->Get(static_cast<flatbuffers::uoffset_t>(p))
             : 0;
}

// "3 Insufficient cpu (NodeResourcesFit)".
std::string RejectionLine(const explain::RejectionCount& c) {
  std::vector<std::string> reasons;
  if (c.reasons() != nullptr) {
    for (const flatbuffers::String* r : *c.reasons()) reasons.push_back(r->str());
  }
  return std::to_string(c.count()) + " " + Join(reasons, ", ") + " (" + Text(c.plugin()) + ")";
}

}  // namespace

std::string DescribeSchedulingSection(const explain::SchedulingDecision& r, size_t top) {
  DescribeWriter w;
  w.Write(0, "Scheduling:\n");
  w.Write(1, "Profile:\t" + Text(r.profile()) + "\n");
  const std::string node = Text(r.node());
  w.Write(1, "Node:\t" + (node.empty() ? std::string("<none>") : node) + " (" +
                 std::to_string(r.feasible_nodes()) + " of " + std::to_string(r.num_all_nodes()) +
                 " nodes feasible)\n");
  if (node.empty()) w.Write(1, "Message:\t" + Text(r.message()) + "\n");
  const size_t plugins = r.score_plugins() != nullptr ? r.score_plugins()->size() : 0;
  if (r.scores() != nullptr && r.scores()->size() > 0 && plugins > 0) {
    w.Write(1, "Scores:\n");
    std::string header = "NODE\tTOTAL";
    for (const explain::ScorePlugin* p : *r.score_plugins()) {
      header += "\t" + Text(p->name()) + "(x" + std::to_string(p->weight()) + ")";
    }
    w.Write(2, header + "\n");
    for (size_t i = 0; i < r.scores()->size() && i < top; ++i) {
      const explain::NodeScore& s = *r.scores()->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string row = Text(s.node()) + "\t" + std::to_string(s.total());
      for (size_t p = 0; p < plugins; ++p) row += "\t" + std::to_string(WeightedScore(s, p));
      w.Write(2, row + "\n");
    }
  }
  if (r.rejection_counts() != nullptr && r.rejection_counts()->size() > 0) {
    w.Write(1, "Filtered Out:\n");
    for (const explain::RejectionCount* c : *r.rejection_counts()) {
      w.Write(2, RejectionLine(*c) + "\n");
    }
  }
  return w.String();
}

}  // namespace podflow::cli
