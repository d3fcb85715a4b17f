// podflow-publish: inject manifests into a running pipeline through
// admission's submit channel, as `kubectl apply -f` / `kubectl create -f`
// would, and optionally generate load and wait for the pods to run.
#pragma once

#include <string>
#include <vector>

namespace podflow::cli {

// What a publish did, for callers that measure it (podflow-bench e2e).
struct PublishReport {
  size_t created = 0;                // objects created
  size_t running = 0;                // with --wait: pods seen Running
  double seconds = 0;                // first submit to the last pod Running (or the end)
  std::vector<double> latency_ms;    // with --wait: submit -> Running, per pod
};

struct PublishOptions {
  std::vector<std::string> files;  // -f: files, directories, "-" for stdin
  std::string config_file;         // where the pipeline's endpoints and the data dir come from
  std::string data_dir;            // --data-dir: overrides the config's storage.dataDir
  std::string server;              // submit endpoint override
  std::string watch_server;        // watch endpoint override (for --wait)
  std::string api_server;          // api endpoint override (for --wait)
  std::string token;               // bearer token (default: the data dir's admin token)
  int64_t count = 0;               // --count: generate this many pods
  double rate = 0;                 // --rate: pods per second (0: as fast as admission takes them)
  std::string template_file;       // --template: the pod to copy (default: a small nginx pod)
  bool apply = false;              // --apply: -f documents as `podflow apply` (kubectl apply) instead of create
  bool wait = false;               // --wait: until every published pod is Running
  int batch = 100;                 // pods per submit request under --count
  int timeout_seconds = 300;       // --wait gives up after this long
  PublishReport* report = nullptr; // filled in when set
};

// Returns the process exit code: 0 when every object was created (and, with
// --wait, every pod reached Running).
int RunPublish(const PublishOptions& options);

// The pod --count copies when no --template is given (a small nginx pod
// asking 100m cpu and 64Mi), named `name`.
std::string LoadTemplate(const std::string& name);

// The generated name of pod `index` from a template named `base`: base-<index>.
std::string GeneratedName(const std::string& base, int64_t index);

}  // namespace podflow::cli
