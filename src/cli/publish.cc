#include "cli/publish.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "bus/bus.h"
#include "cli/api_session.h"
#include "cli/status_text.h"
#include "model/codec.h"
#include "model/objects.h"
#include "pipeline/config.h"
#include "pipeline/credentials.h"
#include "client/client.h"

namespace podflow::cli {
namespace {

using Clock = std::chrono::steady_clock;

Result<ToolEndpoints> Resolve(const PublishOptions& options) {
  return ResolveEndpoints(options.config_file, options.data_dir, options.server, options.api_server,
                          options.watch_server, options.token);
}

// Records when each pod is first seen Running, from a watch read on its
// own thread while the submissions go on (reading it only afterwards would
// time the reading, not the pods).
class RunningTracker {
 public:
  explicit RunningTracker(std::unique_ptr<client::RemoteWatcher> watcher)
      : watcher_(std::move(watcher)), thread_([this] { Loop(); }) {}
  RunningTracker(const RunningTracker&) = delete;
  RunningTracker& operator=(const RunningTracker&) = delete;
  ~RunningTracker() {
    stop_ = true;
    thread_.join();
  }

  // "namespace/name" -> when it was first seen Running.
  std::map<std::string, Clock::time_point> Snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    return running_at_;
  }
  // Why the watch stopped ("" while it runs).
  std::string failure() {
    std::lock_guard<std::mutex> lock(mu_);
    return failure_;
  }
  size_t CountOf(const std::map<std::string, Clock::time_point>& ids) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [id, at] : ids) n += running_at_.count(id);
    return n;
  }

 private:
  void Loop() {
    while (!stop_) {
      WatchBatch batch = watcher_->Next(std::chrono::milliseconds(100));
      if (batch.kind == WatchBatch::Kind::kCompacted || batch.kind == WatchBatch::Kind::kClosed ||
          batch.kind == WatchBatch::Kind::kError) {
        // The watch is over: say so rather than wait for pods never seen.
        std::lock_guard<std::mutex> lock(mu_);
        failure_ = batch.kind == WatchBatch::Kind::kCompacted
                       ? "the watch was compacted away at revision " + std::to_string(batch.revision.value())
                       : "the watch ended: " + batch.status.ToString();
        return;
      }
      if (batch.kind != WatchBatch::Kind::kEvents) continue;
      const auto now = Clock::now();
      std::lock_guard<std::mutex> lock(mu_);
      for (const WatchEvent& e : batch.events) {
        if (e.type != ChangeType::kPut || !model::VerifyObject(model::Kind("Pod"), e.kv.value).ok()) continue;
        const api::Pod* pod = flatbuffers::GetRoot<api::Pod>(e.kv.value.data());
        if (!pod->status() || pod->status()->phase() != api::PodPhase::Running || !pod->metadata()) continue;
        std::string ns = pod->metadata()->namespace_() ? pod->metadata()->namespace_()->str() : "default";
        running_at_.try_emplace(ns + "/" + (pod->metadata()->name() ? pod->metadata()->name()->str() : ""), now);
      }
    }
  }

  std::unique_ptr<client::RemoteWatcher> watcher_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::map<std::string, Clock::time_point> running_at_;  // GUARDED_BY(mu_)
  std::string failure_;                                  // GUARDED_BY(mu_)
  std::thread thread_;  // last: starts once the rest is built
};

// One submit request; prints each document's outcome as kubectl does.
// Returns how many documents failed (or -1 when the request itself failed).
int Submit(bus::RpcClient& client, const std::string& token, const std::string& manifest, bool quiet,
           std::vector<std::string>* created_pods) {
  flatbuffers::FlatBufferBuilder fbb(manifest.size() + 256);
  auto bytes = fbb.CreateVector(reinterpret_cast<const uint8_t*>(manifest.data()), manifest.size());
  auto request = msg::CreateSubmitRequest(fbb, fbb.CreateString(token), bytes);
  Result<bus::Frame> reply = client.Call(fbb, msg::Body::SubmitRequest, request.Union(), std::chrono::seconds(30));
  if (!reply.ok()) {
    std::fprintf(stderr, "error: %s\n", reply.status().message().c_str());
    return -1;
  }
  const msg::SubmitReply* submit = reply->envelope().body_as_SubmitReply();
  if (submit == nullptr) {
    std::fprintf(stderr, "error: admission answered with something else than a submit reply\n");
    return -1;
  }
  if (submit->status() && !IsSuccess(*submit->status())) {
    std::fprintf(stderr, "%s\n", KubectlError(*submit->status()).c_str());
    return -1;
  }
  int failed = 0;
  if (submit->results() == nullptr) return 0;
  for (const msg::SubmitResult* r : *submit->results()) {
    if (r->warnings() && !quiet) {
      for (const auto* w : *r->warnings()) std::fprintf(stderr, "Warning: %s\n", w->c_str());
    }
    if (r->status() && !IsSuccess(*r->status())) {
      std::fprintf(stderr, "%s\n", KubectlError(*r->status()).c_str());
      ++failed;
      continue;
    }
    std::string kind = r->kind() ? r->kind()->str() : "";
    std::string name = r->name() ? r->name()->str() : "";
    if (!quiet) {
      // The server's words: "pod/nginx-pod created", "deployment.apps/web created".
      if (r->status() && r->status()->message() && r->status()->message()->size() > 0) {
        std::printf("%s\n", r->status()->message()->c_str());
      } else {
        std::string lower = kind;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::printf("%s/%s created\n", lower.c_str(), name.c_str());
      }
    }
    if (created_pods && kind == "Pod") {
      std::string ns = r->namespace_() && r->namespace_()->size() ? r->namespace_()->str() : "default";
      created_pods->push_back(ns + "/" + name);
    }
  }
  return failed;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
  return values[std::min(values.size() - 1, index == 0 ? 0 : index - 1)];
}

}  // namespace

std::string GeneratedName(const std::string& base, int64_t index) { return base + "-" + std::to_string(index); }

std::string LoadTemplate(const std::string& name) {
  return R"(apiVersion: v1
kind: Pod
metadata:
  name: )" + name + R"(
  labels: {app: load}
spec:
  containers:
  - name: app
    image: nginx:1.14.2
    resources:
      requests: {cpu: 100m, memory: 64Mi}
)";
}

int RunPublish(const PublishOptions& options) {
  Result<ToolEndpoints> endpoints = Resolve(options);
  if (!endpoints.ok()) {
    std::fprintf(stderr, "error: %s\n", endpoints.status().message().c_str());
    return 1;
  }
  if (options.files.empty() && options.count == 0) {
    std::fprintf(stderr, "error: must specify one of -f or --count\n");
    return 1;
  }
  // A caller that takes the report keeps stdout for its own output.
  FILE* summary = options.report != nullptr ? stderr : stdout;
  bus::Context context;
  if (Status secured = pipeline::SecureTool(context, endpoints->data_dir); !secured.ok()) {
    std::fprintf(stderr, "error: %s\n", secured.message().c_str());
    return 1;
  }
  bus::RpcClient client(context, endpoints->submit);

  // Watching starts before anything is submitted, so no Running is missed.
  std::unique_ptr<RunningTracker> tracker;
  if (options.wait) {
    client::ApiClient api(context, endpoints->api);
    RangeRequest probe = RangeRequest::Prefix("/registry/pods/");
    probe.limit = 1;
    Result<RangeResult> head = api.Read(probe);
    if (!head.ok()) {
      std::fprintf(stderr, "error: %s\n", head.status().message().c_str());
      return 1;
    }
    client::RemoteWatchOptions watch;
    watch.key = "/registry/pods/";
    watch.prefix = true;
    watch.start_revision = Revision(head->revision.value() + 1);
    watch.credits = 1024;
    auto opened = client::RemoteWatcher::Open(context, endpoints->watch, watch);
    if (!opened.ok()) {
      std::fprintf(stderr, "error: %s\n", opened.status().message().c_str());
      return 1;
    }
    tracker = std::make_unique<RunningTracker>(std::move(*opened));
  }

  int failures = 0;
  std::vector<std::string> created;
  std::map<std::string, Clock::time_point> submitted_at;
  Clock::time_point start = Clock::now();

  Result<std::vector<std::string>> files = ExpandFiles(options.files);
  if (!files.ok()) {
    std::fprintf(stderr, "error: %s\n", files.status().message().c_str());
    return 1;
  }
  std::unique_ptr<ApiSession> applier;
  if (options.apply) {
    Result<std::unique_ptr<ApiSession>> opened = ApiSession::Open(*endpoints);
    if (!opened.ok()) {
      std::fprintf(stderr, "error: %s\n", opened.status().message().c_str());
      return 1;
    }
    applier = std::move(*opened);
  }
  for (const std::string& file : *files) {
    if (applier) {
      size_t before = created.size();
      const auto sent_at = Clock::now();
      if (ApplyFiles(*applier, {file}, &created) != 0) ++failures;
      for (size_t i = before; i < created.size(); ++i) submitted_at[created[i]] = sent_at;
      continue;
    }
    Result<std::string> text = ReadInput(file);
    if (!text.ok()) {
      std::fprintf(stderr, "error: %s\n", text.status().message().c_str());
      ++failures;
      continue;
    }
    size_t before = created.size();
    const auto sent_at = Clock::now();
    int failed = Submit(client, endpoints->token, *text, false, &created);
    if (failed != 0) ++failures;
    for (size_t i = before; i < created.size(); ++i) submitted_at[created[i]] = sent_at;
  }

  if (options.count > 0) {
    std::string template_text = LoadTemplate("load");
    if (!options.template_file.empty()) {
      Result<std::string> text = ReadInput(options.template_file);
      if (!text.ok()) {
        std::fprintf(stderr, "error: %s\n", text.status().message().c_str());
        return 1;
      }
      template_text = *text;
    }
    model::Value pod;
    try {
      pod = model::FromYaml(YAML::Load(template_text));
    } catch (const YAML::Exception& e) {
      std::fprintf(stderr, "error: --template: %s\n", e.what());
      return 1;
    }
    model::Value* metadata = pod.kind() == model::Value::Kind::kObject ? pod.Find("metadata") : nullptr;
    model::Value* name = metadata && metadata->kind() == model::Value::Kind::kObject ? metadata->Find("name") : nullptr;
    if (name == nullptr || name->kind() != model::Value::Kind::kString) {
      std::fprintf(stderr, "error: --template: a pod manifest with metadata.name is required\n");
      return 1;
    }
    const std::string base = name->string_value();
    int64_t sent = 0;
    Clock::time_point last_progress{};
    while (sent < options.count) {
      int64_t n = std::min<int64_t>(options.batch, options.count - sent);
      if (options.rate > 0) {
        // Hold the pace: batch k may leave at k * batch / rate seconds.
        auto due = start + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(static_cast<double>(sent) / options.rate));
        std::this_thread::sleep_until(due);
        n = std::min<int64_t>(n, std::max<int64_t>(1, static_cast<int64_t>(options.rate / 10)));
      }
      std::string stream;
      for (int64_t i = 0; i < n; ++i) {
        *name = model::Value::String(GeneratedName(base, sent + i));
        stream += model::ToJson(pod);
        stream += "\n---\n";
      }
      size_t before = created.size();
      const auto sent_at = Clock::now();
      int failed = Submit(client, endpoints->token, stream, true, &created);
      if (failed < 0) return 1;
      failures += failed;
      auto now = Clock::now();
      for (size_t i = before; i < created.size(); ++i) submitted_at[created[i]] = sent_at;
      sent += n;
      if (now - last_progress > std::chrono::milliseconds(500) || sent == options.count) {
        last_progress = now;
        double elapsed = std::chrono::duration<double>(now - start).count();
        std::fprintf(stderr, "\rsubmitted %lld/%lld (%.0f pods/s)", static_cast<long long>(sent),
                     static_cast<long long>(options.count), elapsed > 0 ? sent / elapsed : 0.0);
      }
    }
    std::fprintf(stderr, "\n");
    std::fprintf(summary, "%lld pods created\n", static_cast<long long>(created.size()));
  }

  if (options.report != nullptr) {
    options.report->created = created.size();
    options.report->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  // Nothing to wait for when no pod was created.
  if (!options.wait || submitted_at.empty()) return failures == 0 ? 0 : 1;

  // Until every created pod is Running (or the timeout).
  auto deadline = start + std::chrono::seconds(options.timeout_seconds);
  for (;;) {
    size_t running = tracker->CountOf(submitted_at);
    if (options.count > 0) std::fprintf(stderr, "\rrunning %zu/%zu", running, submitted_at.size());
    if (running == submitted_at.size() || Clock::now() >= deadline) break;
    if (std::string why = tracker->failure(); !why.empty()) {
      std::fprintf(stderr, "\nerror: cannot follow the pods any more: %s\n", why.c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (options.count > 0) std::fprintf(stderr, "\n");
  std::map<std::string, Clock::time_point> running_at = tracker->Snapshot();
  std::map<std::string, double> latency_ms;
  Clock::time_point last_running = start;
  for (const auto& [id, sent_at] : submitted_at) {
    auto it = running_at.find(id);
    if (it == running_at.end()) continue;
    latency_ms[id] = std::chrono::duration<double, std::milli>(it->second - sent_at).count();
    last_running = std::max(last_running, it->second);
  }
  // From the first submit to the last pod Running.
  double seconds = std::chrono::duration<double>(last_running - start).count();
  std::vector<double> values;
  for (const auto& [id, ms] : latency_ms) values.push_back(ms);
  std::fprintf(summary, "%zu/%zu pods Running in %.2fs: %.0f pods/s; submit->Running latency p50=%.1fms p90=%.1fms "
              "p99=%.1fms max=%.1fms\n",
              latency_ms.size(), submitted_at.size(), seconds, latency_ms.size() / std::max(seconds, 1e-9),
              Percentile(values, 50), Percentile(values, 90), Percentile(values, 99),
              values.empty() ? 0.0 : *std::max_element(values.begin(), values.end()));
  if (options.report != nullptr) {
    options.report->running = latency_ms.size();
    options.report->seconds = seconds;
    options.report->latency_ms = std::move(values);
  }
  if (latency_ms.size() < submitted_at.size()) {
    std::fprintf(stderr, "error: timed out waiting for %zu pod(s) to reach Running\n",
                 submitted_at.size() - latency_ms.size());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace podflow::cli
