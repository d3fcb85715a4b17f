// podflow logs: kubectl logs — a container's log through the API's
// pods/log subresource (the apiserver asks the node's kubelet, the runtime
// stage). The container defaults as kubectl defaults it; -f asks again
// every second and prints what is new until the container stops running.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "base/clock.h"
#include "cli/api_session.h"
#include "cli/commands.h"
#include "cli/pod_target.h"
#include "model/objects.h"
#include "model/pod_phase.h"
#include "pod_generated.h"

namespace podflow::cli {
namespace {

struct LogsOptions : ConnectionFlags {
  std::string target;  // POD or pod/POD
  std::string container;
  bool previous = false;
  bool follow = false;
  bool timestamps = false;
  int64_t tail = -1;
  int64_t limit_bytes = 0;
  std::string since;
  std::string namespace_ = "default";
};

// Whether `container` of the stored pod is running (what -f follows).
bool Running(const api::Pod& pod, const std::string& container) {
  if (pod.status() == nullptr) return false;
  for (const auto* list : {pod.status()->container_statuses(), pod.status()->init_container_statuses()}) {
    if (list == nullptr) continue;
    for (const api::ContainerStatus* s : *list) {
      if (s->name() && s->name()->str() == container) return s->state() && s->state()->running();
    }
  }
  return false;
}

int RunLogs(const LogsOptions& options) {
  const std::string name = PodName(options.target);
  if (name.empty()) {
    std::fprintf(stderr, "error: a pod name is required: podflow logs POD [-c CONTAINER]\n");
    return 1;
  }
  // kubectl's own checks of its flags.
  if (options.limit_bytes < 0) {
    std::fprintf(stderr, "error: --limit-bytes must be greater than 0\n");
    return 1;
  }
  if (options.tail < -1) {
    std::fprintf(stderr, "error: --tail must be greater than or equal to -1\n");
    return 1;
  }
  ApiCall call;
  call.verb = "get";
  call.resource = "pods";
  call.subresource = "log";
  call.namespace_ = options.namespace_;
  call.name = name;
  ApiCall::LogOptions& log = call.log.emplace();
  log.previous = options.previous;
  log.timestamps = options.timestamps;
  if (options.tail >= 0) log.tail_lines = options.tail;
  if (options.limit_bytes != 0) log.limit_bytes = options.limit_bytes;
  if (!options.since.empty()) {
    std::optional<SimDuration> since = ParseGoDuration(options.since);
    if (!since) {
      std::fprintf(stderr, "error: invalid argument \"%s\" for \"--since\" flag: time: invalid duration \"%s\"\n",
                   options.since.c_str(), options.since.c_str());
      return 1;
    }
    // kubectl: 0 is no limit; anything else rounded to whole seconds
    // (so 400ms asks for 0, which the server refuses).
    if (since->count() != 0) {
      log.since_seconds = static_cast<int64_t>(std::llround(static_cast<double>(since->count()) / 1000.0));
    }
  }
  Result<std::unique_ptr<ApiSession>> api = Connect(options);
  if (!api.ok()) {
    std::fprintf(stderr, "error: %s\n", api.status().message().c_str());
    return 1;
  }
  std::optional<KeyValue> read = ReadPod(**api, options.namespace_, name);
  if (!read) return 1;
  const api::Pod& stored = *flatbuffers::GetRoot<api::Pod>(read->value.data());
  log.container = options.container.empty() ? DefaultContainer(stored) : options.container;
  // kubectl names a container the pod does not have itself.
  if (stored.spec() == nullptr || !model::HasContainer(*stored.spec(), log.container)) {
    std::fprintf(stderr, "error: container %s is not valid for pod %s\n", log.container.c_str(), name.c_str());
    return 1;
  }
  // -f: the lines after those shown, of the same run, each second, until
  // the container stops running (then once more for its last lines) or
  // is restarted.
  std::string run;
  bool last = false;
  while (true) {
    Result<ApiResponse> reply = (*api)->Call(call);
    if (!reply.ok()) {
      std::fprintf(stderr, "error: %s\n", reply.status().message().c_str());
      return 1;
    }
    if (!reply->status.success()) {
      std::fprintf(stderr, "%s\n", model::KubectlMessage(reply->status).c_str());
      return 1;
    }
    if (log.from_line && reply->log_run != run) {
      // Restarted meanwhile: what the followed run printed last is now the
      // previous log; then this run is over.
      log.previous = true;
      reply = (*api)->Call(call);
      if (reply.ok() && reply->status.success() && reply->log_run == run) {
        std::fwrite(reply->log.data(), 1, reply->log.size(), stdout);
        std::fflush(stdout);
      }
      return 0;
    }
    std::fwrite(reply->log.data(), 1, reply->log.size(), stdout);
    std::fflush(stdout);
    if (!options.follow || options.previous || last) return 0;
    run = reply->log_run;
    log.from_line = reply->log_lines;
    log.tail_lines.reset();
    log.since_seconds.reset();
    log.limit_bytes.reset();
    model::ApiStatusInfo refused;
    Result<std::optional<KeyValue>> pod = GetPod(**api, options.namespace_, name, &refused);
    last = !pod.ok() || !pod->has_value() ||
           !Running(*flatbuffers::GetRoot<api::Pod>((*pod)->value.data()), log.container);
    if (!last) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace

void AddLogsCommand(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<LogsOptions>();
  CLI::App* cmd = app.add_subcommand("logs", "Print the logs for a container in a pod, as kubectl logs");
  cmd->add_option("pod", options->target, "POD or pod/POD")->required();
  cmd->add_option("-c,--container", options->container, "The container (default: the pod's only or first one)");
  cmd->add_flag("-p,--previous", options->previous, "The logs of the container's previous run");
  cmd->add_flag("-f,--follow", options->follow, "Keep printing new lines while the container runs");
  cmd->add_flag("--timestamps", options->timestamps, "Start each line with its RFC 3339 time");
  cmd->add_option("--tail", options->tail, "Only the last N lines (-1: all)");
  cmd->add_option("--limit-bytes", options->limit_bytes, "At most this many bytes (0: no limit)");
  cmd->add_option("--since", options->since, "Only lines newer than this duration (5s, 2m, 3h)");
  cmd->add_option("-n,--namespace", options->namespace_, "The pod's namespace");
  AddConnectionFlags(cmd, options.get());
  cmd->callback([&action, options] { action = [options] { return RunLogs(*options); }; });
}

}  // namespace podflow::cli
