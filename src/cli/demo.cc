#include "cli/demo.h"

#include "cli/commands.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "log/log.h"
#include "model/codec.h"
#include "model/objects.h"
#include "watch/watch.h"

namespace podflow::cli {
namespace {

// The example pod of the Kubernetes documentation's first steps, in our words.
constexpr const char* kDefaultManifest = R"(apiVersion: v1
kind: Pod
metadata:
  name: nginx-pod
  labels:
    app: nginx
spec:
  containers:
  - name: nginx
    image: nginx:1.14.2
    ports:
    - containerPort: 80
)";

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

int RunDemo(const DemoOptions& options) {
  std::string text = kDefaultManifest;
  if (!options.manifest_file.empty()) {
    std::ifstream in(options.manifest_file);
    if (!in) {
      std::fprintf(stderr, "error: cannot read %s\n", options.manifest_file.c_str());
      return 1;
    }
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
  }
  auto documents = model::DecodeManifests(text);
  if (!documents.ok()) {
    std::fprintf(stderr, "error: %s\n", documents.status().message().c_str());
    return 1;
  }

  LogOptions log_options;
  log_options.dir = options.data_dir;
  auto log = OpenLog(log_options);
  if (!log.ok()) {
    std::fprintf(stderr, "error: opening the event log in %s: %s\n", options.data_dir.c_str(),
                 log.status().ToString().c_str());
    return 1;
  }
  EventLog& event_log = **log;
  std::printf("event log %s at revision %lld\n", options.data_dir.c_str(),
              static_cast<long long>(event_log.CurrentRevision().value()));

  WatchOptions watch_options;
  watch_options.key = "/registry/";
  watch_options.prefix = true;
  auto watcher = Watcher::Open(&event_log, watch_options);
  if (!watcher.ok()) {
    std::fprintf(stderr, "error: %s\n", watcher.status().ToString().c_str());
    return 1;
  }

  int failures = 0;
  for (const model::Decoded& doc : *documents) {
    if (!doc.status.ok()) {
      std::fprintf(stderr, "Error from server (Invalid): %s\n", doc.status.message().c_str());
      ++failures;
      continue;
    }
    const model::Object& obj = doc.object;
    auto result = event_log.Put(model::ObjectKey(*obj.kind, obj.namespace_, obj.name), obj.bytes, Revision(0));
    std::string what = Lower(obj.kind->kind) + "/" + obj.name;
    if (!result.ok()) {
      std::fprintf(stderr, "error: %s: %s\n", what.c_str(), result.status().ToString().c_str());
      ++failures;
    } else if (!result->succeeded) {
      std::fprintf(stderr, "Error from server (AlreadyExists): %s \"%s\" already exists\n",
                   std::string(obj.kind->resource).c_str(), obj.name.c_str());
      ++failures;
    } else {
      std::printf("%s created (revision %lld)\n", what.c_str(),
                  static_cast<long long>(result->revision.value()));
    }
  }

  // What a watcher of /registry/ saw, until it has caught up.
  Revision head = event_log.CurrentRevision();
  while ((*watcher)->next_revision() <= head) {
    WatchBatch batch = (*watcher)->Next(std::chrono::milliseconds(500));
    if (batch.kind == WatchBatch::Kind::kEvents) {
      for (const WatchEvent& e : batch.events) {
        std::printf("watch: revision %lld %s %s\n", static_cast<long long>(batch.revision.value()),
                    e.type == ChangeType::kPut ? (e.created ? "ADDED" : "MODIFIED") : "DELETED",
                    e.kv.key.c_str());
      }
    } else if (batch.kind != WatchBatch::Kind::kProgress && batch.kind != WatchBatch::Kind::kTimedOut) {
      std::fprintf(stderr, "watch ended: %s\n", batch.status.ToString().c_str());
      break;
    }
  }

  auto state = event_log.Range(RangeRequest::Prefix("/registry/"));
  if (!state.ok()) {
    std::fprintf(stderr, "error: %s\n", state.status().ToString().c_str());
    return 1;
  }
  std::printf("\n%-48s %-10s %-8s %s\n", "KEY", "CREATED", "VERSION", "MODIFIED");
  for (const KeyValue& kv : state->kvs) {
    std::printf("%-48s %-10lld %-8lld %lld\n", kv.key.c_str(),
                static_cast<long long>(kv.create_revision.value()),
                static_cast<long long>(kv.version),
                static_cast<long long>(kv.mod_revision.value()));
  }
  return failures == 0 ? 0 : 1;
}

void AddDemoCommand(CLI::App& app, CommandAction& action) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "Create a manifest's objects in an event log directly and show what a watcher sees");
  cmd->add_option("--data-dir", options->data_dir, "Event log directory")->capture_default_str();
  cmd->add_option("-f,--filename", options->manifest_file, "Manifest (YAML or JSON); default: an nginx pod");
  cmd->callback([&action, options] { action = [options] { return RunDemo(*options); }; });
}

}  // namespace podflow::cli
