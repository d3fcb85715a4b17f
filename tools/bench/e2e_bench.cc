// podflow-bench e2e [--config FILE] [--count N]: the whole pipeline in this
// process on the 1,000-node bench config (config/bench-1000.yaml; zero pull
// time, durable log in a scratch directory), driven as podflow-publish
// --count N --wait drives it:
//  1. as fast as admission takes them: pods/s from the first submit to the
//     last pod Running, and submit -> Running latency percentiles;
//  2. N/2 more pods at half that rate: the latency percentiles a steady load
//     sees (the target: p99 under 50 ms).
// Prints key=value lines; the pipeline's own logs go to stderr (warn level).
#include <stdlib.h>
#include <sys/resource.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench.h"
#include "pipeline_driver.h"
#include "base/logging.h"
#include "cli/publish.h"
#include "cli/stages.h"
#include "model/objects.h"
#include "pipeline/credentials.h"
#include "pipeline/stage.h"
#include "client/client.h"
#include "stages/runtime/runtime.h"

namespace podflow::bench {
namespace {

void EmitLatencies(const std::string& prefix, std::vector<double>* ms) {
  Emit(prefix + "p50_ms", Percentile(ms, 50));
  Emit(prefix + "p90_ms", Percentile(ms, 90));
  Emit(prefix + "p99_ms", Percentile(ms, 99));
  Emit(prefix + "max_ms", ms->empty() ? 0 : ms->back());
}

}  // namespace

int RunE2eBench(const std::vector<std::string>& args) {
  std::string config_file = std::string(PODFLOW_SOURCE_DIR) + "/config/bench-1000.yaml";
  int64_t count = 20'000;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--config") config_file = args[i + 1];
    else if (args[i] == "--count") count = std::stoll(args[i + 1]);
    else {
      std::fprintf(stderr, "usage: podflow-bench e2e [--config FILE] [--count N]\n");
      return 2;
    }
  }
  Result<pipeline::ClusterConfig> config = pipeline::LoadConfig(config_file);
  if (!config.ok()) {
    std::fprintf(stderr, "podflow-bench e2e: %s\n", config.status().ToString().c_str());
    return 1;
  }
  std::string scratch = (std::filesystem::current_path() / "podflow-bench-XXXXXX").string();
  if (mkdtemp(scratch.data()) == nullptr) return 1;
  config->data_dir = scratch + "/data";
  spdlog::set_level(spdlog::level::warn);

  if (config->pipeline.processes.size() != 1) {
    std::fprintf(stderr, "podflow-bench e2e: the config's pipeline must be a single process\n");
    return 1;
  }
  Result<runtime::RuntimeConfig> runtime_config = runtime::ParseRuntimeConfig(config->Section("runtime"));
  if (!runtime_config.ok()) {
    std::fprintf(stderr, "podflow-bench e2e: %s\n", runtime_config.status().ToString().c_str());
    return 1;
  }
  const size_t want_nodes = runtime::ResolveNodes(*runtime_config)->size();

  Result<std::unique_ptr<PipelineThread>> run =
      PipelineThread::Start(*config, config->pipeline.processes.at(0).name, scratch);
  if (!run.ok()) {
    std::fprintf(stderr, "podflow-bench e2e: %s\n", run.status().ToString().c_str());
    return 1;
  }
  auto finish = [&](int code) { return (*run)->Finish(code); };

  // Up when every node has registered; a pipeline that could not start
  // (e.g. its ports are taken by another podflow) ends the run.
  bus::Context context;
  if (Status secured = pipeline::SecureTool(context, config->data_dir); !secured.ok()) {
    std::fprintf(stderr, "podflow-bench e2e: %s\n", secured.ToString().c_str());
    return finish(1);
  }
  client::ApiClient api(context, config->Endpoint("api"));
  const size_t nodes = WaitForNodes(api, want_nodes, (*run)->exited());
  if ((*run)->exited() || nodes < want_nodes) {
    std::fprintf(stderr, "podflow-bench e2e: the pipeline did not come up (%zu of %zu nodes)\n", nodes, want_nodes);
    return finish(1);
  }
  Emit("nodes", static_cast<double>(nodes));

  cli::PublishReport fast;
  cli::PublishOptions options;
  options.config_file = config_file;
  options.data_dir = config->data_dir;
  options.count = count;
  options.wait = true;
  options.template_file = WriteTemplate(scratch, "fast");
  options.report = &fast;
  int code = cli::RunPublish(options);
  if (code != 0) {
    std::fprintf(stderr, "podflow-bench e2e: the first phase failed (%zu of %lld pods Running)\n", fast.running,
                 static_cast<long long>(count));
    return finish(code);
  }
  Emit("pods", static_cast<double>(fast.running));
  Emit("pods_per_s", fast.seconds > 0 ? static_cast<double>(fast.running) / fast.seconds : 0);
  EmitLatencies("", &fast.latency_ms);

  cli::PublishReport steady;
  const double rate = static_cast<double>(fast.running) / std::max(fast.seconds, 1e-3) / 2;
  options.count = count / 2;
  options.rate = rate;
  options.template_file = WriteTemplate(scratch, "steady");
  options.report = &steady;
  code = cli::RunPublish(options);
  if (code != 0) {
    std::fprintf(stderr, "podflow-bench e2e: the half-rate phase failed\n");
    return finish(code);
  }
  Emit("half_rate_pods_per_s", rate);
  EmitLatencies("half_rate_", &steady.latency_ms);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  Emit("peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024.0);
  return finish(0);
}

}  // namespace podflow::bench
