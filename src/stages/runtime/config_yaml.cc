// ParseRuntimeConfig: the `runtime:` section read through base/yaml_reader.h,
// every error a Status naming the path.
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <functional>

#include "base/yaml_reader.h"
#include "stages/runtime/config.h"

namespace podflow::runtime {
namespace {

constexpr struct {
  const char* name;
  int resource;
} kLimitNames[] = {
    {"core", RLIMIT_CORE},       {"cpu", RLIMIT_CPU},         {"data", RLIMIT_DATA},
    {"fsize", RLIMIT_FSIZE},     {"locks", RLIMIT_LOCKS},     {"memlock", RLIMIT_MEMLOCK},
    {"msgqueue", RLIMIT_MSGQUEUE}, {"nice", RLIMIT_NICE},     {"nofile", RLIMIT_NOFILE},
    {"nproc", RLIMIT_NPROC},     {"rss", RLIMIT_RSS},         {"rtprio", RLIMIT_RTPRIO},
    {"rttime", RLIMIT_RTTIME},   {"sigpending", RLIMIT_SIGPENDING}, {"stack", RLIMIT_STACK},
};

Result<uint64_t> LimitValue(const std::string& text, const std::string& whole) {
  if (text == "-1" || text == "unlimited") return RLIM_INFINITY;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v == RLIM_INFINITY) {
    return Status::Invalid("ulimit \"" + whole + "\": \"" + text +
                           "\" is not a limit (a number, or -1 / unlimited for none)");
  }
  return v;
}


using KeyHandlers =
    std::map<std::string, std::function<Status(const YAML::Node&, const std::string&)>>;

Status Visit(const YAML::Node& node, const std::string& path, const KeyHandlers& handlers) {
  if (!node.IsMap()) return Status::Invalid(path + ": must be a map");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    auto it = handlers.find(key);
    if (it == handlers.end()) return Status::Invalid(path + "." + key + ": unknown key");
    PODFLOW_RETURN_IF_ERROR(it->second(entry.second, path + "." + key));
  }
  return Status::Ok();
}

Status ReadString(const YAML::Node& node, const std::string& path, std::string* out) {
  Result<std::string> s = yaml::Scalar<std::string>(node, path, "must be a string");
  if (!s.ok()) return s.status();
  *out = std::move(s).value();
  return Status::Ok();
}

// Decimal digits only (no sign, no 0x): stricter than yaml-cpp's integers.
Status ReadInt(const YAML::Node& node, const std::string& path, int64_t* out) {
  Result<std::string> text = yaml::Scalar<std::string>(node, path, "must be an integer");
  if (!text.ok()) return text.status();
  const std::string& s = *text;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec != std::errc() || end != s.data() + s.size() || *out < 0) {
    return Status::Invalid(path + ": must be a non-negative integer, got \"" + s + "\"");
  }
  return Status::Ok();
}

Status ReadMillis(const YAML::Node& node, const std::string& path, SimDuration* out) {
  int64_t ms = 0;
  PODFLOW_RETURN_IF_ERROR(ReadInt(node, path, &ms));
  *out = SimDuration(ms);
  return Status::Ok();
}

Status ReadStringList(const YAML::Node& node, const std::string& path,
                      std::vector<std::string>* out) {
  if (!node.IsSequence()) return Status::Invalid(path + ": must be a list");
  out->clear();
  for (size_t i = 0; i < node.size(); ++i) {
    std::string s;
    PODFLOW_RETURN_IF_ERROR(ReadString(node[i], path + "[" + std::to_string(i) + "]", &s));
    out->push_back(std::move(s));
  }
  return Status::Ok();
}

Status ReadStringMap(const YAML::Node& node, const std::string& path,
                     std::map<std::string, std::string>* out) {
  if (!node.IsMap()) return Status::Invalid(path + ": must be a map");
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    PODFLOW_RETURN_IF_ERROR(ReadString(entry.second, path + "." + key, &(*out)[key]));
  }
  return Status::Ok();
}

Status ReadTaints(const YAML::Node& node, const std::string& path, std::vector<TaintDef>* out) {
  if (!node.IsSequence()) return Status::Invalid(path + ": must be a list");
  for (size_t i = 0; i < node.size(); ++i) {
    TaintDef t;
    PODFLOW_RETURN_IF_ERROR(
        Visit(node[i], path + "[" + std::to_string(i) + "]",
              {{"key", [&](auto& n, auto& p) { return ReadString(n, p, &t.key); }},
               {"value", [&](auto& n, auto& p) { return ReadString(n, p, &t.value); }},
               {"effect", [&](auto& n, auto& p) { return ReadString(n, p, &t.effect); }}}));
    out->push_back(std::move(t));
  }
  return Status::Ok();
}

// The keys a node and the template share.
Result<RuntimeType> ParseRuntimeType(const std::string& type, const std::string& path) {
  if (type.empty() || type == "simulated") return RuntimeType::kSimulated;
  if (type == "process") return RuntimeType::kProcess;
  return Status::Invalid(path + ": Unsupported value: \"" + type + "\": supported values: \"simulated\", \"process\"");
}

void AddShapeKeys(NodeShape* shape, KeyHandlers* h) {
  (*h)["labels"] = [shape](auto& n, auto& p) { return ReadStringMap(n, p, &shape->labels); };
  (*h)["taints"] = [shape](auto& n, auto& p) { return ReadTaints(n, p, &shape->taints); };
  (*h)["capacity"] = [shape](auto& n, auto& p) { return ReadStringMap(n, p, &shape->capacity); };
  (*h)["images"] = [shape](auto& n, auto& p) { return ReadStringList(n, p, &shape->images); };
  (*h)["type"] = [shape](auto& n, auto& p) {
    PODFLOW_RETURN_IF_ERROR(ReadString(n, p, &shape->type));
    return ParseRuntimeType(shape->type, p).status();
  };
}

Status ReadNodes(const YAML::Node& node, const std::string& path, std::vector<NodeDef>* out) {
  if (!node.IsSequence()) return Status::Invalid(path + ": must be a list");
  for (size_t i = 0; i < node.size(); ++i) {
    NodeDef def;
    KeyHandlers h = {
        {"name", [&](auto& n, auto& p) { return ReadString(n, p, &def.name); }},
        {"podCIDR", [&](auto& n, auto& p) { return ReadString(n, p, &def.pod_cidr); }},
        {"internalIP", [&](auto& n, auto& p) { return ReadString(n, p, &def.internal_ip); }}};
    AddShapeKeys(&def.shape, &h);
    PODFLOW_RETURN_IF_ERROR(Visit(node[i], path + "[" + std::to_string(i) + "]", h));
    out->push_back(std::move(def));
  }
  return Status::Ok();
}

Status ReadTemplate(const YAML::Node& node, const std::string& path, NodeTemplate* t) {
  KeyHandlers h = {
      {"count", [&](auto& n, auto& p) { return ReadInt(n, p, &t->count); }},
      {"namePrefix", [&](auto& n, auto& p) { return ReadString(n, p, &t->name_prefix); }}};
  AddShapeKeys(&t->shape, &h);
  return Visit(node, path, h);
}

Status ParseInto(const YAML::Node& runtime, RuntimeConfig* c) {
  std::string type;
  int64_t mask = c->node_cidr_mask_size;
  std::optional<bool> serialize;
  std::optional<int64_t> max_parallel;
  int64_t lease_seconds = c->timing.node_lease_seconds;
  RuntimeTiming& t = c->timing;
  PODFLOW_RETURN_IF_ERROR(Visit(
      runtime, "runtime",
      {{"type", [&](auto& n, auto& p) { return ReadString(n, p, &type); }},
       {"clusterCIDR", [&](auto& n, auto& p) { return ReadString(n, p, &c->cluster_cidr); }},
       {"nodeCIDRMaskSize", [&](auto& n, auto& p) { return ReadInt(n, p, &mask); }},
       {"nodeIPRange", [&](auto& n, auto& p) { return ReadString(n, p, &c->node_ip_range); }},
       {"nodes", [&](auto& n, auto& p) { return ReadNodes(n, p, &c->nodes); }},
       {"nodeTemplate",
        [&](auto& n, auto& p) { return ReadTemplate(n, p, &c->node_template.emplace()); }},
       {"registry",
        [&](auto& n, auto& p) {
          Result<RegistryConfig> registry = model::ParseRegistry(n, p);
          if (!registry.ok()) return registry.status();
          c->registry = std::move(*registry);
          return Status::Ok();
        }},
       {"containerStartMillis",
        [&](auto& n, auto& p) { return ReadMillis(n, p, &t.container_start); }},
       {"initContainerRunMillis", [&](auto& n, auto& p) { return ReadMillis(n, p, &t.init_run); }},
       {"failedPullMillis", [&](auto& n, auto& p) { return ReadMillis(n, p, &t.failed_pull); }},
       {"serializeImagePulls",
        [&](auto& n, auto& p) {
          Result<bool> b = yaml::Scalar<bool>(n, p, "must be true or false");
          if (!b.ok()) return b.status();
          serialize = *b;
          return Status::Ok();
        }},
       {"maxParallelImagePulls", [&](auto& n, auto& p) { return ReadInt(n, p, &max_parallel.emplace()); }},
       {"clusterDNS",
        [&](auto& n, auto& p) {
          PODFLOW_RETURN_IF_ERROR(ReadStringList(n, p, &c->cluster_dns));
          for (size_t i = 0; i < c->cluster_dns.size(); ++i) {
            if (!ParseIpv4(c->cluster_dns[i]).ok()) {
              return Status::Invalid(p + "[" + std::to_string(i) + "]: must be an IPv4 address such as 10.96.0.10, not \"" +
                                     c->cluster_dns[i] + "\"");
            }
          }
          return Status::Ok();
        }},
       {"clusterDomain",
        [&](auto& n, auto& p) {
          PODFLOW_RETURN_IF_ERROR(ReadString(n, p, &c->cluster_domain));
          std::string& d = c->cluster_domain;
          if (!d.empty() && d.back() == '.') d.pop_back();
          if (d.empty() || d.front() == '.' || d.find("..") != std::string::npos) {
            return Status::Invalid(p + ": must be a domain such as cluster.local");
          }
          return Status::Ok();
        }},
       {"podNetwork",
        [&](auto& n, auto& p) {
          Result<bool> b = yaml::Scalar<bool>(n, p, "must be true or false");
          if (!b.ok()) return b.status();
          c->pod_network = *b;
          return Status::Ok();
        }},
       {"backOffMillis", [&](auto& n, auto& p) { return ReadMillis(n, p, &t.backoff_initial); }},
       {"maxBackOffMillis", [&](auto& n, auto& p) { return ReadMillis(n, p, &t.backoff_max); }},
       {"syncRetryMillis", [&](auto& n, auto& p) { return ReadMillis(n, p, &t.sync_retry); }},
       {"nodeLeaseDurationSeconds", [&](auto& n, auto& p) { return ReadInt(n, p, &lease_seconds); }},
       {"ulimits",
        [&](auto& n, auto& p) {
          std::vector<std::string> texts;
          PODFLOW_RETURN_IF_ERROR(ReadStringList(n, p, &texts));
          for (size_t i = 0; i < texts.size(); ++i) {
            Result<ResourceLimit> limit = ParseUlimit(texts[i]);
            if (!limit.ok()) return Status::Invalid(p + "[" + std::to_string(i) + "]: " + limit.status().message());
            if (std::any_of(c->ulimits.begin(), c->ulimits.end(),
                            [&](const ResourceLimit& l) { return l.resource == limit->resource; })) {
              return Status::Invalid(p + "[" + std::to_string(i) + "]: Duplicate value: \"" +
                                     texts[i].substr(0, texts[i].find('=')) + "\"");
            }
            c->ulimits.push_back(*limit);
          }
          return Status::Ok();
        }},
       {"nodeStatusUpdateMillis",
        [&](auto& n, auto& p) { return ReadMillis(n, p, &t.node_status_update); }}}));
  // kubelet's validation of the pair.
  if (max_parallel) {
    if (*max_parallel < 1) return Status::Invalid("runtime.maxParallelImagePulls: must be at least 1");
    // Each allowed pull is a slot per node: podflow's own bound.
    if (*max_parallel > 1000) return Status::Invalid("runtime.maxParallelImagePulls: must be at most 1000");
    if (serialize.value_or(true) && *max_parallel != 1) {
      return Status::Invalid(
          "runtime.maxParallelImagePulls: must be 1 or unset when serializeImagePulls is true");
    }
  }
  t.max_parallel_pulls = serialize.value_or(true) ? 1 : static_cast<int>(max_parallel.value_or(0));
  if (t.backoff_initial.count() < 1) return Status::Invalid("runtime.backOffMillis: must be at least 1");
  if (t.backoff_max < t.backoff_initial) {
    return Status::Invalid("runtime.maxBackOffMillis: must be at least runtime.backOffMillis (" +
                           std::to_string(t.backoff_initial.count()) + ")");
  }
  if (t.sync_retry.count() < 1) return Status::Invalid("runtime.syncRetryMillis: must be at least 1");
  if (t.node_status_update.count() < 100 || t.node_status_update.count() > 3'600'000) {
    return Status::Invalid("runtime.nodeStatusUpdateMillis: must be 100..3600000");
  }
  // kubelet requires a positive duration; the hour is podflow's own bound.
  if (lease_seconds < 1 || lease_seconds > 3600) {
    return Status::Invalid("runtime.nodeLeaseDurationSeconds: must be 1..3600");
  }
  t.node_lease_seconds = static_cast<int>(lease_seconds);
  Result<RuntimeType> runtime_type = ParseRuntimeType(type, "runtime.type");
  if (!runtime_type.ok()) return runtime_type.status();
  c->type = *runtime_type;
  if (mask < 8 || mask > 30) return Status::Invalid("runtime.nodeCIDRMaskSize: must be 8..30");
  c->node_cidr_mask_size = static_cast<int>(mask);
  return Status::Ok();
}

}  // namespace

Result<ResourceLimit> ParseUlimit(const std::string& text) {
  const size_t eq = text.find('=');
  const std::string name = text.substr(0, eq);
  const auto* known = std::find_if(std::begin(kLimitNames), std::end(kLimitNames),
                                   [&](const auto& n) { return name == n.name; });
  if (eq == std::string::npos || known == std::end(kLimitNames)) {
    std::string names;
    for (const auto& n : kLimitNames) names += std::string(names.empty() ? "" : ", ") + n.name;
    return Status::Invalid("ulimit \"" + text + "\": expected NAME=SOFT:HARD or NAME=LIMIT with NAME one of " +
                           names);
  }
  const std::string values = text.substr(eq + 1);
  const size_t colon = values.find(':');
  Result<uint64_t> soft = LimitValue(values.substr(0, colon), text);
  if (!soft.ok()) return soft.status();
  Result<uint64_t> hard = colon == std::string::npos ? soft : LimitValue(values.substr(colon + 1), text);
  if (!hard.ok()) return hard.status();
  if (*hard != RLIM_INFINITY && (*soft == RLIM_INFINITY || *soft > *hard)) {
    return Status::Invalid("ulimit \"" + text + "\": the soft limit is above the hard one");
  }
  return ResourceLimit{known->resource, *soft, *hard};
}

Result<RuntimeConfig> ParseRuntimeConfig(const YAML::Node& runtime) {
  RuntimeConfig config;
  if (!runtime || runtime.IsNull()) return config;
  PODFLOW_RETURN_IF_ERROR(yaml::Guard([&] { return ParseInto(runtime, &config); },
                                      [](const yaml::Failure& f) {
                                        return Status::Invalid("runtime: " + f.what);
                                      }));
  Result<std::vector<SimNode>> nodes = ResolveNodes(config);
  if (!nodes.ok()) return nodes.status();
  return config;
}

}  // namespace podflow::runtime
