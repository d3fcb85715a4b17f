// End-to-end fixture: a real pipeline (build/podflow) in child processes,
// on a temp data dir and private ipc:// endpoints, driven through the same
// channels the tools use.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "bus/bus.h"
#include "api_generated.h"
#include "model/codec.h"
#include "model/objects.h"
#include "client/client.h"
#include "pipeline/config.h"
#include "pipeline/credentials.h"

namespace podflow::e2e {

// Runs `argv` (argv[0] a path) with stdout/stderr to `log_file` (and stdin
// from `input_file`, when given); returns the pid.
inline pid_t Spawn(const std::vector<std::string>& args, const std::string& log_file,
                   const std::string& cwd, const std::string& input_file = "") {
  pid_t pid = fork();
  if (pid == 0) {
    FILE* out = std::freopen(log_file.c_str(), "a", stdout);
    (void)out;
    if (!input_file.empty() && std::freopen(input_file.c_str(), "r", stdin) == nullptr) _exit(126);
    dup2(fileno(stdout), fileno(stderr));
    if (chdir(cwd.c_str()) != 0) _exit(126);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// Sends SIGTERM and waits; SIGKILL after 10 s.
inline int Stop(pid_t pid) {
  kill(pid, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// Runs a command to completion (`input` its stdin, when given); returns
// {exit code, output}.
inline std::pair<int, std::string> RunCommand(const std::vector<std::string>& args, const std::string& cwd,
                                              const std::optional<std::string>& input = std::nullopt) {
  std::string out_file = cwd + "/command-output.txt";
  std::filesystem::remove(out_file);
  std::string in_file;
  if (input) {
    in_file = cwd + "/command-input.txt";
    std::ofstream(in_file) << *input;
  }
  pid_t pid = Spawn(args, out_file, cwd, in_file);
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream in(out_file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

class Pipeline {
 public:
  // `multi_process`: every stage in its own process (started one by one by
  // this fixture, so a test can stop and restart a single stage).
  // `storage_extra`: more keys of the config's storage map
  // ("compactionInterval: 1s"); `config_extra`: more top-level sections of
  // the config ("controllers: {...}\n").
  // `runtime_extra`: more keys of the runtime section ("  type: process\n").
  explicit Pipeline(bool multi_process, std::string storage_extra = "", std::string config_extra = "",
                    std::string runtime_extra = "")
      : multi_process_(multi_process),
        storage_extra_(std::move(storage_extra)),
        config_extra_(std::move(config_extra)),
        runtime_extra_(std::move(runtime_extra)) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "podflow-e2e-XXXXXX").string();
    dir_ = mkdtemp(tmpl.data());
    WriteConfig();
    // The data dir's credentials, as `podflow run` makes them at its first
    // start; the fixture then speaks as the tools do.
    REQUIRE(pipeline::EnsureCredentials(data_dir()).ok());
    REQUIRE(pipeline::SecureTool(context_, data_dir()).ok());
  }
  ~Pipeline() {
    StopAll();
    std::error_code ec;
    if (getenv("PODFLOW_KEEP_E2E") == nullptr) std::filesystem::remove_all(dir_, ec);
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  const std::string& dir() const { return dir_; }
  std::string config() const { return dir_ + "/cluster.yaml"; }
  std::string data_dir() const { return dir_ + "/data"; }
  std::string Endpoint(const std::string& channel) const {
    return "ipc://" + dir_ + "/" + channel + ".sock";
  }
  static std::string Program(const std::string& name) { return std::string(PODFLOW_BUILD_DIR) + "/" + name; }

  static const std::vector<std::string>& Stages() {
    static const std::vector<std::string> kStages = {"persistence", "admission", "scheduling", "binding",
                                                     "runtime", "proxy", "status", "controllers"};
    return kStages;
  }

  void StartAll() {
    if (multi_process_) {
      for (const std::string& stage : Stages()) StartStage(stage);
    } else {
      pids_["podflow"] = Spawn({Program("podflow"), "run", "--config", config()}, dir_ + "/podflow.log", dir_);
    }
    WaitForApi();
  }

  // `podflow run` as the user starts it: with multi_process, it supervises
  // one `podflow stage` child per stage. Returns its pid.
  pid_t StartSupervised() {
    pid_t pid = Spawn({Program("podflow"), "run", "--config", config()}, dir_ + "/podflow.log", dir_);
    pids_["podflow"] = pid;
    WaitForApi();
    return pid;
  }

  // Forgets a process this fixture started (the test stopped it itself).
  void Forget(const std::string& name) { pids_.erase(name); }

  void StartStage(const std::string& stage) {
    pids_[stage] = Spawn({Program("podflow"), "stage", stage, "--config", config()},
                         dir_ + "/" + stage + ".log", dir_);
  }

  // Sends `signal` to one process (SIGSTOP / SIGCONT to freeze a stage).
  void SignalStage(const std::string& stage, int signal) {
    auto it = pids_.find(stage);
    if (it != pids_.end()) kill(it->second, signal);
  }

  // kill -9 of one process (a stage, or "podflow"), reaped.
  void KillStage(const std::string& stage) {
    auto it = pids_.find(stage);
    if (it == pids_.end()) return;
    kill(it->second, SIGKILL);
    waitpid(it->second, nullptr, 0);
    pids_.erase(it);
  }

  void StopStage(const std::string& stage) {
    auto it = pids_.find(stage);
    if (it == pids_.end()) return;
    Stop(it->second);
    pids_.erase(it);
  }

  void StopAll() {
    // Persistence last: the others flush their writes through it.
    for (auto it = Stages().rbegin(); it != Stages().rend(); ++it) StopStage(*it);
    StopStage("podflow");
  }

  // The pipeline's logs, for failure messages.
  // Whether any process's log (all of it) contains `text`.
  bool LogsContain(const std::string& text) const {
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.path().extension() != ".log") continue;
      std::ifstream in(entry.path());
      const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (all.find(text) != std::string::npos) return true;
    }
    return false;
  }

  std::string Logs() const {
    std::string all;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.path().extension() != ".log") continue;
      std::ifstream in(entry.path());
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (text.size() > 6000) text = "..." + text.substr(text.size() - 6000);
      all += "==== " + entry.path().filename().string() + "\n" + text;
    }
    return all;
  }

  // Submits manifest text; returns the reply's per-document results.
  std::vector<std::pair<std::string, std::string>> Submit(const std::string& manifest,
                                                          const std::string& token = "e2e-token") {
    flatbuffers::FlatBufferBuilder fbb;
    auto bytes = fbb.CreateVector(reinterpret_cast<const uint8_t*>(manifest.data()), manifest.size());
    auto req = msg::CreateSubmitRequest(fbb, fbb.CreateString(token), bytes);
    bus::RpcClient client(context_, Endpoint("submit"));
    auto reply = client.Call(fbb, msg::Body::SubmitRequest, req.Union(), std::chrono::seconds(10));
    INFO(Logs());
    REQUIRE(reply.ok());
    const msg::SubmitReply* submit = reply->envelope().body_as_SubmitReply();
    REQUIRE(submit != nullptr);
    std::vector<std::pair<std::string, std::string>> out;  // {reason ("" = created), message}
    if (submit->status() && submit->status()->status()->str() != "Success") {
      out.emplace_back(submit->status()->reason()->str(), submit->status()->message()->str());
      return out;
    }
    for (const msg::SubmitResult* r : *submit->results()) {
      bool ok = r->status() && r->status()->status() && r->status()->status()->str() == "Success";
      out.emplace_back(ok ? "" : r->status()->reason()->str(),
                       r->status() && r->status()->message() ? r->status()->message()->str() : "");
    }
    return out;
  }

  // Runs `podflow ARGS... --config CONFIG` to completion (`input` its
  // stdin, when given): {exit code, output}. Arguments after a "--" stay last.
  std::pair<int, std::string> Podflow(std::vector<std::string> args,
                                      const std::optional<std::string>& input = std::nullopt) const {
    args.insert(args.begin(), Program("podflow"));
    auto rest = std::find(args.begin(), args.end(), "--");
    rest = args.insert(rest, "--config");
    args.insert(rest + 1, config());
    return RunCommand(args, dir_, input);
  }

  // Submits a one-document manifest without Catch's macros, so that many
  // threads may call it at once: "" when created, the refusal's reason
  // (or "error: ..." when no reply came) otherwise.
  std::string SubmitFromThread(const std::string& manifest, const std::string& token = "e2e-token") {
    flatbuffers::FlatBufferBuilder fbb;
    auto bytes = fbb.CreateVector(reinterpret_cast<const uint8_t*>(manifest.data()), manifest.size());
    auto req = msg::CreateSubmitRequest(fbb, fbb.CreateString(token), bytes);
    bus::RpcClient client(context_, Endpoint("submit"));
    auto reply = client.Call(fbb, msg::Body::SubmitRequest, req.Union(), std::chrono::seconds(20));
    if (!reply.ok()) return "error: " + reply.status().ToString();
    const msg::SubmitReply* submit = reply->envelope().body_as_SubmitReply();
    if (submit == nullptr || submit->results() == nullptr || submit->results()->size() != 1) return "error: no result";
    const msg::SubmitResult* r = submit->results()->Get(0);
    if (r->status() == nullptr || r->status()->status() == nullptr) return "error: no status";
    if (r->status()->status()->str() == "Success") return "";
    return r->status()->reason() ? r->status()->reason()->str() : "error: no reason";
  }

  client::ApiClient& Api() {
    if (!api_) api_ = std::make_unique<client::ApiClient>(context_, Endpoint("api"));
    return *api_;
  }

  std::optional<KeyValue> Get(const std::string& key) {
    RangeRequest request;
    request.key = key;
    auto r = Api().Read(request);
    if (!r.ok() || r->kvs.empty()) return std::nullopt;
    return r->kvs[0];
  }

  // Polls until `check` holds for the object at `key` (up to `timeout`).
  template <typename T>
  const T* WaitFor(const std::string& key, std::function<bool(const T&)> check, std::string* bytes,
                   std::chrono::seconds timeout = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      std::optional<KeyValue> kv = Get(key);
      if (kv) {
        *bytes = kv->value;
        const T* obj = flatbuffers::GetRoot<T>(bytes->data());
        if (check(*obj)) return obj;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return nullptr;
  }

  // Polls until nothing is stored at `key` (up to `timeout`).
  bool WaitForGone(const std::string& key, std::chrono::seconds timeout = std::chrono::seconds(20)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!Get(key)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  // Submits a one-container nginx pod `name` in the default namespace;
  // whether it was created.
  bool SubmitPod(const std::string& name) {
    auto created = Submit("apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
                          "}\nspec:\n  containers: [{name: c, image: \"nginx:1.14.2\"}]\n");
    return created.size() == 1 && created[0].first.empty();
  }

  // Whether the pod `name` (default namespace) passes `check` within `timeout`.
  bool PodReaches(const std::string& name, std::function<bool(const api::Pod&)> check,
                  std::chrono::seconds timeout = std::chrono::seconds(20)) {
    std::string bytes;
    return WaitFor<api::Pod>(model::ObjectKey(model::Kind("Pod"), "default", name), std::move(check), &bytes,
                             timeout) != nullptr;
  }

  static bool Running(const api::Pod& p) {
    return p.status() && p.status()->phase() == api::PodPhase::Running;
  }
  static bool Bound(const api::Pod& p) { return p.spec() && p.spec()->node_name() && p.spec()->node_name()->size() > 0; }

  // Submits a pod (SubmitPod) and reports whether it reaches Running.
  bool SubmitRunning(const std::string& name, std::chrono::seconds timeout = std::chrono::seconds(20)) {
    return SubmitPod(name) && PodReaches(name, Running, timeout);
  }

  // Events about one object, in creation order: "Type Reason: message".
  std::vector<std::string> EventsFor(const std::string& ns, const std::string& name) {
    auto list = Api().List(model::KindPrefix(model::Kind("Event"), ns));
    std::vector<std::pair<int64_t, std::string>> found;
    if (!list.ok()) return {};
    for (const KeyValue& kv : list->kvs) {
      const api::Event* e = flatbuffers::GetRoot<api::Event>(kv.value.data());
      if (!e->involved_object() || !e->involved_object()->name() ||
          e->involved_object()->name()->str() != name) continue;
      found.emplace_back(kv.create_revision.value(),
                         (e->type() ? e->type()->str() : "") + " " + (e->reason() ? e->reason()->str() : "") +
                             ": " + (e->message() ? e->message()->str() : ""));
    }
    // Events of one transaction share a revision; List returns keys in
    // order and event names grow with time, so a stable sort keeps them as
    // they were made.
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (auto& [rev, text] : found) out.push_back(text);
    return out;
  }

 private:
  void WriteConfig() {
    std::ofstream pipeline(dir_ + "/pipeline.yaml");
    pipeline << "channels:\n";
    for (const std::string& ch : pipeline::RequiredChannels()) pipeline << "  " << ch << ": " << Endpoint(ch) << "\n";
    pipeline << "processes:\n";
    if (multi_process_) {
      for (const std::string& stage : Stages()) pipeline << "  - {name: " << stage << ", stages: [" << stage << "]}\n";
    } else {
      pipeline << "  - name: podflow\n    stages: [persistence, admission, scheduling, binding, runtime, proxy, status, controllers]\n";
    }
    std::ofstream config(this->config());
    config << "pipeline: pipeline.yaml\n"
           << "storage: {dataDir: " << data_dir() << ", sync: true"
           << (storage_extra_.empty() ? "" : ", " + storage_extra_) << "}\n"
           << "admission:\n  tokens:\n    - {token: e2e-token, user: tester, uid: \"7\", groups: [\"system:masters\"]}\n"
           << "    - {token: viewer-token, user: viewer, uid: \"8\", groups: [viewers]}\n"
           << "  serviceClusterIPRange: 10.96.0.0/12\n"
           << "scheduler: {seed: 7}\n"
           << "runtime:\n  clusterCIDR: 10.244.0.0/16\n  syncRetryMillis: 500\n  nodeLeaseDurationSeconds: 2\n  nodes:\n"
           << "    - {name: node-1, labels: {disktype: ssd}, capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n"
           << "    - {name: node-2, capacity: {cpu: \"4\", memory: 8Gi, pods: \"110\"}}\n"
           << "    - {name: node-3, capacity: {cpu: \"2\", memory: 4Gi, pods: \"110\"}}\n"
           << "  registry:\n"
           << "    - {name: nginx, tags: [\"1.14.2\", \"1.16.1\", latest], sizeBytes: 44000000, pullMillis: 50}\n"
           << "    - {name: busybox, tags: [\"1.28\", latest], sizeBytes: 2200000, pullMillis: 20}\n"
           << runtime_extra_ << config_extra_;
  }

  void WaitForApi() {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      client::ApiClient probe(context_, Endpoint("api"));
      RangeRequest r = RangeRequest::Prefix("/registry/nodes/");
      auto result = probe.Read(r, std::chrono::milliseconds(200));
      if (result.ok() && result->kvs.size() >= 3) {
        // The nodes have registered. The scheduler follows nodes and pods on
        // two streams, so a pod submitted at once may reach it before the
        // nodes do, and get "no nodes available" first, as kube-scheduler
        // would in that race; the tests expect a settled cluster, so they
        // start once every stage has had time to see the nodes.
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL("the pipeline did not come up:\n" << Logs());
  }

  bool multi_process_;
  std::string storage_extra_;
  std::string config_extra_;
  std::string runtime_extra_;
  std::string dir_;
  std::map<std::string, pid_t> pids_;
  bus::Context context_;
  std::unique_ptr<client::ApiClient> api_;
};

}  // namespace podflow::e2e
