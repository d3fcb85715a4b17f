#include "pipeline_driver.h"

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cli/publish.h"
#include "cli/stages.h"
#include "model/objects.h"
#include "base/logging.h"
#include "pipeline/credentials.h"
#include "stages/runtime/runtime.h"

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

std::unique_ptr<BenchCluster> StartBenchCluster(const std::string& config_file, const std::string& bench) {
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "podflow-bench %s: %s\n", bench.c_str(), why.c_str());
    return nullptr;
  };
  Result<pipeline::ClusterConfig> config = pipeline::LoadConfig(config_file);
  if (!config.ok()) return fail(config.status().ToString());
  auto cluster = std::make_unique<BenchCluster>();
  cluster->config = std::move(*config);
  cluster->scratch = (std::filesystem::current_path() / "podflow-bench-XXXXXX").string();
  if (mkdtemp(cluster->scratch.data()) == nullptr) return nullptr;
  cluster->config.data_dir = cluster->scratch + "/data";
  spdlog::set_level(spdlog::level::warn);
  if (cluster->config.pipeline.processes.size() != 1) return fail("the config's pipeline must be a single process");
  Result<runtime::RuntimeConfig> runtime_config = runtime::ParseRuntimeConfig(cluster->config.Section("runtime"));
  if (!runtime_config.ok()) return fail(runtime_config.status().ToString());
  const size_t want_nodes = runtime::ResolveNodes(*runtime_config)->size();
  Result<std::unique_ptr<PipelineThread>> run =
      PipelineThread::Start(cluster->config, cluster->config.pipeline.processes.at(0).name, cluster->scratch);
  if (!run.ok()) return fail(run.status().ToString());
  cluster->run = std::move(*run);
  // Up when every node has registered; a pipeline that could not start
  // (e.g. its ports are taken by another podflow) ends the run.
  if (Status secured = pipeline::SecureTool(cluster->context, cluster->config.data_dir); !secured.ok()) {
    cluster->Finish(1);
    return fail(secured.ToString());
  }
  client::ApiClient api(cluster->context, cluster->config.Endpoint("api"));
  cluster->nodes = WaitForNodes(api, want_nodes, cluster->run->exited());
  if (cluster->run->exited() || cluster->nodes < want_nodes) {
    cluster->Finish(1);
    return fail("the pipeline did not come up (" + std::to_string(cluster->nodes) + " of " +
                std::to_string(want_nodes) + " nodes)");
  }
  return cluster;
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
