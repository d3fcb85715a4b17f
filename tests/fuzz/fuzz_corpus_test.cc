// The fuzz targets (tests/fuzz/*_fuzz.cc, built by tools/fuzz in
// build-fuzz/) run on their checked-in seed corpus for a bounded number of
// executions, or 120 s when the machine is slower than that allows (an
// execution is a round trip on the bus; under a loaded CI run a pass has
// gone at 77 executions/s): a crash, a sanitizer report or a hang fails the
// test with libFuzzer's output, and so does a pass that ran too little. New inputs and artifacts go to a temp dir; the
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
  long done = -1;  // libFuzzer's "Done N runs"; -1 when it did not finish
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
  if (const size_t at = run.output.rfind("Done "); at != std::string::npos) {
    long n = -1;
    if (std::sscanf(run.output.c_str() + at, "Done %ld runs", &n) == 1) run.done = n;
  }
  std::filesystem::remove_all(dir);
  if (run.output.size() > 8000) run.output = "..." + run.output.substr(run.output.size() - 8000);
  return run;
}

TEST_CASE("fuzz: frames from any peer, 20000 executions") {
  Run run = Fuzz("frame", 20000);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.done >= 2000);  // all 20000, or what 120 s allowed
}

TEST_CASE("fuzz: manifests, 3000 executions") {
  Run run = Fuzz("manifest", 3000);
  INFO(run.output);
  CHECK(run.exit_code == 0);
  CHECK(run.done >= 1000);  // all 3000, or what 120 s allowed
}

}  // namespace
