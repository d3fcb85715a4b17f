// Reading plugin args (pluginConfig[].args) from YAML, in the plugins'
// wording, over base/yaml_reader.h: typed getters whose Invalid names the
// field by its path ("scoringStrategy.resources[0].weight"), and a strict
// key check, since kube-scheduler decodes its configuration strictly.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "base/yaml_reader.h"

namespace podflow::scheduler::plugins::args {

using yaml::Absent;
using yaml::Child;
using yaml::Index;

// Invalid unless `node` is absent or a map whose keys are all in `known`.
inline Status CheckMap(const YAML::Node& node, std::string_view path,
                       std::initializer_list<std::string_view> known) {
  if (Absent(node)) return Status::Ok();
  const std::string where = path.empty() ? std::string("args") : std::string(path);
  if (!node.IsMap()) return Status::Invalid(where + ": must be a map");
  for (const auto& kv : node) {
    const std::optional<std::string> key_text = yaml::As<std::string>(kv.first);
    if (!key_text) return Status::Invalid(where + ": keys must be strings");
    const std::string& key = *key_text;
    bool ok = false;
    for (std::string_view k : known) ok = ok || k == key;
    if (!ok) return Status::Invalid(Child(path, key) + ": unknown field");
  }
  return Status::Ok();
}

inline Result<std::string> String(const YAML::Node& node, std::string_view path) {
  return yaml::Scalar<std::string>(node, path, "must be a string");
}

inline Result<int64_t> Int(const YAML::Node& node, std::string_view path) {
  return yaml::Scalar<int64_t>(node, path, "must be an integer");
}

// Absent: empty.
inline Result<std::vector<std::string>> Strings(const YAML::Node& node, std::string_view path) {
  std::vector<std::string> out;
  if (Absent(node)) return out;
  if (!node.IsSequence()) return Status::Invalid(std::string(path) + ": must be a list");
  for (size_t i = 0; i < node.size(); ++i) {
    auto s = String(node[i], Index(path, i));
    if (!s.ok()) return s.status();
    out.push_back(std::move(s).value());
  }
  return out;
}

}  // namespace podflow::scheduler::plugins::args
