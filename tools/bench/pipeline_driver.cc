#include "pipeline_driver.h"

#include <chrono>
#include <fstream>
#include <thread>

#include "cli/publish.h"
#include "model/objects.h"

namespace podflow::bench {

std::string WriteTemplate(const std::string& dir, const std::string& name) {
  std::string path = dir + "/" + name + ".yaml";
  std::ofstream(path) << cli::LoadTemplate(name);
  return path;
}

size_t WaitForNodes(client::ApiClient& api, size_t want, const std::atomic<bool>& exited) {
  size_t nodes = 0;
  for (int i = 0; i < 600 && nodes < want && !exited; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Result<RangeResult> listed = api.List(model::KindPrefix(model::Kind("Node")));
    if (listed.ok()) nodes = listed->kvs.size();
  }
  return nodes;
}

}  // namespace podflow::bench
