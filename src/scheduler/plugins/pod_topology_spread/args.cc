// PodTopologySpreadArgs, checked as kube-scheduler's
// ValidatePodTopologySpreadArgs does; errors name the field as
// field.ErrorList prints them.
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "base/yaml_reader.h"
#include "scheduler/plugins/pod_topology_spread/pod_topology_spread.h"

namespace podflow::scheduler::plugins {
namespace {

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// metav1validation.ValidateLabelName: a qualified name, [prefix/]name.
std::string LabelNameError(const std::string& v) {
  std::string prefix, name = v;
  if (auto slash = v.find('/'); slash != std::string::npos) {
    prefix = v.substr(0, slash);
    name = v.substr(slash + 1);
    if (prefix.empty()) return "prefix part must be non-empty";
    if (prefix.size() > 253) return "prefix part must be no more than 253 characters";
    for (size_t i = 0; i < prefix.size(); ++i) {
      char c = prefix[i];
      bool ok = (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c))) ||
                ((c == '-' || c == '.') && i > 0 && i + 1 < prefix.size());
      if (!ok) return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
    }
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part must be no more than 63 characters";
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = IsAlnum(c) || ((c == '-' || c == '_' || c == '.') && i > 0 && i + 1 < name.size());
    if (!ok) return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return "";
}

std::string Q(const std::string& s) { return "\"" + s + "\""; }

struct Errors {
  std::vector<std::string> list;
  void Add(std::string e) { list.push_back(std::move(e)); }
  std::string Join() const {
    std::string out;
    for (const auto& e : list) out += (out.empty() ? "" : "; ") + e;
    return out;
  }
};

// Reads one of `allowed` from a scalar; records an error otherwise.
template <typename E>
std::optional<E> Enum(const YAML::Node& node, const std::string& path,
                      std::vector<std::pair<std::string, E>> allowed, Errors& errors) {
  std::string supported;
  for (const auto& [name, _] : allowed) supported += (supported.empty() ? "" : ", ") + Q(name);
  if (!node.IsScalar()) {
    errors.Add(path + ": Invalid value: expected a string");
    return std::nullopt;
  }
  const std::string v = node.Scalar();
  for (const auto& [name, e] : allowed) {
    if (v == name) return e;
  }
  errors.Add(path + ": Unsupported value: " + Q(v) + ": supported values: " + supported);
  return std::nullopt;
}

std::optional<int32_t> Int(const YAML::Node& node, const std::string& path, Errors& errors) {
  std::optional<int32_t> v = yaml::As<int32_t>(node);
  if (!v) errors.Add(path + ": Invalid value: expected an integer");
  return v;
}

const std::vector<std::pair<std::string, api::NodeInclusionPolicy>> kPolicies = {
    {"Honor", api::NodeInclusionPolicy::Honor}, {"Ignore", api::NodeInclusionPolicy::Ignore}};

std::string ActionName(api::UnsatisfiableConstraintAction a) {
  return a == api::UnsatisfiableConstraintAction::ScheduleAnyway ? "ScheduleAnyway" : "DoNotSchedule";
}

TopologySpreadConstraint ParseConstraint(const YAML::Node& node, const std::string& p,
                                         Errors& errors) {
  TopologySpreadConstraint c;
  c.max_skew = 0;  // required
  bool has_when = false;
  if (!node.IsMap()) {
    errors.Add(p + ": Invalid value: expected a map");
    return c;
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& v = entry.second;
    const std::string f = p + "." + key;
    if (key == "maxSkew") {
      if (auto i = Int(v, f, errors)) c.max_skew = *i;
    } else if (key == "topologyKey") {
      c.topology_key = v.IsScalar() ? v.Scalar() : "";
    } else if (key == "whenUnsatisfiable") {
      if (v.IsScalar() && v.Scalar().empty()) continue;
      has_when = true;
      if (auto e = Enum<api::UnsatisfiableConstraintAction>(
              v, f,
              {{"DoNotSchedule", api::UnsatisfiableConstraintAction::DoNotSchedule},
               {"ScheduleAnyway", api::UnsatisfiableConstraintAction::ScheduleAnyway}},
              errors)) {
        c.when_unsatisfiable = *e;
      }
    } else if (key == "labelSelector") {
      if (!v.IsNull()) {
        errors.Add(f + ": Forbidden: constraint must not define a selector, as they deduced for each pod");
      }
    } else if (key == "minDomains") {
      if (v.IsNull()) continue;
      if (auto i = Int(v, f, errors)) {
        if (*i <= 0) errors.Add(f + ": Invalid value: " + std::to_string(*i) + ": must be greater than 0");
        c.min_domains = *i;
      }
    } else if (key == "nodeAffinityPolicy") {
      if (auto e = Enum(v, f, kPolicies, errors)) c.node_affinity_policy = *e;
    } else if (key == "nodeTaintsPolicy") {
      if (auto e = Enum(v, f, kPolicies, errors)) c.node_taints_policy = *e;
    } else if (key == "matchLabelKeys") {
      if (!v.IsSequence()) {
        errors.Add(f + ": Invalid value: expected a list");
        continue;
      }
      for (const auto& k : v) c.match_label_keys.push_back(k.as<std::string>());
    } else {
      errors.Add(f + ": unknown field (known: maxSkew, topologyKey, whenUnsatisfiable, minDomains, "
                     "nodeAffinityPolicy, nodeTaintsPolicy, matchLabelKeys)");
    }
  }
  if (c.max_skew <= 0) {
    errors.Add(p + ".maxSkew: Invalid value: " + std::to_string(c.max_skew) + ": not in valid range (0, inf)");
  }
  if (c.topology_key.empty()) {
    errors.Add(p + ".topologyKey: Required value: can not be empty");
  } else if (std::string e = LabelNameError(c.topology_key); !e.empty()) {
    errors.Add(p + ".topologyKey: Invalid value: " + Q(c.topology_key) + ": " + e);
  }
  if (!has_when) errors.Add(p + ".whenUnsatisfiable: Required value: can not be empty");
  return c;
}

}  // namespace

Result<PodTopologySpread> PodTopologySpread::FromArgs(const YAML::Node& args) {
  if (!args || args.IsNull()) return PodTopologySpread();
  if (!args.IsMap()) return Status::Invalid("expected a map of PodTopologySpreadArgs");
  Errors errors;
  std::string defaulting_type = "System";
  std::vector<TopologySpreadConstraint> constraints;
  for (const auto& entry : args) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& v = entry.second;
    if (key == "defaultingType") {
      if (v.IsScalar() && !v.Scalar().empty()) defaulting_type = v.Scalar();  // empty: System
    } else if (key == "defaultConstraints") {
      if (v.IsNull()) continue;
      if (!v.IsSequence()) {
        errors.Add("defaultConstraints: Invalid value: expected a list");
        continue;
      }
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string p = "defaultConstraints[" + std::to_string(i) + "]";
        constraints.push_back(ParseConstraint(v[i], p, errors));
        for (size_t j = 0; j < i; ++j) {
          const auto& a = constraints[j];
          const auto& b = constraints[i];
          if (a.topology_key == b.topology_key && a.when_unsatisfiable == b.when_unsatisfiable) {
            errors.Add(p + ": Duplicate value: \"{" + b.topology_key + ", " +
                       ActionName(b.when_unsatisfiable) + "}\"");
            break;
          }
        }
      }
    } else if (key == "apiVersion" || key == "kind") {
      // The type header of a typed args document; nothing to read.
    } else {
      errors.Add(key + ": unknown field (known: defaultingType, defaultConstraints)");
    }
  }
  if (defaulting_type != "System" && defaulting_type != "List") {
    errors.list.insert(errors.list.begin(), "defaultingType: Unsupported value: " + Q(defaulting_type) +
                                                ": supported values: \"System\", \"List\"");
  } else if (defaulting_type == "System" && !constraints.empty()) {
    errors.list.insert(errors.list.begin(),
                       "defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty");
  }
  if (!errors.list.empty()) return Status::Invalid(errors.Join());
  if (defaulting_type == "System") return PodTopologySpread();
  return PodTopologySpread(std::move(constraints));
}

}  // namespace podflow::scheduler::plugins
