// The `admission:` section of a podflow config -> AdmissionConfig.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "stages/admission/admission.h"

namespace podflow::admission {
namespace {

Status CheckKeys(const YAML::Node& node, const std::set<std::string>& allowed,
                 const std::string& where) {
  for (const auto& kv : node) {
    std::string key = kv.first.as<std::string>();
    if (!allowed.contains(key)) return Status::Invalid(where + ": unknown key \"" + key + "\"");
  }
  return Status::Ok();
}

std::vector<std::string> StringList(const YAML::Node& node, const std::string& where) {
  if (!node) return {};
  if (node.IsScalar()) return {node.as<std::string>()};
  if (!node.IsSequence()) throw YAML::Exception(node.Mark(), where + " must be a list of strings");
  std::vector<std::string> out;
  for (const auto& item : node) out.push_back(item.as<std::string>());
  return out;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read token file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<AdmissionConfig> Parse(const YAML::Node& section, std::string_view base_dir) {
  AdmissionConfig config;
  if (!section || section.IsNull()) return config;
  if (!section.IsMap()) return Status::Invalid("admission: must be a map");
  PODFLOW_RETURN_IF_ERROR(
      CheckKeys(section, {"tokens", "tokenFile", "serviceClusterIPRange", "policy"}, "admission"));
  std::vector<TokenEntry> tokens;
  if (const YAML::Node list = section["tokens"]) {
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node t = list[i];
      std::string where = "admission.tokens[" + std::to_string(i) + "]";
      PODFLOW_RETURN_IF_ERROR(CheckKeys(t, {"token", "user", "uid", "groups"}, where));
      TokenEntry e;
      e.token = t["token"].as<std::string>("");
      e.user.name = t["user"].as<std::string>("");
      e.user.uid = t["uid"].as<std::string>("");
      e.user.groups = StringList(t["groups"], where + ".groups");
      tokens.push_back(std::move(e));
    }
  }
  if (const YAML::Node file = section["tokenFile"]) {
    std::filesystem::path path = file.as<std::string>();
    if (path.is_relative() && !base_dir.empty()) path = std::filesystem::path(base_dir) / path;
    Result<std::string> text = ReadFile(path.string());
    if (!text.ok()) return text.status();
    Result<std::vector<TokenEntry>> parsed = ParseTokenFile(*text);
    if (!parsed.ok()) return Status::Invalid(path.string() + ": " + parsed.status().message());
    for (TokenEntry& e : *parsed) tokens.push_back(std::move(e));
  }
  Result<TokenAuthenticator> authn = TokenAuthenticator::Create(std::move(tokens));
  if (!authn.ok()) return Status::Invalid("admission.tokens: " + authn.status().message());
  config.authenticator = std::move(*authn);

  if (const YAML::Node range = section["serviceClusterIPRange"]) {
    Result<ClusterIpAllocator> ips = ClusterIpAllocator::Create(range.as<std::string>());
    if (!ips.ok())
      return Status::Invalid("admission.serviceClusterIPRange: " + ips.status().message());
    config.cluster_ips = std::move(*ips);
  }

  if (const YAML::Node policy = section["policy"]) {
    std::vector<PolicyRule> rules;
    for (size_t i = 0; i < policy.size(); ++i) {
      const YAML::Node r = policy[i];
      std::string where = "admission.policy[" + std::to_string(i) + "]";
      PODFLOW_RETURN_IF_ERROR(
          CheckKeys(r, {"user", "group", "verbs", "namespaces", "resources"}, where));
      PolicyRule rule;
      rule.user = r["user"].as<std::string>("");
      rule.group = r["group"].as<std::string>("");
      rule.verbs = StringList(r["verbs"], where + ".verbs");
      rule.namespaces = StringList(r["namespaces"], where + ".namespaces");
      rule.resources = StringList(r["resources"], where + ".resources");
      rules.push_back(std::move(rule));
    }
    Result<Authorizer> authz = Authorizer::Create(std::move(rules));
    if (!authz.ok()) return Status::Invalid("admission." + authz.status().message());
    config.authorizer = std::move(*authz);
  }
  return config;
}

}  // namespace

Result<AdmissionConfig> ParseAdmissionConfig(const YAML::Node& section, std::string_view base_dir) {
  try {
    return Parse(section, base_dir);
  } catch (const YAML::Exception& e) {
    return Status::Invalid("admission config: line " + std::to_string(e.mark.line + 1) + ": " +
                           e.msg);
  }
}

}  // namespace podflow::admission
