#include "pipeline/config.h"
#include "pipeline/stage_names.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/yaml_reader.h"
#include "pipeline/credentials.h"

namespace podflow::embedded {
const char* Find(const char* name);  // generated from config/ and pipelines/
}

namespace podflow::pipeline {
namespace {

Status Bad(const std::string& source, const std::string& what) {
  return Status::Invalid(source + ": " + what);
}

Result<YAML::Node> LoadYaml(const std::string& text, const std::string& source) {
  Result<YAML::Node> root = yaml::Load(text);
  if (!root.ok()) return Bad(source, root.status().message());
  return root;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// `node` as T (yaml-cpp's conversion), or Invalid naming `path`.
template <typename T>
Result<T> Scalar(const YAML::Node& node, const std::string& source, const std::string& path) {
  if (std::optional<T> v = yaml::As<T>(node)) return *std::move(v);
  return Bad(source, path + ": expected a " + (std::is_same_v<T, bool> ? "boolean" : "string"));
}

// A key of the map at `map_path` ("" for the top level) as text.
Result<std::string> Key(const YAML::Node& key, const std::string& source, const std::string& map_path) {
  if (std::optional<std::string> k = yaml::As<std::string>(key)) return *std::move(k);
  return Bad(source, (map_path.empty() ? "" : map_path + ": ") + "keys must be strings");
}

}  // namespace

const std::vector<std::string>& RequiredChannels() {
  static const std::vector<std::string> kChannels = {"submit", "apiwatch", "api", "watch", "decisions", "reports", "kubelet"};
  return kChannels;
}

const std::vector<std::string>& KnownStages() {
  static const std::vector<std::string> kStages(kStageNames.begin(), kStageNames.end());
  return kStages;
}

const ProcessSpec* PipelineSpec::ProcessOf(const std::string& stage) const {
  for (const ProcessSpec& p : processes) {
    if (std::find(p.stages.begin(), p.stages.end(), stage) != p.stages.end()) return &p;
  }
  return nullptr;
}

YAML::Node ClusterConfig::Section(const std::string& name) const {
  auto it = sections.find(name);
  return it == sections.end() ? YAML::Node() : it->second;
}

std::string ClusterConfig::Endpoint(const std::string& channel) const {
  const std::string& endpoint = pipeline.Endpoint(channel);
  constexpr std::string_view kIpc = "ipc://";
  if (!endpoint.starts_with(kIpc) || endpoint.size() == kIpc.size() || endpoint[kIpc.size()] == '/' ||
      endpoint[kIpc.size()] == '@') {
    return endpoint;
  }
  return std::string(kIpc) + RunDir(data_dir) + "/" + endpoint.substr(kIpc.size());
}

Result<PipelineSpec> ParsePipeline(const std::string& text, const std::string& source) {
  Result<YAML::Node> root = LoadYaml(text, source);
  if (!root.ok()) return root.status();
  if (!root->IsMap()) return Bad(source, "expected a map with channels and processes");
  PipelineSpec spec;
  spec.name = source;
  for (const auto& entry : *root) {
    Result<std::string> key_text = Key(entry.first, source, "");
    if (!key_text.ok()) return key_text.status();
    const std::string& key = *key_text;
    if (key != "channels" && key != "processes") return Bad(source, key + ": unknown field");
  }
  const YAML::Node channels = (*root)["channels"];
  if (!channels || !channels.IsMap()) return Bad(source, "channels: Required value (a map of name: endpoint)");
  for (const auto& entry : channels) {
    Result<std::string> name_text = Key(entry.first, source, "channels");
    if (!name_text.ok()) return name_text.status();
    const std::string& name = *name_text;
    Result<std::string> endpoint = Scalar<std::string>(entry.second, source, "channels." + name);
    if (!endpoint.ok()) return endpoint.status();
    if (std::find(RequiredChannels().begin(), RequiredChannels().end(), name) == RequiredChannels().end()) {
      return Bad(source, "channels." + name + ": unknown channel");
    }
    const std::string& e = *endpoint;
    if (e.rfind("inproc://", 0) != 0 && e.rfind("ipc://", 0) != 0 && e.rfind("tcp://", 0) != 0) {
      return Bad(source, "channels." + name + ": \"" + e + "\" is not an inproc://, ipc:// or tcp:// endpoint");
    }
    spec.channels[name] = e;
  }
  for (const std::string& required : RequiredChannels()) {
    if (!spec.channels.count(required)) return Bad(source, "channels." + required + ": Required value");
  }
  const YAML::Node processes = (*root)["processes"];
  if (!processes || !processes.IsSequence() || processes.size() == 0) {
    return Bad(source, "processes: Required value (a list of {name, stages})");
  }
  std::set<std::string> seen_stages, seen_processes;
  for (size_t i = 0; i < processes.size(); ++i) {
    std::string path = "processes[" + std::to_string(i) + "]";
    const YAML::Node p = processes[i];
    if (!p.IsMap() || !p["name"] || !p["stages"] || !p["stages"].IsSequence()) {
      return Bad(source, path + ": expected {name, stages: [...]}");
    }
    ProcessSpec process;
    Result<std::string> name = Scalar<std::string>(p["name"], source, path + ".name");
    if (!name.ok()) return name.status();
    process.name = *name;
    if (!seen_processes.insert(process.name).second) {
      return Bad(source, path + ".name: Duplicate value: \"" + process.name + "\"");
    }
    for (size_t j = 0; j < p["stages"].size(); ++j) {
      std::string stage_path = path + ".stages[" + std::to_string(j) + "]";
      Result<std::string> stage_text = Scalar<std::string>(p["stages"][j], source, stage_path);
      if (!stage_text.ok()) return stage_text.status();
      const std::string& stage = *stage_text;
      if (std::find(KnownStages().begin(), KnownStages().end(), stage) == KnownStages().end()) {
        return Bad(source, stage_path + ": unknown stage \"" + stage + "\"");
      }
      if (!seen_stages.insert(stage).second) {
        return Bad(source, stage_path + ": stage \"" + stage + "\" runs in two processes");
      }
      process.stages.push_back(stage);
    }
    spec.processes.push_back(std::move(process));
  }
  for (const std::string& stage : KnownStages()) {
    if (!seen_stages.count(stage)) return Bad(source, "processes: no process runs stage \"" + stage + "\"");
  }
  // inproc:// only reaches stages in the same process.
  if (spec.processes.size() > 1) {
    for (const auto& [name, endpoint] : spec.channels) {
      if (endpoint.rfind("inproc://", 0) == 0) {
        return Bad(source, "channels." + name + ": inproc:// cannot join stages in different processes");
      }
    }
  }
  return spec;
}

Result<ClusterConfig> LoadConfig(const std::string& path) {
  ClusterConfig config;
  std::string text;
  std::filesystem::path base_dir = ".";
  if (path.empty()) {
    config.source = "<embedded default>";
    text = DefaultConfigText();
  } else {
    config.source = path;
    Result<std::string> read = ReadFile(path);
    if (!read.ok()) return read.status();
    text = std::move(*read);
    base_dir = std::filesystem::path(path).parent_path();
  }
  const std::string& source = config.source;
  Result<YAML::Node> root = LoadYaml(text, source);
  if (!root.ok()) return root.status();
  if (!root->IsMap()) return Bad(source, "expected a map");
  // The stages that take settings; the others have none, so their names are
  // unknown fields like any other.
  static const std::set<std::string> kSections = {"admission", "scheduler", "runtime", "proxy",
                                                     "controllers"};
  std::string pipeline = "single-process";
  for (const auto& entry : *root) {
    Result<std::string> key_text = Key(entry.first, source, "");
    if (!key_text.ok()) return key_text.status();
    const std::string& key = *key_text;
    if (key == "pipeline") {
      Result<std::string> v = Scalar<std::string>(entry.second, source, "pipeline");
      if (!v.ok()) return v.status();
      pipeline = *v;
    } else if (key == "storage") {
      for (const auto& s : entry.second) {
        Result<std::string> skey_text = Key(s.first, source, "storage");
        if (!skey_text.ok()) return skey_text.status();
        const std::string& skey = *skey_text;
        if (skey == "dataDir") {
          Result<std::string> v = Scalar<std::string>(s.second, source, "storage.dataDir");
          if (!v.ok()) return v.status();
          config.data_dir = *v;
        } else if (skey == "sync") {
          Result<bool> v = Scalar<bool>(s.second, source, "storage.sync");
          if (!v.ok()) return v.status();
          config.sync = *v;
        } else if (skey == "compactionInterval") {
          Result<std::string> v = Scalar<std::string>(s.second, source, "storage.compactionInterval");
          if (!v.ok()) return v.status();
          std::optional<SimDuration> d = ParseGoDuration(*v);
          if (!d || (d->count() > 0 && *d < std::chrono::seconds(1))) {
            return Bad(source, "storage.compactionInterval: Invalid value: \"" + *v +
                                   "\": a duration of at least 1s (5m, 1h), or 0 for never");
          }
          config.compaction_interval = *d;
        } else {
          return Bad(source, "storage." + skey + ": unknown field");
        }
      }
    } else if (kSections.count(key)) {
      config.sections[key] = entry.second;
    } else {
      return Bad(source, key + ": unknown field");
    }
  }
  if (const char* embedded = EmbeddedPipelineText(pipeline)) {
    Result<PipelineSpec> spec = ParsePipeline(embedded, "pipelines/" + pipeline + ".yaml");
    if (!spec.ok()) return spec.status();
    config.pipeline = std::move(*spec);
    config.pipeline.name = pipeline;
  } else {
    std::filesystem::path file = base_dir / pipeline;
    Result<std::string> read = ReadFile(file.string());
    if (!read.ok()) {
      return Bad(source, "pipeline: \"" + pipeline +
                             "\" is neither an embedded pipeline (single-process, multi-process) "
                             "nor a readable file");
    }
    Result<PipelineSpec> spec = ParsePipeline(*read, file.string());
    if (!spec.ok()) return spec.status();
    config.pipeline = std::move(*spec);
  }
  return config;
}

const char* DefaultConfigText() { return embedded::Find("config/default.yaml"); }

const char* EmbeddedPipelineText(const std::string& name) {
  return embedded::Find(("pipelines/" + name + ".yaml").c_str());
}

}  // namespace podflow::pipeline
