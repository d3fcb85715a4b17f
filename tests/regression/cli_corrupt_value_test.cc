// `podflow get pods`, `get pods -A`, `describe pod` and `get events` read
// stored values as FlatBuffers without verifying them: one value under their
// prefix that was not a valid object made them segfault (exit 139). Every
// value the CLI reads is now verified; a corrupt one is reported with its
// key and skipped, and the valid objects beside it are still printed.
#include <catch2/catch.hpp>

#include "log/log.h"
#include "pipeline_fixture.h"

namespace podflow::e2e {
namespace {

const char kPod[] = R"(apiVersion: v1
kind: Pod
metadata: {name: fine}
spec:
  containers: [{name: c, image: "nginx:1.14.2"}]
)";

TEST_CASE("cli: a corrupt stored value is reported with its key and skipped, never a crash") {
  Pipeline p(false);
  p.StartAll();
  auto created = p.Submit(kPod);
  REQUIRE(created.size() == 1);
  REQUIRE(created[0].first.empty());
  p.StopAll();
  {
    // Written straight into the log, as a bad disk or a foreign writer could.
    LogOptions options;
    options.dir = p.data_dir();
    auto log = OpenLog(options);
    REQUIRE(log.ok());
    REQUIRE((*log)->Put("/registry/pods/default/broken", "not a flatbuffer").ok());
    REQUIRE((*log)->Put("/registry/events/default/broken.1", std::string(3, '\xff')).ok());
  }
  p.StartAll();
  const std::string podflow = Pipeline::Program("podflow");
  const std::string config = p.config();
  struct Case {
    std::vector<std::string> args;
    std::string reported;  // the corrupt key the output names
    std::string printed;   // what the valid objects still show
  };
  const std::vector<Case> cases = {
      {{"get", "pods"}, "/registry/pods/default/broken", "fine"},
      {{"get", "pods", "-A"}, "/registry/pods/default/broken", "fine"},
      {{"get", "pods", "-o", "yaml"}, "/registry/pods/default/broken", "name: fine"},
      {{"describe", "pod"}, "/registry/pods/default/broken", "Name:"},
      {{"describe", "pod", "fine"}, "/registry/events/default/broken.1", "Name:"},
      {{"get", "events"}, "/registry/events/default/broken.1", "Scheduled"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {podflow};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    argv.insert(argv.end(), {"--config", config});
    auto [code, output] = RunCommand(argv, p.dir());
    INFO(c.args[0] << " " << c.args[1] << ": " << output);
    CHECK(code == 0);  // not a signal (-1), and the valid objects listed
    CHECK(output.find(c.reported) != std::string::npos);
    CHECK(output.find(c.printed) != std::string::npos);
  }
  auto [code, output] = RunCommand({podflow, "get", "pod", "broken", "--config", config}, p.dir());
  INFO(output);
  CHECK(code == 1);
  CHECK(output.find("the value stored at /registry/pods/default/broken is not a valid Pod") != std::string::npos);
}

}  // namespace
}  // namespace podflow::e2e
