#include <algorithm>
#include <thread>
#include <vector>

#include "base/logging.h"
#include "pipeline/credentials.h"
#include "pipeline/stage.h"

namespace podflow::pipeline {

Status StageRegistry::Add(std::string name, StageFactory factory) {
  if (factories_.count(name)) return Status::Invalid("stage \"" + name + "\" is registered twice");
  factories_.emplace(std::move(name), std::move(factory));
  return Status::Ok();
}

const StageFactory* StageRegistry::Find(const std::string& name) const {
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : &it->second;
}

Status RunProcess(const ClusterConfig& config, const StageRegistry& registry,
                  const std::string& process, const std::atomic<bool>& stop) {
  auto log = Logger("pipeline");
  const ProcessSpec* spec = nullptr;
  for (const ProcessSpec& p : config.pipeline.processes) {
    if (p.name == process) spec = &p;
  }
  if (spec == nullptr) return Status::Invalid("pipeline " + config.pipeline.name + " has no process \"" + process + "\"");

  // Every tcp:// and ipc:// socket is authenticated: the stages of this
  // process speak as themselves, and its sockets admit the data dir's
  // identities only.
  PODFLOW_RETURN_IF_ERROR(CheckIpcDirs(config));
  PODFLOW_RETURN_IF_ERROR(EnsureCredentials(config.data_dir));
  // The controllers stage's controllers speak as themselves too.
  std::vector<std::string> identities = spec->stages;
  if (std::find(identities.begin(), identities.end(), "controllers") != identities.end()) {
    identities.insert(identities.end(), kControllerIdentities.begin(), kControllerIdentities.end());
  }
  Result<bus::Security> security = LoadSecurity(config.data_dir, identities, /*serve=*/true);
  if (!security.ok()) return security.status();
  bus::Context bus_context;
  PODFLOW_RETURN_IF_ERROR(bus_context.Secure(std::move(*security)));
  StageContext context{bus_context, config};
  // Start in the pipeline's natural order (persistence first), whatever the
  // order in the file.
  std::vector<std::string> order;
  for (const std::string& stage : KnownStages()) {
    if (std::find(spec->stages.begin(), spec->stages.end(), stage) != spec->stages.end()) order.push_back(stage);
  }
  std::vector<std::unique_ptr<StageHandle>> stages;
  for (const std::string& name : order) {
    const StageFactory* factory = registry.Find(name);
    if (factory == nullptr) return Status::Internal("no factory for stage " + name);
    Result<std::unique_ptr<StageHandle>> stage = (*factory)(context);
    if (!stage.ok()) return Status(stage.status().code(), "stage " + name + ": " + stage.status().message());
    stages.push_back(std::move(*stage));
  }
  Status result;
  size_t started = 0;
  for (; started < stages.size(); ++started) {
    Status s = stages[started]->Start();
    if (!s.ok()) {
      result = Status(s.code(), "stage " + std::string(stages[started]->Name()) + ": " + s.message());
      break;
    }
    log->info("stage {} started", stages[started]->Name());
  }
  if (result.ok()) {
    log->info("process {} running {} stage(s) of pipeline {}", process, stages.size(), config.pipeline.name);
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  while (started-- > 0) {
    stages[started]->Stop();
    log->info("stage {} stopped", stages[started]->Name());
  }
  return result;
}

}  // namespace podflow::pipeline
