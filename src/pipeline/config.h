// What `podflow run --config FILE` reads: the cluster configuration and the
// pipeline it runs on. The formats are documented in config/README.md and
// pipelines/README.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/clock.h"
#include "base/result.h"

namespace podflow::pipeline {

// One process of a pipeline and the stages it runs.
struct ProcessSpec {
  std::string name;
  std::vector<std::string> stages;
};

// A stage graph: which endpoint each channel uses, which process runs which
// stage.
struct PipelineSpec {
  std::string name;
  std::map<std::string, std::string> channels;  // channel name -> ZeroMQ endpoint
  std::vector<ProcessSpec> processes;

  // The endpoint of `channel`. REQUIRES: Validate() passed.
  const std::string& Endpoint(const std::string& channel) const { return channels.at(channel); }
  // The process that runs `stage`, or nullptr.
  const ProcessSpec* ProcessOf(const std::string& stage) const;
};

// The cluster: storage, the pipeline, and each stage's own section, which
// the stage parses and checks itself when it is created.
struct ClusterConfig {
  std::string source;  // file path, or "<embedded default>"
  std::string data_dir = "podflow-data";
  bool sync = true;
  // How often the persistence stage compacts the log, as kube-apiserver's
  // --etcd-compaction-interval: each time, the history below the revision
  // seen at the previous time goes. 0: never (the whole history stays for
  // replay).
  SimDuration compaction_interval{0};
  PipelineSpec pipeline;
  std::map<std::string, YAML::Node> sections;  // admission, scheduler, runtime, ...

  YAML::Node Section(const std::string& name) const;
  // The endpoint of `channel`, with a relative ipc:// path placed in the
  // data dir's run directory (RunDir: only the owner may enter it).
  // REQUIRES: the pipeline passed validation.
  std::string Endpoint(const std::string& channel) const;
};

// The channels every pipeline must name, and the stages there are
// (kStageNames, in start order).
const std::vector<std::string>& RequiredChannels();
const std::vector<std::string>& KnownStages();

// Parses a pipeline file. Invalid names the file and the key.
Result<PipelineSpec> ParsePipeline(const std::string& text, const std::string& source);

// Loads the cluster configuration from `path`, or the embedded default when
// `path` is empty. The pipeline is `pipeline:` in it: an embedded name
// ("single-process", "multi-process") or a file relative to the config.
Result<ClusterConfig> LoadConfig(const std::string& path);

// The embedded defaults (the same text as config/default.yaml and
// pipelines/*.yaml; a test keeps them equal).
const char* DefaultConfigText();
const char* EmbeddedPipelineText(const std::string& name);  // nullptr if unknown

}  // namespace podflow::pipeline
