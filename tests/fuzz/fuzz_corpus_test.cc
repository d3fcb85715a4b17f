// The fuzz targets (tests/fuzz/*_fuzz.cc, built by tools/fuzz in
// build-fuzz/) run on their checked-in seed corpus for a bounded number of
// executions: a crash, a sanitizer report or a hang fails the test with
// libFuzzer's output. New inputs and artifacts go to a temp dir; the
// checked-in corpus is only read.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

namespace {

struct Run {
  int exit_code = -1;
  std::string output;
};

Run Fuzz(const std::string& target, int runs) {
  const std::string root = PODFLOW_SOURCE_DIR;
  const std::string binary = root + "/build-fuzz/tests/fuzz/" + target + "_fuzz";
  if (!std::filesystem::exists(binary)) {
    FAIL(binary << " is missing: build it with tools/fuzz build (meson test and tools/check do)");
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "podflow-fuzz-XXXXXX").string();
  const std::string dir = mkdtemp(tmpl.data());
  const std::string command = binary + " -runs=" + std::to_string(runs) + " -max_total_time=120" +
                              " -artifact_prefix=" + dir + "/ " + dir + " " + root + "/tests/fuzz/corpus/" +
                              target + " > " + dir + "/output.txt 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(dir + "/output.txt");
  Run run;
  run.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::filesystem::remove_all(dir);
  if (run.output.size() > 8000) run.output = "..." + run.output.substr(run.output.size() - 8000);
  return run;
}

TEST_CASE("fuzz: frames from any peer, 20000 executions") {
  Run run = Fuzz("frame", 20000);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("Done 20000 runs") != std::string::npos);
}

TEST_CASE("fuzz: manifests, 3000 executions") {
  Run run = Fuzz("manifest", 3000);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("Done 3000 runs") != std::string::npos);
}

}  // namespace
