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
  std::unique_ptr<BenchCluster> cluster = StartBenchCluster(config_file, "e2e");
  if (cluster == nullptr) return 1;
  auto finish = [&](int code) { return cluster->Finish(code); };
  const pipeline::ClusterConfig* config = &cluster->config;
  const std::string& scratch = cluster->scratch;
  const size_t nodes = cluster->nodes;
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
