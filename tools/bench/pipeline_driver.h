// What the benchmarks that run a whole pipeline share (e2e_bench.cc,
// runtime_bench.cc).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "base/result.h"
#include "client/client.h"
#include "pipeline/config.h"
#include "pipeline/stage.h"

namespace podflow::bench {

// Writes podflow-publish's pod template `name` ("fast", "steady") into
// `dir`; its path.
std::string WriteTemplate(const std::string& dir, const std::string& name);

// Polls the API until `want` Nodes are stored, for up to a minute or until
// `exited` (the pipeline ended); how many there were at the end.
size_t WaitForNodes(client::ApiClient& api, size_t want, const std::atomic<bool>& exited);

// One process of a pipeline (`process` of `config`, which must outlive it)
// run in a thread of this one, as `podflow run` runs it: every stage
// registered, the data dir's keys made before it starts (so that the
// tools find them). Finish stops it, removes the run's scratch directory
// and prints the run's error, if any.
class PipelineThread {
 public:
  static Result<std::unique_ptr<PipelineThread>> Start(const pipeline::ClusterConfig& config, std::string process,
                                                       std::string scratch);
  ~PipelineThread() { Finish(0); }
  PipelineThread(const PipelineThread&) = delete;
  PipelineThread& operator=(const PipelineThread&) = delete;

  // The pipeline ended (it could not start, or it failed).
  const std::atomic<bool>& exited() const { return exited_; }
  // Stops it (once) and cleans up; returns `code`.
  int Finish(int code);

 private:
  PipelineThread() = default;

  pipeline::StageRegistry registry_;
  std::string scratch_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> exited_{false};
  Status status_;
  std::thread thread_;
};

// A single-process bench pipeline, up: `config` (from the file, its data
// dir moved into `scratch`) run by `run`, every node registered, `context`
// secured as a tool's.
struct BenchCluster {
  pipeline::ClusterConfig config;
  std::string scratch;
  bus::Context context;
  std::unique_ptr<PipelineThread> run;
  size_t nodes = 0;
  int Finish(int code) { return run ? run->Finish(code) : code; }
};

// Loads `config_file` (whose pipeline must be a single process), starts it
// in a thread and waits for its nodes. On failure prints why, prefixed
// "podflow-bench `bench`: ", stops what it started and returns nullptr.
std::unique_ptr<BenchCluster> StartBenchCluster(const std::string& config_file, const std::string& bench);

}  // namespace podflow::bench
