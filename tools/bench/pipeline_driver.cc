#include "pipeline_driver.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/publish.h"
#include "cli/stages.h"
#include "model/objects.h"
#include "pipeline/credentials.h"

namespace podflow::bench {

std::string WriteTemplate(const std::string& dir, const std::string& name) {
  std::string path = dir + "/" + name + ".yaml";
  std::ofstream(path) << cli::LoadTemplate(name);
  return path;
}

size_t WaitForNodes(client::ApiClient& api, size_t want, const std::atomic<bool>& exited) {
  size_t nodes = 0;
  for (int i = 0; i < 600 && nodes < want && !exited; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Result<RangeResult> listed = api.List(model::KindPrefix(model::Kind("Node")));
    if (listed.ok()) nodes = listed->kvs.size();
  }
  return nodes;
}

Result<std::unique_ptr<PipelineThread>> PipelineThread::Start(const pipeline::ClusterConfig& config,
                                                              std::string process, std::string scratch) {
  std::unique_ptr<PipelineThread> run(new PipelineThread());
  run->scratch_ = std::move(scratch);
  Result<pipeline::StageRegistry> registry = cli::AllStages();
  if (!registry.ok()) return registry.status();
  run->registry_ = std::move(*registry);
  // The tools' keys exist before the pipeline's thread starts.
  if (Status made = pipeline::EnsureCredentials(config.data_dir); !made.ok()) return made;
  PipelineThread* self = run.get();
  run->thread_ = std::thread([self, &config, process = std::move(process)] {
    self->status_ = pipeline::RunProcess(config, self->registry_, process, self->stop_);
    self->exited_ = true;
  });
  return run;
}

int PipelineThread::Finish(int code) {
  if (!thread_.joinable()) return code;
  stop_ = true;
  thread_.join();
  std::error_code ec;
  if (!scratch_.empty()) std::filesystem::remove_all(scratch_, ec);
  if (!status_.ok()) std::fprintf(stderr, "pipeline: %s\n", status_.ToString().c_str());
  return code;
}

}  // namespace podflow::bench
