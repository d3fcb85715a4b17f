#include "chaos.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "api_generated.h"
#include "bus/bus.h"
#include "client/client.h"
#include "log/log.h"
#include "model/codec.h"
#include "model/objects.h"
#include "pipeline/config.h"
#include "pipeline/credentials.h"
#include "pipeline/stage_names.h"

namespace podflow::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double MsSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The processes of the pipeline under test, by name ("podflow" for the
// single process, the stage's name otherwise). Each dies with this
// process (PR_SET_PDEATHSIG), so a chaos run never leaves one behind.
class Processes {
 public:
  Processes(std::string podflow, std::string dir, std::string config, bool per_stage)
      : podflow_(std::move(podflow)), dir_(std::move(dir)), config_(std::move(config)), per_stage_(per_stage) {}
  ~Processes() { StopAll(); }

  std::vector<std::string> Names() const {
    if (!per_stage_) return {"podflow"};
    std::vector<std::string> names;
    for (std::string_view stage : pipeline::kStageNames) names.emplace_back(stage);
    return names;
  }

  // False when the process could not be started.
  bool Start(const std::string& name) {
    std::vector<std::string> args = {podflow_};
    if (per_stage_) {
      args.insert(args.end(), {"stage", name, "--config", config_});
    } else {
      args.insert(args.end(), {"run", "--config", config_});
    }
    const std::string log = dir_ + "/" + name + ".log";
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
      if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
      if (std::freopen(log.c_str(), "a", stdout) == nullptr) _exit(126);
      dup2(fileno(stdout), fileno(stderr));
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    if (pid < 0) return false;
    pids_[name] = pid;
    return true;
  }

  // The processes that ended by themselves since they were started (reaped).
  std::vector<std::string> Exited() {
    std::vector<std::string> exited;
    for (auto it = pids_.begin(); it != pids_.end();) {
      if (waitpid(it->second, nullptr, WNOHANG) == it->second) {
        exited.push_back(it->first);
        it = pids_.erase(it);
      } else {
        ++it;
      }
    }
    return exited;
  }

  void Kill(const std::string& name) {
    auto it = pids_.find(name);
    if (it == pids_.end()) return;
    if (waitpid(it->second, nullptr, WNOHANG) == 0) {  // still ours and running
      kill(it->second, SIGKILL);
      waitpid(it->second, nullptr, 0);
    }
    pids_.erase(it);
  }

  // SIGTERM to every process (persistence last: the others flush through
  // it), SIGKILL after 10 s.
  void StopAll() {
    std::vector<std::string> names = Names();
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
      auto p = pids_.find(*it);
      if (p == pids_.end()) continue;
      kill(p->second, SIGTERM);
      bool gone = false;
      for (int i = 0; i < 200 && !gone; ++i) {
        const pid_t done = waitpid(p->second, nullptr, WNOHANG);
        gone = done == p->second || done < 0;  // < 0: reaped already, not ours to kill
        if (!gone) std::this_thread::sleep_for(50ms);
      }
      if (!gone) Kill(*it);
      pids_.erase(*it);
    }
  }

 private:
  const std::string podflow_, dir_, config_;
  const bool per_stage_;
  std::map<std::string, pid_t> pids_;
};

std::string PodManifest(const std::string& name) {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
         "\nspec:\n  containers:\n  - name: c\n    image: nginx\n---\n";
}

// Submits `names` in one request; returns those admission created (a name
// already there counts: an earlier try of the same pod was created and its
// answer lost).
std::vector<std::string> Submit(bus::RpcClient& client, const std::string& token,
                                const std::vector<std::string>& names) {
  std::string manifest;
  for (const std::string& n : names) manifest += PodManifest(n);
  flatbuffers::FlatBufferBuilder fbb;
  auto bytes = fbb.CreateVector(reinterpret_cast<const uint8_t*>(manifest.data()), manifest.size());
  auto request = msg::CreateSubmitRequest(fbb, fbb.CreateString(token), bytes);
  Result<bus::Frame> reply = client.Call(fbb, msg::Body::SubmitRequest, request.Union(), 3s);
  std::vector<std::string> created;
  if (!reply.ok()) return created;
  const msg::SubmitReply* submit = reply->envelope().body_as_SubmitReply();
  if (submit == nullptr || submit->results() == nullptr) return created;
  for (const msg::SubmitResult* r : *submit->results()) {
    if (r->name() == nullptr || r->status() == nullptr) continue;
    const std::string status = r->status()->status() ? r->status()->status()->str() : "";
    const std::string reason = r->status()->reason() ? r->status()->reason()->str() : "";
    if (status == "Success" || reason == "AlreadyExists") created.push_back(r->name()->str());
  }
  return created;
}

const api::Pod* PodOf(const std::string& bytes) {
  if (!model::VerifyObject(model::Kind("Pod"), bytes).ok()) return nullptr;
  return flatbuffers::GetRoot<api::Pod>(bytes.data());
}

bool IsRunning(const std::string& bytes) {
  const api::Pod* pod = PodOf(bytes);
  return pod != nullptr && pod->status() != nullptr && pod->status()->phase() == api::PodPhase::Running;
}

std::string NodeOf(const std::string& bytes) {
  const api::Pod* pod = PodOf(bytes);
  if (pod == nullptr || pod->spec() == nullptr || pod->spec()->node_name() == nullptr) return "";
  return pod->spec()->node_name()->str();
}

constexpr std::string_view kPods = "/registry/pods/default/";

// Publishes pods at `rate` per second on its own thread until stopped,
// keeping the names admission acknowledged.
class Publisher {
 public:
  Publisher(bus::Context& context, std::string endpoint, std::string token, double rate)
      : client_(context, std::move(endpoint)), token_(std::move(token)), rate_(rate) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Publisher() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::set<std::string> Acknowledged() {
    std::lock_guard<std::mutex> lock(mu_);
    return acknowledged_;
  }

 private:
  void Loop() {
    constexpr auto kTick = 50ms;
    auto next = Clock::now();
    uint64_t n = 0;
    double due = 0;  // pods owed to the rate, fractions carried over
    while (!stop_) {
      due += rate_ * 0.05;
      std::vector<std::string> names;
      for (; due >= 1; due -= 1) names.push_back("chaos-" + std::to_string(n++));
      if (names.empty()) {
        next += kTick;
        std::this_thread::sleep_until(next);
        continue;
      }
      std::vector<std::string> created = Submit(client_, token_, names);
      {
        std::lock_guard<std::mutex> lock(mu_);
        acknowledged_.insert(created.begin(), created.end());
      }
      next += kTick;
      if (next > Clock::now()) {
        std::this_thread::sleep_until(next);
      } else {
        next = Clock::now();  // behind (the pipeline is down): no burst to catch up
      }
    }
  }

  bus::RpcClient client_;
  const std::string token_;
  const double rate_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::set<std::string> acknowledged_;
  std::thread thread_;
};

Status WriteFiles(const std::string& dir, bool per_stage) {
  std::ofstream stages(dir + "/pipeline.yaml");
  stages << "channels:\n";
  for (const std::string& channel : pipeline::RequiredChannels()) {
    const bool internal = channel == "decisions" || channel == "reports";
    stages << "  " << channel << ": "
           << (internal && !per_stage ? "inproc://" + channel : "ipc://" + dir + "/" + channel + ".sock") << "\n";
  }
  stages << "processes:\n";
  if (per_stage) {
    for (std::string_view stage : pipeline::kStageNames) {
      stages << "  - {name: " << stage << ", stages: [" << stage << "]}\n";
    }
  } else {
    stages << "  - {name: podflow, stages: [persistence, admission, scheduling, binding, runtime, proxy, "
                "status, controllers]}\n";
  }
  std::ofstream config(dir + "/cluster.yaml");
  config << "pipeline: pipeline.yaml\n"
         << "storage: {dataDir: " << dir << "/data, sync: true}\n"
         << "scheduler: {seed: 1}\n"
         << "runtime:\n  clusterCIDR: 10.0.0.0/8\n"
         << "  nodeTemplate: {count: 200, namePrefix: node-, capacity: {cpu: \"64\", memory: 256Gi, pods: \"200\"}}\n"
         << "  registry:\n    - {name: nginx, sizeBytes: 44000000, pullMillis: 0}\n";
  if (!stages || !config) return Status::IOError("cannot write the chaos run's config in " + dir);
  return Status::Ok();
}

// The pod's phase is Running within `limit`; polls the api channel.
bool WaitRunning(client::ApiClient& api, const std::string& key, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    Result<std::optional<KeyValue>> kv = api.Get(key, 1s);
    if (kv.ok() && kv->has_value() && IsRunning((*kv)->value)) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

// Reads the whole log back: revision gaps, and pods bound to a second node.
Status AuditLog(const std::string& data_dir, ChaosResult& result) {
  Result<std::unique_ptr<EventLog>> log = OpenLogReadOnly(data_dir);
  if (!log.ok()) return log.status();
  std::map<std::string, std::string> node_of;  // pod key -> the node it was bound to
  std::set<std::string> rebound;
  // Revision 1 is the empty log; compaction keeps no changes at or below
  // its revision.
  int64_t expected = std::max<int64_t>(2, (*log)->CompactRevision().value() + 1);
  while (true) {
    Result<std::vector<RevisionChangesPtr>> batch = (*log)->ReadChanges(Revision(expected), 1000);
    if (!batch.ok()) return batch.status();
    if (batch->empty()) break;
    for (const RevisionChangesPtr& rc : *batch) {
      const int64_t revision = rc->revision.value();
      if (revision > expected) result.revision_gaps += revision - expected;
      expected = revision + 1;
      ++result.revisions;
      for (const Change& change : rc->changes) {
        if (!change.kv.key.starts_with(kPods)) continue;
        if (change.type == ChangeType::kDelete) {
          node_of.erase(change.kv.key);
          continue;
        }
        const std::string node = NodeOf(change.kv.value);
        if (node.empty()) continue;
        auto [it, inserted] = node_of.emplace(change.kv.key, node);
        if (!inserted && it->second != node) rebound.insert(change.kv.key);
      }
    }
  }
  // A head revision whose changes could not be read back is a gap too.
  const int64_t head = (*log)->CurrentRevision().value();
  if (expected - 1 < head) result.revision_gaps += head - (expected - 1);
  result.bound_twice = static_cast<int64_t>(rebound.size());
  return Status::Ok();
}

}  // namespace

ChaosResult RunChaos(const ChaosOptions& options) {
  ChaosResult result;
  const bool per_stage = options.mode == "stages";
  if (!per_stage && options.mode != "single") {
    result.error = "mode must be single or stages, not " + options.mode;
    return result;
  }
  std::string dir = options.work_dir + "/podflow-chaos-XXXXXX";
  if (mkdtemp(dir.data()) == nullptr) {
    result.error = "cannot make a scratch directory under " + options.work_dir;
    return result;
  }
  // The scratch directory goes unless the run found something (or
  // PODFLOW_KEEP_CHAOS is set): then its logs stay for the reader.
  struct Cleanup {
    std::string dir;
    const ChaosResult& result;
    ~Cleanup() {
      const bool found = !result.error.empty() || result.lost + result.stuck + result.bound_twice +
                                                      result.revision_gaps + result.recovery_timeouts >
                                                  0;
      std::error_code ec;
      if (found || getenv("PODFLOW_KEEP_CHAOS") != nullptr) {
        std::fprintf(stderr, "chaos: logs and data kept in %s\n", dir.c_str());
      } else {
        std::filesystem::remove_all(dir, ec);
      }
    }
  } cleanup{dir, result};
  const std::string data_dir = dir + "/data";
  auto fail = [&](const Status& s) {
    result.error = s.ToString();
    return result;
  };
  if (Status s = WriteFiles(dir, per_stage); !s.ok()) return fail(s);
  if (Status s = pipeline::EnsureCredentials(data_dir); !s.ok()) return fail(s);
  Result<std::string> token = pipeline::ReadAdminToken(data_dir);
  if (!token.ok()) return fail(token.status());
  bus::Context context;
  if (Status s = pipeline::SecureTool(context, data_dir); !s.ok()) return fail(s);
  const std::string submit = "ipc://" + dir + "/submit.sock";
  client::ApiClient api(context, "ipc://" + dir + "/api.sock");

  Processes processes(options.podflow, dir, dir + "/cluster.yaml", per_stage);
  for (const std::string& name : processes.Names()) {
    if (!processes.Start(name)) return fail(Status::IOError("cannot start " + name));
  }
  // Up when the nodes have registered.
  bool up = false;
  for (int i = 0; i < 600 && !up; ++i) {
    // A process that ended at its start will not come up (a bad config).
    if (std::vector<std::string> exited = processes.Exited(); !exited.empty()) {
      return fail(Status::Internal(exited.front() + " exited at its start (logs in " + dir + ")"));
    }
    Result<RangeResult> nodes = api.List("/registry/nodes/", 500, 1s);
    up = nodes.ok() && nodes->kvs.size() >= 200;
    if (!up) std::this_thread::sleep_for(100ms);
  }
  if (!up) return fail(Status::Unavailable("the pipeline did not come up (logs in " + dir + ")"));

  std::mt19937_64 rng(options.seed);
  std::set<std::string> acknowledged;
  {
    Publisher publisher(context, submit, *token, options.rate);
    bus::RpcClient prober(context, submit);
    const std::vector<std::string> names = processes.Names();
    for (int cycle = 0; cycle < options.cycles; ++cycle) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(300, 1200)(rng)));
      std::vector<std::string> targets;
      if (!per_stage || std::uniform_int_distribution<int>(0, 7)(rng) == 0) {
        targets = names;
      } else {
        targets.push_back(names[std::uniform_int_distribution<size_t>(0, names.size() - 1)(rng)]);
      }
      // Anything that ended on its own (a restart that failed) is a finding.
      if (std::vector<std::string> exited = processes.Exited(); !exited.empty()) {
        return fail(Status::Internal(exited.front() + " exited by itself (logs in " + dir + ")"));
      }
      for (const std::string& t : targets) processes.Kill(t);
      result.kills += static_cast<int64_t>(targets.size());
      for (const std::string& t : targets) {
        if (!processes.Start(t)) return fail(Status::IOError("cannot restart " + t));
      }
      const auto restarted = Clock::now();
      // Recovered when a pod submitted now is Running.
      const std::string probe = "probe-" + std::to_string(cycle);
      bool created = false;
      while (!created && Clock::now() - restarted < options.settle) {
        created = !Submit(prober, *token, {probe}).empty();
        if (!created) std::this_thread::sleep_for(100ms);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(options.settle - (Clock::now() - restarted));
      if (created && WaitRunning(api, std::string(kPods) + probe, left)) {
        result.recovery_ms.push_back(MsSince(restarted));
      } else {
        ++result.recovery_timeouts;
      }
      if (created) acknowledged.insert(probe);
    }
    publisher.Stop();
    std::set<std::string> published = publisher.Acknowledged();
    acknowledged.insert(published.begin(), published.end());
  }
  result.acknowledged = static_cast<int64_t>(acknowledged.size());

  // Every acknowledged pod gets `settle` to be Running.
  std::map<std::string, bool> seen;  // name -> Running
  bool listed = false;
  const auto deadline = Clock::now() + options.settle;
  while (true) {
    Result<RangeResult> pods = api.List(std::string(kPods), 1000, 5s);
    if (pods.ok()) {
      listed = true;
      seen.clear();
      for (const KeyValue& kv : pods->kvs) seen[kv.key.substr(kPods.size())] = IsRunning(kv.value);
      size_t pending = 0;
      for (const std::string& name : acknowledged) {
        auto it = seen.find(name);
        if (it == seen.end() || !it->second) ++pending;
      }
      if (pending == 0) break;
    }
    if (Clock::now() > deadline) break;
    std::this_thread::sleep_for(500ms);
  }
  if (!listed) return fail(Status::Unavailable("the pods could not be listed after the load (logs in " + dir + ")"));
  for (const std::string& name : acknowledged) {
    auto it = seen.find(name);
    if (it == seen.end()) {
      ++result.lost;
      if (result.examples.size() < 5) result.examples.push_back("lost: " + name);
    } else if (!it->second) {
      ++result.stuck;
      if (result.examples.size() < 5) result.examples.push_back("stuck: " + name);
    }
  }
  processes.StopAll();
  if (Status s = AuditLog(data_dir, result); !s.ok()) return fail(s);
  return result;
}

}  // namespace podflow::bench
