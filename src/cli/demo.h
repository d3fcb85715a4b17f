// `podflow demo`: the event log at work until the pipeline stages exist.
#pragma once

#include <string>

namespace podflow::cli {

struct DemoOptions {
  std::string data_dir = "podflow-data";
  std::string manifest_file;  // empty: the embedded nginx pod
};

// Decodes the manifest, creates each object in the log with "must not
// exist" semantics, and prints what a watcher of /registry/ sees and the
// log's state. Returns the process exit code.
int RunDemo(const DemoOptions& options);

}  // namespace podflow::cli
