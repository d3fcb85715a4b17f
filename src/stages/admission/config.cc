// The `admission:` section of a podflow config -> AdmissionConfig.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/yaml_reader.h"
#include "model/objects.h"
#include "stages/admission/admission.h"

namespace podflow::admission {
namespace {

// What yaml-cpp said, when it threw, of a value it could not convert.
Status BadConversion(const YAML::Node& node) {
  return Status::Invalid("admission config: line " + std::to_string(yaml::Line(node)) +
                         ": bad conversion");
}

Result<std::string> String(const YAML::Node& node) {
  if (std::optional<std::string> s = yaml::As<std::string>(node)) return *std::move(s);
  return BadConversion(node);
}

Status CheckKeys(const YAML::Node& node, const std::set<std::string>& allowed,
                 const std::string& where) {
  for (const auto& kv : node) {
    Result<std::string> key = String(kv.first);
    if (!key.ok()) return key.status();
    if (!allowed.contains(*key)) return Status::Invalid(where + ": unknown key \"" + *key + "\"");
  }
  return Status::Ok();
}

// Absent: empty; a single string is a list of one.
Result<std::vector<std::string>> StringList(const YAML::Node& node, const std::string& where) {
  if (!node) return std::vector<std::string>{};
  if (node.IsScalar()) return std::vector<std::string>{node.Scalar()};
  if (!node.IsSequence()) {
    return Status::Invalid("admission config: line " + std::to_string(yaml::Line(node)) + ": " +
                           where + " must be a list of strings");
  }
  std::vector<std::string> out;
  for (const auto& item : node) {
    Result<std::string> s = String(item);
    if (!s.ok()) return s.status();
    out.push_back(std::move(s).value());
  }
  return out;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read token file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What a rule adds must at least be addable: every container named, once
// across both lists, with an image; every volume named once.
Status CheckSidecars(const api::PodT& pod, const std::string& where) {
  std::set<std::string> names;
  for (auto [list, field] : {std::pair{&pod.spec->init_containers, "initContainers"},
                             std::pair{&pod.spec->containers, "containers"}}) {
    for (size_t i = 0; i < list->size(); ++i) {
      const api::ContainerT& c = *(*list)[i];
      const std::string at = where + "." + field + "[" + std::to_string(i) + "]";
      if (c.name.empty()) return Status::Invalid(at + ".name: required");
      if (c.image.empty()) return Status::Invalid(at + ".image: required");
      if (!names.insert(c.name).second) return Status::Invalid(at + ".name: \"" + c.name + "\" is used twice");
    }
  }
  std::set<std::string> volumes;
  for (size_t i = 0; i < pod.spec->volumes.size(); ++i) {
    const std::string& name = pod.spec->volumes[i]->name;
    const std::string at = where + ".volumes[" + std::to_string(i) + "].name";
    if (name.empty()) return Status::Invalid(at + ": required");
    if (!volumes.insert(name).second) return Status::Invalid(at + ": \"" + name + "\" is used twice");
  }
  return Status::Ok();
}

// admission.sidecarInjector: a list of rules, each
//   {name, namespaceSelector: "k=v,...", selector: "k=v,...", spec: {initContainers, containers, volumes}}
// `spec` is decoded as a pod's spec is, so that a bad field is refused here.
Result<PluginConfig> ParsePluginConfig(const YAML::Node& section) {
  PluginConfig config;
  for (auto [key, into] : {std::pair{"defaultNotReadyTolerationSeconds", &config.not_ready_toleration_seconds},
                           std::pair{"defaultUnreachableTolerationSeconds", &config.unreachable_toleration_seconds}}) {
    if (!section[key]) continue;
    const std::string where = std::string("admission.") + key;
    Result<int64_t> seconds = yaml::Scalar<int64_t>(section[key], where, "must be a whole number of seconds");
    if (!seconds.ok()) return seconds.status();
    // tolerationSeconds is an int64; a negative one means evict at once.
    if (*seconds < 0) return Status::Invalid(where + ": must be 0 or more");
    *into = *seconds;
  }
  const YAML::Node rules = section["sidecarInjector"];
  if (!rules) return config;
  if (!rules.IsSequence()) {
    return Status::Invalid("admission config: line " + std::to_string(yaml::Line(rules)) +
                           ": admission.sidecarInjector must be a list of rules");
  }
  for (size_t i = 0; i < rules.size(); ++i) {
    const YAML::Node r = rules[i];
    const std::string where = "admission.sidecarInjector[" + std::to_string(i) + "]";
    if (!r.IsMap()) return Status::Invalid(where + ": must be a map");
    PODFLOW_RETURN_IF_ERROR(CheckKeys(r, {"name", "namespaceSelector", "selector", "spec"}, where));
    SidecarRule rule;
    for (auto [key, into] : {std::pair{"name", &rule.name}, std::pair{"namespaceSelector", &rule.namespace_selector},
                             std::pair{"selector", &rule.selector}}) {
      if (!r[key]) continue;
      Result<std::string> text = String(r[key]);
      if (!text.ok()) return text.status();
      *into = std::move(*text);
    }
    if (rule.name.empty()) return Status::Invalid(where + ".name: required");
    const YAML::Node spec = r["spec"];
    if (!spec || !spec.IsMap()) return Status::Invalid(where + ".spec: required, a map");
    PODFLOW_RETURN_IF_ERROR(CheckKeys(spec, {"initContainers", "containers", "volumes"}, where + ".spec"));
    // Decoded as the spec of a pod, with the codec's checks.
    Result<std::vector<model::Value>> parsed = model::ParseYaml(YAML::Dump(spec));
    if (!parsed.ok() || parsed->size() != 1) return Status::Invalid(where + ".spec: not a map");
    model::Value meta = model::Value::Object();
    meta.Set("name", model::Value::String("sidecar-" + rule.name));
    model::Value pod = model::Value::Object();
    pod.Set("apiVersion", model::Value::String("v1"));
    pod.Set("kind", model::Value::String("Pod"));
    pod.Set("metadata", std::move(meta));
    pod.Set("spec", std::move((*parsed)[0]));
    model::Decoded decoded = model::DecodeValue(pod);
    if (!decoded.status.ok()) return Status::Invalid(where + ".spec: " + decoded.status.message());
    PODFLOW_RETURN_IF_ERROR(CheckSidecars(*model::Unpack<api::Pod>(decoded.object.bytes), where + ".spec"));
    for (const SidecarRule& earlier : config.sidecars) {
      if (earlier.name == rule.name) return Status::Invalid(where + ".name: \"" + rule.name + "\" is used twice");
    }
    rule.pod = std::move(decoded.object.bytes);
    config.sidecars.push_back(std::move(rule));
  }
  return config;
}

Result<AdmissionConfig> Parse(const YAML::Node& section, std::string_view base_dir,
                              std::vector<TokenEntry> tokens, const YAML::Node& registry) {
  AdmissionConfig config;
  if (!section || section.IsNull()) {
    Result<TokenAuthenticator> authn = TokenAuthenticator::Create(std::move(tokens));
    if (!authn.ok()) return authn.status();
    config.authenticator = std::move(*authn);
    return config;
  }
  if (!section.IsMap()) return Status::Invalid("admission: must be a map");
  if (section["policy"]) {
    return Status::Invalid("admission.policy: replaced by RBAC; store Roles, ClusterRoles and their bindings "
                           "instead (config/README.md, Authorization)");
  }
  PODFLOW_RETURN_IF_ERROR(
      CheckKeys(section, {"tokens", "tokenFile", "serviceClusterIPRange", "serviceNodePortRange", "authorizationMode", "enablePlugins",
                          "disablePlugins", "sidecarInjector", "defaultNotReadyTolerationSeconds",
                          "defaultUnreachableTolerationSeconds"},
                "admission"));
  if (const YAML::Node list = section["tokens"]) {
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node t = list[i];
      std::string where = "admission.tokens[" + std::to_string(i) + "]";
      PODFLOW_RETURN_IF_ERROR(CheckKeys(t, {"token", "user", "uid", "groups"}, where));
      TokenEntry e;
      e.token = yaml::As<std::string>(t["token"]).value_or("");
      e.user.name = yaml::As<std::string>(t["user"]).value_or("");
      e.user.uid = yaml::As<std::string>(t["uid"]).value_or("");
      Result<std::vector<std::string>> groups = StringList(t["groups"], where + ".groups");
      if (!groups.ok()) return groups.status();
      e.user.groups = std::move(groups).value();
      tokens.push_back(std::move(e));
    }
  }
  if (const YAML::Node file = section["tokenFile"]) {
    Result<std::string> file_name = String(file);
    if (!file_name.ok()) return file_name.status();
    std::filesystem::path path = *file_name;
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
    Result<std::string> cidr = String(range);
    if (!cidr.ok()) return cidr.status();
    Result<ClusterIpAllocator> ips = ClusterIpAllocator::Create(*cidr);
    if (!ips.ok())
      return Status::Invalid("admission.serviceClusterIPRange: " + ips.status().message());
    config.cluster_ips = std::move(*ips);
  }
  if (const YAML::Node range = section["serviceNodePortRange"]) {
    Result<std::string> text = String(range);
    if (!text.ok()) return text.status();
    Result<NodePortAllocator> ports = NodePortAllocator::Create(*text);
    if (!ports.ok()) return Status::Invalid("admission.serviceNodePortRange: " + ports.status().message());
    config.node_ports = std::move(*ports);
  }

  if (const YAML::Node mode = section["authorizationMode"]) {
    Result<std::string> name = String(mode);
    if (!name.ok()) return name.status();
    if (*name != "RBAC" && *name != "AlwaysAllow") {
      return Status::Invalid("admission.authorizationMode: \"" + *name + "\" is not RBAC or AlwaysAllow");
    }
    config.authorization_mode = *name;
  }

  // --enable-admission-plugins / --disable-admission-plugins.
  Result<std::vector<std::string>> enable = StringList(section["enablePlugins"], "admission.enablePlugins");
  if (!enable.ok()) return enable.status();
  Result<std::vector<std::string>> disable = StringList(section["disablePlugins"], "admission.disablePlugins");
  if (!disable.ok()) return disable.status();
  Result<PluginConfig> plugins = ParsePluginConfig(section);
  if (!plugins.ok()) return plugins.status();
  // ImagePolicy reads the catalog the runtime pulls from.
  if (std::find(enable->begin(), enable->end(), "ImagePolicy") != enable->end() && !yaml::Absent(registry)) {
    Result<model::RegistryConfig> images = model::ParseRegistry(registry, "runtime.registry");
    if (!images.ok()) return images.status();
    plugins->registry = std::move(*images);
  }
  Result<AdmissionChain> chain = AdmissionChain::Create(*enable, *disable, *plugins);
  if (!chain.ok()) return Status::Invalid("admission: " + chain.status().message());
  config.plugins = std::move(*chain);
  return config;
}

}  // namespace

Result<AdmissionConfig> ParseAdmissionConfig(const YAML::Node& section, std::string_view base_dir,
                                             std::vector<TokenEntry> tokens, const YAML::Node& registry) {
  // The reads above convert through yaml::As; what is left to throw is
  // yaml-cpp on a node that is not there (e.g. a `policy` map indexed as a
  // list), reported as the other conversion errors are.
  std::optional<Result<AdmissionConfig>> parsed;
  Status status = yaml::Guard(
      [&] {
        parsed.emplace(Parse(section, base_dir, std::move(tokens), registry));
        return Status::Ok();
      },
      [](const yaml::Failure& f) {
        return Status::Invalid("admission config: line " + std::to_string(f.line) + ": " +
                               f.message);
      });
  if (!status.ok()) return status;
  return *std::move(parsed);
}

}  // namespace podflow::admission
