// NodeResourcesFitArgs: parsing, defaulting and validation, with the rules
// and ranges of kube-scheduler's ValidateNodeResourcesFitArgs.
#include <algorithm>
#include <cctype>

#include "scheduler/plugins/args_yaml.h"
#include "scheduler/plugins/node_resources_fit/fit.h"

namespace podflow::scheduler::plugins {
namespace {

constexpr size_t kMaxScoringResources = 16;  // NodeResourcesFit::Score's fixed arrays
constexpr int64_t kMaxCustomPriorityScore = 10;

bool NameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// A qualified name as label keys are (metav1 ValidateLabelName): an optional
// DNS-subdomain prefix and "/", then 1..63 of [A-Za-z0-9-_.], starting and
// ending alphanumeric.
bool IsQualifiedName(std::string_view s) {
  const size_t slash = s.find('/');
  std::string_view name = s;
  if (slash != std::string_view::npos) {
    std::string_view prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (prefix.empty() || prefix.size() > 253) return false;
    for (char c : prefix) {
      if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
            c == '-' || c == '.')) {
        return false;
      }
    }
  }
  if (name.empty() || name.size() > 63) return false;
  if (!std::isalnum(static_cast<unsigned char>(name.front())) ||
      !std::isalnum(static_cast<unsigned char>(name.back()))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), NameChar);
}

Result<std::vector<UtilizationShapePoint>> Shape(const YAML::Node& ratio, const std::string& path) {
  PODFLOW_RETURN_IF_ERROR(args::CheckMap(ratio, path, {"shape"}));
  const std::string shape_path = args::Child(path, "shape");
  const YAML::Node shape = args::Absent(ratio) ? YAML::Node() : ratio["shape"];
  if (args::Absent(shape) || !shape.IsSequence() || shape.size() == 0) {
    if (!args::Absent(shape) && !shape.IsSequence()) {
      return Status::Invalid(shape_path + ": must be a list");
    }
    return Status::Invalid(shape_path + ": at least one point must be specified");
  }
  std::vector<UtilizationShapePoint> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::string at = args::Index(shape_path, i);
    PODFLOW_RETURN_IF_ERROR(args::CheckMap(shape[i], at, {"utilization", "score"}));
    UtilizationShapePoint point;
    // Absent fields are 0, as Go decodes them.
    if (!args::Absent(shape[i]) && !args::Absent(shape[i]["utilization"])) {
      auto u = args::Int(shape[i]["utilization"], args::Child(at, "utilization"));
      if (!u.ok()) return u.status();
      point.utilization = *u;
    }
    if (!args::Absent(shape[i]) && !args::Absent(shape[i]["score"])) {
      auto s = args::Int(shape[i]["score"], args::Child(at, "score"));
      if (!s.ok()) return s.status();
      point.score = *s;
    }
    if (point.utilization < 0 || point.utilization > 100) {
      return Status::Invalid(args::Child(at, "utilization") + ": " + std::to_string(point.utilization) +
                             " not in valid range [0, 100]");
    }
    if (point.score < 0 || point.score > kMaxCustomPriorityScore) {
      return Status::Invalid(args::Child(at, "score") + ": " + std::to_string(point.score) +
                             " not in valid range [0, 10]");
    }
    if (i > 0 && out.back().utilization >= point.utilization) {
      return Status::Invalid(args::Child(at, "utilization") + ": " + std::to_string(point.utilization) +
                             ": values must be sorted in increasing order");
    }
    out.push_back(point);
  }
  // Shape scores are 0..10; node scores are 0..100.
  for (auto& p : out) p.score *= kMaxNodeScore / kMaxCustomPriorityScore;
  return out;
}

}  // namespace

Result<NodeResourcesFit> NodeResourcesFit::FromArgs(const YAML::Node& node) {
  NodeResourcesFit fit;
  if (args::Absent(node)) return fit;
  PODFLOW_RETURN_IF_ERROR(
      args::CheckMap(node, "", {"scoringStrategy", "ignoredResources", "ignoredResourceGroups"}));

  auto ignored = args::Strings(node["ignoredResources"], "ignoredResources");
  if (!ignored.ok()) return ignored.status();
  for (size_t i = 0; i < ignored->size(); ++i) {
    if (!IsQualifiedName((*ignored)[i])) {
      return Status::Invalid(args::Index("ignoredResources", i) + ": \"" + (*ignored)[i] +
                             "\" is not a valid resource name");
    }
  }
  auto groups = args::Strings(node["ignoredResourceGroups"], "ignoredResourceGroups");
  if (!groups.ok()) return groups.status();
  for (size_t i = 0; i < groups->size(); ++i) {
    const std::string& g = (*groups)[i];
    if (g.find('/') != std::string::npos) {
      return Status::Invalid(args::Index("ignoredResourceGroups", i) + ": \"" + g +
                             "\": resource group name can't contain '/'");
    }
    if (!IsQualifiedName(g)) {
      return Status::Invalid(args::Index("ignoredResourceGroups", i) + ": \"" + g +
                             "\" is not a valid resource group name");
    }
  }
  fit.ignored_resources_ = std::move(ignored).value();
  fit.ignored_groups_ = std::move(groups).value();
  std::sort(fit.ignored_resources_.begin(), fit.ignored_resources_.end());
  std::sort(fit.ignored_groups_.begin(), fit.ignored_groups_.end());

  const YAML::Node strategy = node["scoringStrategy"];
  PODFLOW_RETURN_IF_ERROR(
      args::CheckMap(strategy, "scoringStrategy", {"type", "resources", "requestedToCapacityRatio"}));
  if (args::Absent(strategy)) return fit;

  if (!args::Absent(strategy["type"])) {
    auto type = args::String(strategy["type"], "scoringStrategy.type");
    if (!type.ok()) return type.status();
    if (*type == "LeastAllocated") {
      fit.type_ = ScoringStrategyType::kLeastAllocated;
    } else if (*type == "MostAllocated") {
      fit.type_ = ScoringStrategyType::kMostAllocated;
    } else if (*type == "RequestedToCapacityRatio") {
      fit.type_ = ScoringStrategyType::kRequestedToCapacityRatio;
    } else {
      return Status::Invalid("scoringStrategy.type: unsupported value \"" + *type +
                             "\" (supported: LeastAllocated, MostAllocated, RequestedToCapacityRatio)");
    }
  }

  auto resources = ResourceSpecsFromArgs(strategy["resources"], "scoringStrategy.resources");
  if (!resources.ok()) return resources.status();
  if (resources->size() > kMaxScoringResources) {
    return Status::Invalid("scoringStrategy.resources: at most " + std::to_string(kMaxScoringResources) +
                           " resources");
  }
  for (size_t i = 0; i < resources->size(); ++i) {
    const ResourceSpec& r = (*resources)[i];
    if (r.weight <= 0 || r.weight > 100) {
      return Status::Invalid(args::Child(args::Index("scoringStrategy.resources", i), "weight") + ": " +
                             std::to_string(r.weight) + ": resource weight of " + r.name +
                             " not in valid range (0, 100]");
    }
  }
  fit.resources_ = std::move(resources).value();

  const YAML::Node ratio = strategy["requestedToCapacityRatio"];
  if (fit.type_ == ScoringStrategyType::kRequestedToCapacityRatio || !args::Absent(ratio)) {
    auto shape = Shape(ratio, "scoringStrategy.requestedToCapacityRatio");
    if (!shape.ok()) return shape.status();
    if (fit.type_ == ScoringStrategyType::kRequestedToCapacityRatio) fit.shape_ = std::move(shape).value();
  }
  return fit;
}

}  // namespace podflow::scheduler::plugins
