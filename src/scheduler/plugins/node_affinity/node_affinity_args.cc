// NodeAffinityArgs: addedAffinity parsed and checked as kube-scheduler's
// ValidateNodeAffinityArgs checks it (nodeaffinity.NewNodeSelector /
// NewPreferredSchedulingTerms).
#include <charconv>

#include "scheduler/plugins/args_yaml.h"
#include "scheduler/plugins/node_affinity/node_affinity.h"

namespace podflow::scheduler::plugins {
namespace {

using Op = api::NodeSelectorOperator;

bool ParseOp(std::string_view s, Op& op) {
  if (s == "In") op = Op::In;
  else if (s == "NotIn") op = Op::NotIn;
  else if (s == "Exists") op = Op::Exists;
  else if (s == "DoesNotExist") op = Op::DoesNotExist;
  else if (s == "Gt") op = Op::Gt;
  else if (s == "Lt") op = Op::Lt;
  else return false;
  return true;
}

bool IsInteger(std::string_view s) {
  if (s.starts_with('+') || s.starts_with('-')) s.remove_prefix(1);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

Result<NodeSelectorRequirement> Requirement(const YAML::Node& node, const std::string& path,
                                            bool field) {
  PODFLOW_RETURN_IF_ERROR(args::CheckMap(node, path, {"key", "operator", "values"}));
  if (args::Absent(node)) return Status::Invalid(path + ": must be a map");
  NodeSelectorRequirement r;
  if (args::Absent(node["key"])) return Status::Invalid(args::Child(path, "key") + ": required");
  auto key = args::String(node["key"], args::Child(path, "key"));
  if (!key.ok()) return key.status();
  r.key = std::move(key).value();
  if (args::Absent(node["operator"])) return Status::Invalid(args::Child(path, "operator") + ": required");
  auto op = args::String(node["operator"], args::Child(path, "operator"));
  if (!op.ok()) return op.status();
  if (!ParseOp(*op, r.op)) {
    return Status::Invalid(args::Child(path, "operator") + ": unsupported value \"" + *op + "\"");
  }
  auto values = args::Strings(node["values"], args::Child(path, "values"));
  if (!values.ok()) return values.status();
  r.values = std::move(values).value();
  const std::string values_path = args::Child(path, "values");
  if (field) {
    if (r.key != "metadata.name") {
      return Status::Invalid(args::Child(path, "key") + ": \"" + r.key +
                             "\": not a valid field selector key");
    }
    if (r.op != Op::In && r.op != Op::NotIn) {
      return Status::Invalid(args::Child(path, "operator") + ": \"" + *op +
                             "\": not a valid selector operator");
    }
    if (r.values.size() != 1) {
      return Status::Invalid(values_path + ": must have one element");
    }
    return r;
  }
  switch (r.op) {
    case Op::In:
    case Op::NotIn:
      if (r.values.empty()) {
        return Status::Invalid(values_path + ": must be specified when `operator` is 'In' or 'NotIn'");
      }
      break;
    case Op::Exists:
    case Op::DoesNotExist:
      if (!r.values.empty()) {
        return Status::Invalid(values_path +
                               ": may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
      }
      break;
    case Op::Gt:
    case Op::Lt:
      if (r.values.size() != 1) return Status::Invalid(values_path + ": must have one element");
      if (!IsInteger(r.values[0])) {
        return Status::Invalid(args::Index(values_path, 0) + ": \"" + r.values[0] +
                               "\": must be an integer");
      }
      break;
    case Op::Unset:
      break;
  }
  return r;
}

Result<std::vector<NodeSelectorRequirement>> Requirements(const YAML::Node& list,
                                                          const std::string& path, bool field) {
  std::vector<NodeSelectorRequirement> out;
  if (args::Absent(list)) return out;
  if (!list.IsSequence()) return Status::Invalid(path + ": must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    auto r = Requirement(list[i], args::Index(path, i), field);
    if (!r.ok()) return r.status();
    out.push_back(std::move(r).value());
  }
  return out;
}

Result<NodeSelectorTerm> Term(const YAML::Node& node, const std::string& path) {
  PODFLOW_RETURN_IF_ERROR(args::CheckMap(node, path, {"matchExpressions", "matchFields"}));
  NodeSelectorTerm term;
  if (args::Absent(node)) return term;
  auto expressions = Requirements(node["matchExpressions"], args::Child(path, "matchExpressions"), false);
  if (!expressions.ok()) return expressions.status();
  auto fields = Requirements(node["matchFields"], args::Child(path, "matchFields"), true);
  if (!fields.ok()) return fields.status();
  term.match_expressions = std::move(expressions).value();
  term.match_fields = std::move(fields).value();
  return term;
}

}  // namespace

Result<NodeAffinity> NodeAffinity::FromArgs(const YAML::Node& node) {
  NodeAffinity plugin;
  if (args::Absent(node)) return plugin;
  PODFLOW_RETURN_IF_ERROR(args::CheckMap(node, "", {"addedAffinity"}));
  const YAML::Node added = node["addedAffinity"];
  const std::string path = "addedAffinity";
  PODFLOW_RETURN_IF_ERROR(args::CheckMap(added, path,
                                         {"requiredDuringSchedulingIgnoredDuringExecution",
                                          "preferredDuringSchedulingIgnoredDuringExecution"}));
  if (args::Absent(added)) return plugin;

  const YAML::Node required = added["requiredDuringSchedulingIgnoredDuringExecution"];
  const std::string required_path = args::Child(path, "requiredDuringSchedulingIgnoredDuringExecution");
  PODFLOW_RETURN_IF_ERROR(args::CheckMap(required, required_path, {"nodeSelectorTerms"}));
  if (!args::Absent(required)) {
    NodeSelector selector;
    const YAML::Node terms = required["nodeSelectorTerms"];
    const std::string terms_path = args::Child(required_path, "nodeSelectorTerms");
    if (!args::Absent(terms)) {
      if (!terms.IsSequence()) return Status::Invalid(terms_path + ": must be a list");
      for (size_t i = 0; i < terms.size(); ++i) {
        auto term = Term(terms[i], args::Index(terms_path, i));
        if (!term.ok()) return term.status();
        selector.terms.push_back(std::move(term).value());
      }
    }
    plugin.added_required_ = std::move(selector);
  }

  const YAML::Node preferred = added["preferredDuringSchedulingIgnoredDuringExecution"];
  const std::string preferred_path = args::Child(path, "preferredDuringSchedulingIgnoredDuringExecution");
  if (!args::Absent(preferred)) {
    if (!preferred.IsSequence()) return Status::Invalid(preferred_path + ": must be a list");
    for (size_t i = 0; i < preferred.size(); ++i) {
      const std::string at = args::Index(preferred_path, i);
      PODFLOW_RETURN_IF_ERROR(args::CheckMap(preferred[i], at, {"weight", "preference"}));
      PreferredSchedulingTerm t;
      if (!args::Absent(preferred[i]) && !args::Absent(preferred[i]["weight"])) {
        auto weight = args::Int(preferred[i]["weight"], args::Child(at, "weight"));
        if (!weight.ok()) return weight.status();
        t.weight = static_cast<int32_t>(*weight);
      }
      auto term = Term(args::Absent(preferred[i]) ? YAML::Node() : preferred[i]["preference"],
                       args::Child(at, "preference"));
      if (!term.ok()) return term.status();
      t.preference = std::move(term).value();
      if (t.weight != 0) plugin.added_preferred_.push_back(std::move(t));
    }
  }
  return plugin;
}

}  // namespace podflow::scheduler::plugins
