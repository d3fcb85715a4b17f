#include "pipeline/config.h"

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

namespace podflow::pipeline {
namespace {

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(PODFLOW_SOURCE_DIR) + "/" + relative);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_CASE("The embedded defaults are the files in the tree") {
  CHECK(std::string(DefaultConfigText()) == ReadSource("config/default.yaml"));
  CHECK(std::string(EmbeddedPipelineText("single-process")) == ReadSource("pipelines/single-process.yaml"));
  CHECK(std::string(EmbeddedPipelineText("multi-process")) == ReadSource("pipelines/multi-process.yaml"));
  CHECK(EmbeddedPipelineText("nope") == nullptr);
}

TEST_CASE("The default config loads: one process running every stage") {
  auto config = LoadConfig("");
  REQUIRE(config.ok());
  CHECK(config->data_dir == "podflow-data");
  CHECK(config->sync);
  REQUIRE(config->pipeline.processes.size() == 1);
  CHECK(config->pipeline.processes[0].stages.size() == KnownStages().size());
  CHECK(config->pipeline.Endpoint("submit") == "tcp://127.0.0.1:7710");
  CHECK(config->Section("runtime")["nodes"].size() == 3);
}

TEST_CASE("The multi-process pipeline puts each stage in its own process") {
  auto spec = ParsePipeline(EmbeddedPipelineText("multi-process"), "multi-process");
  REQUIRE(spec.ok());
  CHECK(spec->processes.size() == KnownStages().size());
  REQUIRE(spec->ProcessOf("controllers") != nullptr);
  REQUIRE(spec->ProcessOf("binding") != nullptr);
  CHECK(spec->ProcessOf("binding")->name == "binding");
}

TEST_CASE("Bad pipeline files are rejected naming the key") {
  const char* base_channels =
      "channels: {submit: tcp://127.0.0.1:1, apiwatch: tcp://127.0.0.1:4, api: tcp://127.0.0.1:2, watch: tcp://127.0.0.1:3, "
      "decisions: inproc://d, reports: inproc://r, kubelet: inproc://k}\n";
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"channels: {submit: tcp://x}\nprocesses: [{name: a, stages: []}]\n", "channels.apiwatch: Required value"},
      {std::string(base_channels) + "processes: [{name: a, stages: [persistence, admission, scheduling, "
                                    "binding, runtime, proxy]}]\n",
       "no process runs stage \"status\""},
      {std::string(base_channels) + "processes: [{name: a, stages: [persistence, admission, scheduling, "
                                    "binding, runtime, proxy, status]}]\n",
       "no process runs stage \"controllers\""},
      {std::string(base_channels) + "processes: [{name: a, stages: [persistence, cooking]}]\n",
       "processes[0].stages[1]: unknown stage \"cooking\""},
      {std::string(base_channels) +
           "processes: [{name: a, stages: [persistence, admission, scheduling, binding]}, "
           "{name: b, stages: [runtime, proxy, status, controllers]}]\n",
       "channels.decisions: inproc:// cannot join stages in different processes"},
      {"channels: {submit: udp://x}\n", "channels.submit: \"udp://x\" is not an inproc://"},
      {"channels: {}\nextra: 1\n", "extra: unknown field"},
  };
  for (const Case& c : cases) {
    auto spec = ParsePipeline(c.text, "p.yaml");
    INFO(c.text);
    REQUIRE_FALSE(spec.ok());
    CHECK(spec.status().message().find(c.error) != std::string::npos);
    CHECK(spec.status().message().rfind("p.yaml: ", 0) == 0);
  }
}

TEST_CASE("Bad config files are rejected naming the key") {
  std::string dir = std::string(PODFLOW_SOURCE_DIR);
  auto missing = LoadConfig(dir + "/no/such/config.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("cannot read") != std::string::npos);
}

}  // namespace
}  // namespace podflow::pipeline
