// What the benchmarks that run a whole pipeline share (e2e_bench.cc,
// runtime_bench.cc).
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "client/client.h"

namespace podflow::bench {

// Writes podflow-publish's pod template `name` ("fast", "steady") into
// `dir`; its path.
std::string WriteTemplate(const std::string& dir, const std::string& name);

// Polls the API until `want` Nodes are stored, for up to a minute or until
// `exited` (the pipeline ended); how many there were at the end.
size_t WaitForNodes(client::ApiClient& api, size_t want, const std::atomic<bool>& exited);

}  // namespace podflow::bench
