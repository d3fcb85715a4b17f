// `podflow run` (the whole pipeline) and `podflow stage` (one process of it).
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <vector>

#include "base/logging.h"
#include "cli/commands.h"
#include "cli/stages.h"
#include "pipeline/credentials.h"
#include "pipeline/stage.h"

namespace podflow::cli {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop = true; }

void InstallSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

struct RunOptions {
  std::string config_file;
  std::string data_dir;
  std::string process;  // podflow stage NAME
};

Result<pipeline::ClusterConfig> Load(const RunOptions& options) {
  Result<pipeline::ClusterConfig> config = pipeline::LoadConfig(options.config_file);
  if (config.ok() && !options.data_dir.empty()) config->data_dir = options.data_dir;
  return config;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "podflow: %s\n", status.message().c_str());
  return 1;
}

// Runs one process of the pipeline in this process.
int RunOne(const pipeline::ClusterConfig& config, const std::string& process) {
  Result<pipeline::StageRegistry> registry = AllStages();
  if (!registry.ok()) return Fail(registry.status());
  InstallSignalHandlers();
  Status status = pipeline::RunProcess(config, *registry, process, g_stop);
  if (!status.ok()) return Fail(status);
  return 0;
}

// Starts every process of a multi-process pipeline as `podflow stage NAME`
// and supervises them: a signal is passed on to all; one dying stops all;
// the supervisor dying (even by SIGKILL) stops all.
int RunSupervised(const pipeline::ClusterConfig& config, const RunOptions& options) {
  auto log = Logger("pipeline");
  // Made once here (the children would race to): keys, token, run dir.
  if (Status made = pipeline::EnsureCredentials(config.data_dir); !made.ok()) return Fail(made);
  InstallSignalHandlers();
  std::vector<pid_t> children;
  for (const pipeline::ProcessSpec& process : config.pipeline.processes) {
    std::vector<std::string> args = {"/proc/self/exe", "stage", process.name, "--data-dir", config.data_dir};
    if (!options.config_file.empty()) {
      args.push_back("--config");
      args.push_back(options.config_file);
    }
    const pid_t supervisor = getpid();
    pid_t pid = fork();
    if (pid == 0) {
      // A child never outlives its supervisor, even one killed with -9: it
      // is told to stop (SIGTERM) when the supervisor dies; if that already
      // happened before this line, it stops now.
      if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != supervisor) _exit(1);
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv("/proc/self/exe", argv.data());
      std::perror("podflow: exec");
      _exit(127);
    }
    if (pid < 0) {
      std::perror("podflow: fork");
      g_stop = true;
      break;
    }
    log->info("process {} started (pid {})", process.name, pid);
    children.push_back(pid);
  }
  int exit_code = 0;
  size_t alive = children.size();
  bool signalled = false;
  while (alive > 0) {
    if (g_stop && !signalled) {
      for (pid_t pid : children) kill(pid, SIGTERM);
      signalled = true;
    }
    int status = 0;
    pid_t done = waitpid(-1, &status, WNOHANG);
    if (done > 0) {
      --alive;
      if (!g_stop) {
        log->error("process {} exited (status {}); stopping the pipeline", done, status);
        exit_code = 1;
        g_stop = true;
      }
      continue;
    }
    usleep(50 * 1000);
  }
  return exit_code;
}

}  // namespace

void AddRunCommands(CLI::App& app, CommandAction& action) {
  auto run = std::make_shared<RunOptions>();
  CLI::App* run_cmd = app.add_subcommand(
      "run", "Run the pipeline (embedded default without --config: one process, three simulated nodes)");
  run_cmd->add_option("--config", run->config_file, "Cluster configuration file (config/README.md)");
  run_cmd->add_option("--data-dir", run->data_dir, "Event log directory (default: the config's storage.dataDir)");
  run_cmd->callback([&action, run] {
    action = [run] {
      Result<pipeline::ClusterConfig> config = Load(*run);
      if (!config.ok()) return Fail(config.status());
      if (config->pipeline.processes.size() == 1) return RunOne(*config, config->pipeline.processes[0].name);
      return RunSupervised(*config, *run);
    };
  });

  auto stage = std::make_shared<RunOptions>();
  CLI::App* stage_cmd = app.add_subcommand("stage", "Run one process of the pipeline (its stages) in this process");
  stage_cmd->add_option("NAME", stage->process, "Process name in the pipeline file (e.g. scheduling)")->required();
  stage_cmd->add_option("--config", stage->config_file, "Cluster configuration file");
  stage_cmd->add_option("--data-dir", stage->data_dir, "Event log directory");
  stage_cmd->callback([&action, stage] {
    action = [stage] {
      Result<pipeline::ClusterConfig> config = Load(*stage);
      if (!config.ok()) return Fail(config.status());
      return RunOne(*config, stage->process);
    };
  });
}

}  // namespace podflow::cli
