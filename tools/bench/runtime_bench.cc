// podflow-bench runtime [--nodes N] [--pods N]: the memory of the runtime
// stage at 5,000 simulated nodes. The pipeline runs as two processes: the
// runtime stage alone in a child (`podflow stage runtime`, the binary beside
// this one) and every other stage in this process, on a durable log in a
// scratch directory; pods are published as `podflow-publish --count N
// --wait` does (the "fast" template). Prints the runtime process's resident
// memory (VmRSS) once its nodes are registered and once every pod is
// Running, its peak (VmHWM), and what that comes to per node and per pod.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench.h"
#include "pipeline_driver.h"
#include "base/logging.h"
#include "cli/publish.h"
#include "cli/stages.h"
#include "pipeline/config.h"
#include "pipeline/credentials.h"
#include "pipeline/stage.h"

namespace podflow::bench {
namespace {

// A /proc/PID/status field in MiB ("VmRSS", "VmHWM"); -1 when unreadable.
double ProcMiB(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream value(line.substr(field.size() + 1));
    double kib = -1;
    value >> kib;
    return kib < 0 ? -1 : kib / 1024.0;
  }
  return -1;
}

// The two-process cluster: `core` (every stage but the runtime) and `runtime`.
std::string WriteCluster(const std::string& dir, int64_t nodes) {
  std::ofstream pipeline(dir + "/pipeline.yaml");
  pipeline << "channels:\n";
  for (const std::string& ch : pipeline::RequiredChannels()) pipeline << "  " << ch << ": ipc://" << ch << ".sock\n";
  pipeline << "processes:\n  - name: core\n    stages: [";
  const char* sep = "";
  for (const std::string& stage : pipeline::KnownStages()) {
    if (stage == "runtime") continue;
    pipeline << sep << stage;
    sep = ", ";
  }
  pipeline << "]\n  - {name: runtime, stages: [runtime]}\n";
  const std::string path = dir + "/cluster.yaml";
  std::ofstream(path) << "pipeline: pipeline.yaml\n"
                      << "storage: {dataDir: " << dir << "/data, sync: true}\n"
                      << "scheduler: {seed: 1}\n"
                      << "runtime:\n  clusterCIDR: 10.0.0.0/8\n"
                      << "  nodeTemplate: {count: " << nodes
                      << ", namePrefix: node-, capacity: {cpu: \"32\", memory: 128Gi, pods: \"110\"}}\n"
                      << "  registry:\n    - {name: nginx, sizeBytes: 44000000, pullMillis: 0}\n";
  return path;
}

// Starts `podflow stage runtime` (the binary beside this one), its output
// to `log`; it ends with this process. Only async-signal-safe calls between
// fork and exec (the core stages' threads run already).
pid_t StartRuntime(const std::string& config, const std::string& log) {
  const std::string podflow = (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "podflow").string();
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return -1;
  const pid_t parent = ::getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) _exit(1);  // the bench ended already
    ::dup2(out, STDOUT_FILENO);
    ::dup2(out, STDERR_FILENO);
    execl(podflow.c_str(), podflow.c_str(), "stage", "runtime", "--config", config.c_str(), nullptr);
    _exit(127);
  }
  ::close(out);
  return pid;
}

}  // namespace

int RunRuntimeBench(const std::vector<std::string>& args) {
  int64_t node_count = 5'000;
  int64_t pod_count = 20'000;
  for (size_t i = 0; i + 1 < args.size(); i += 2) {
    if (args[i] == "--nodes") node_count = std::stoll(args[i + 1]);
    else if (args[i] == "--pods") pod_count = std::stoll(args[i + 1]);
    else {
      std::fprintf(stderr, "usage: podflow-bench runtime [--nodes N] [--pods N]\n");
      return 2;
    }
  }
  if (args.size() % 2 != 0 || node_count < 1 || node_count > 60'000 || pod_count < 1) {
    std::fprintf(stderr, "usage: podflow-bench runtime [--nodes 1..60000] [--pods N>0]\n");
    return 2;
  }
  std::string scratch = (std::filesystem::current_path() / "podflow-bench-XXXXXX").string();
  if (mkdtemp(scratch.data()) == nullptr) return 1;
  const std::string config_file = WriteCluster(scratch, node_count);
  Result<pipeline::ClusterConfig> config = pipeline::LoadConfig(config_file);
  if (!config.ok()) {
    std::fprintf(stderr, "podflow-bench runtime: %s\n", config.status().ToString().c_str());
    return 1;
  }
  spdlog::set_level(spdlog::level::warn);
  Result<std::unique_ptr<PipelineThread>> run = PipelineThread::Start(*config, "core", scratch);
  if (!run.ok()) {
    std::fprintf(stderr, "podflow-bench runtime: %s\n", run.status().ToString().c_str());
    return 1;
  }
  const pid_t runtime = StartRuntime(config_file, scratch + "/runtime.log");
  auto finish = [&](int code) {
    if (runtime > 0) {
      kill(runtime, SIGTERM);
      waitpid(runtime, nullptr, 0);
    }
    return (*run)->Finish(code);
  };
  if (runtime < 0) {
    std::fprintf(stderr, "podflow-bench runtime: cannot start the runtime process\n");
    return finish(1);
  }

  bus::Context context;
  if (Status secured = pipeline::SecureTool(context, config->data_dir); !secured.ok()) {
    std::fprintf(stderr, "podflow-bench runtime: %s\n", secured.ToString().c_str());
    return finish(1);
  }
  client::ApiClient api(context, config->Endpoint("api"));
  const auto registering = std::chrono::steady_clock::now();
  const size_t nodes = WaitForNodes(api, static_cast<size_t>(node_count), (*run)->exited());
  if ((*run)->exited() || nodes < static_cast<size_t>(node_count) || waitpid(runtime, nullptr, WNOHANG) != 0) {
    std::fprintf(stderr, "podflow-bench runtime: the pipeline did not come up (%zu of %lld nodes; see %s)\n", nodes,
                 static_cast<long long>(node_count), (scratch + "/runtime.log").c_str());
    return finish(1);
  }
  Emit("nodes", static_cast<double>(nodes));
  Emit("register_s", MicrosSince(registering) / 1e6);
  // Leases written and the loop settled: the footprint of the nodes alone.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const double idle = ProcMiB(runtime, "VmRSS");
  Emit("runtime_rss_nodes_only_mb", idle);

  cli::PublishReport report;
  cli::PublishOptions options;
  options.config_file = config_file;
  options.data_dir = config->data_dir;
  options.count = pod_count;
  options.wait = true;
  options.template_file = WriteTemplate(scratch, "fast");
  options.report = &report;
  const int code = cli::RunPublish(options);
  if (code != 0) {
    std::fprintf(stderr, "podflow-bench runtime: %zu of %lld pods Running\n", report.running,
                 static_cast<long long>(pod_count));
    return finish(code);
  }
  Emit("pods", static_cast<double>(report.running));
  Emit("pods_per_s", report.seconds > 0 ? static_cast<double>(report.running) / report.seconds : 0);
  const double loaded = ProcMiB(runtime, "VmRSS");
  Emit("runtime_rss_mb", loaded);
  Emit("runtime_peak_rss_mb", ProcMiB(runtime, "VmHWM"));
  Emit("runtime_kb_per_node", idle * 1024.0 / static_cast<double>(nodes));
  Emit("runtime_kb_per_pod", (loaded - idle) * 1024.0 / static_cast<double>(report.running));
  return finish(0);
}

}  // namespace podflow::bench
