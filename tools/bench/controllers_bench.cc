// podflow-bench controllers [--config FILE] [--replicas N]: the whole
// pipeline in this process on the 1,000-node bench config, and a
// Deployment of N replicas (1,000):
//  1. created, until it is Available with every replica updated and
//     available: seconds and pods/s;
//  2. its template changed, until the rolling update (25% / 25%) is
//     complete: seconds and pods/s;
// and, for comparison in the same run, N bare pods published as
// podflow-publish --count N --wait does (no controller in their way):
// pods/s, and each phase's pods/s as a fraction of it.
// Prints key=value lines.
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "apps_generated.h"
#include "bench.h"
#include "pipeline_driver.h"
#include "base/logging.h"
#include "cli/api_session.h"
#include "cli/publish.h"
#include "model/objects.h"
#include "pipeline/credentials.h"
#include "stages/runtime/runtime.h"

namespace podflow::bench {
namespace {

std::string DeploymentJson(int64_t replicas) {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"bench"},"spec":{"replicas":)" +
         std::to_string(replicas) +
         R"(,"selector":{"matchLabels":{"app":"bench"}},"template":{"metadata":{"labels":{"app":"bench"}},)"
         R"("spec":{"containers":[{"name":"app","image":"nginx:1.14.2",)"
         R"("resources":{"requests":{"cpu":"10m","memory":"16Mi"}}}]}}}})";
}

// Waits until the Deployment has every replica updated and available at
// `generation`; seconds taken, or a negative number on timeout.
double WaitRolledOut(cli::ApiSession& api, int64_t replicas, int64_t generation, std::chrono::steady_clock::time_point t0) {
  cli::ApiCall get;
  get.verb = "get";
  get.resource = "deployments.apps";
  get.namespace_ = "default";
  get.name = "bench";
  const auto deadline = t0 + std::chrono::minutes(10);
  while (std::chrono::steady_clock::now() < deadline) {
    Result<cli::ApiResponse> got = api.Call(get);
    if (got.ok() && got->status.success() && !got->objects.empty()) {
      const api::Deployment* d = flatbuffers::GetRoot<api::Deployment>(got->objects[0].value.data());
      const api::DeploymentStatus* s = d->status();
      if (s != nullptr && s->observed_generation() >= generation && s->replicas() == replicas &&
          s->updated_replicas() == replicas && s->available_replicas() == replicas) {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

}  // namespace

int RunControllersBench(const std::vector<std::string>& args) {
  std::string config_file = std::string(PODFLOW_SOURCE_DIR) + "/config/bench-1000.yaml";
  int64_t replicas = 1'000;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--config") config_file = args[i + 1];
    else if (args[i] == "--replicas") replicas = std::stoll(args[i + 1]);
    else {
      std::fprintf(stderr, "usage: podflow-bench controllers [--config FILE] [--replicas N]\n");
      return 2;
    }
  }
  std::unique_ptr<BenchCluster> cluster = StartBenchCluster(config_file, "controllers");
  if (cluster == nullptr) return 1;
  auto finish = [&](int code) { return cluster->Finish(code); };
  const pipeline::ClusterConfig* config = &cluster->config;
  const std::string& scratch = cluster->scratch;
  const size_t nodes = cluster->nodes;
  Emit("nodes", static_cast<double>(nodes));
  Emit("replicas", static_cast<double>(replicas));

  // The reference: as many bare pods, as fast as admission takes them.
  cli::PublishReport bare;
  cli::PublishOptions options;
  options.config_file = config_file;
  options.data_dir = config->data_dir;
  options.count = replicas;
  options.wait = true;
  options.template_file = WriteTemplate(scratch, "fast");
  options.report = &bare;
  if (int code = cli::RunPublish(options); code != 0) {
    std::fprintf(stderr, "podflow-bench controllers: the bare pods did not all run\n");
    return finish(code);
  }
  const double bare_rate = bare.seconds > 0 ? static_cast<double>(bare.running) / bare.seconds : 0;
  Emit("bare_pods_per_s", bare_rate);

  cli::ConnectionFlags flags;
  flags.config = config_file;
  flags.data_dir = config->data_dir;
  Result<std::unique_ptr<cli::ApiSession>> api = cli::Connect(flags);
  if (!api.ok()) {
    std::fprintf(stderr, "podflow-bench controllers: %s\n", api.status().ToString().c_str());
    return finish(1);
  }
  cli::ApiCall create;
  create.verb = "create";
  create.resource = "deployments.apps";
  create.namespace_ = "default";
  create.body = DeploymentJson(replicas);
  auto t0 = std::chrono::steady_clock::now();
  Result<cli::ApiResponse> created = (*api)->Call(create);
  if (!created.ok() || !created->status.success()) {
    std::fprintf(stderr, "podflow-bench controllers: creating the Deployment: %s\n",
                 created.ok() ? created->status.message.c_str() : created.status().ToString().c_str());
    return finish(1);
  }
  const double available = WaitRolledOut(**api, replicas, 1, t0);
  if (available < 0) {
    std::fprintf(stderr, "podflow-bench controllers: the Deployment did not become Available\n");
    return finish(1);
  }
  Emit("available_seconds", available);
  Emit("available_pods_per_s", static_cast<double>(replicas) / available);
  Emit("available_vs_bare", bare_rate > 0 ? static_cast<double>(replicas) / available / bare_rate : 0);

  cli::ApiCall patch;
  patch.verb = "patch";
  patch.resource = "deployments.apps";
  patch.namespace_ = "default";
  patch.name = "bench";
  patch.patch_type = "strategic";
  patch.body = R"({"spec":{"template":{"metadata":{"annotations":{"bench/revision":"2"}}}}})";
  t0 = std::chrono::steady_clock::now();
  Result<cli::ApiResponse> patched = (*api)->Call(patch);
  if (!patched.ok() || !patched->status.success()) {
    std::fprintf(stderr, "podflow-bench controllers: changing the template failed\n");
    return finish(1);
  }
  const double rolled = WaitRolledOut(**api, replicas, 2, t0);
  if (rolled < 0) {
    std::fprintf(stderr, "podflow-bench controllers: the rolling update did not complete\n");
    return finish(1);
  }
  Emit("rollout_seconds", rolled);
  Emit("rollout_pods_per_s", static_cast<double>(replicas) / rolled);
  Emit("rollout_vs_bare", bare_rate > 0 ? static_cast<double>(replicas) / rolled / bare_rate : 0);
  return finish(0);
}

}  // namespace podflow::bench
