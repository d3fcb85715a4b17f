// The short variant of `podflow-bench chaos`: a few SIGKILLs of the whole
// pipeline and of single stages under publisher load, after which every
// acknowledged pod is in the log and Running, none was bound twice and no
// revision is missing.
#include <filesystem>

#include <catch2/catch.hpp>

#include "chaos.h"

namespace podflow::bench {
namespace {

ChaosResult Run(const std::string& mode, int cycles) {
  ChaosOptions options;
  options.podflow = std::string(PODFLOW_BUILD_DIR) + "/podflow";
  options.work_dir = std::filesystem::temp_directory_path().string();
  options.mode = mode;
  options.cycles = cycles;
  options.rate = 40;
  options.seed = 7;
  ChaosResult r = RunChaos(options);
  INFO(r.error);
  REQUIRE(r.error.empty());
  return r;
}

void CheckConverged(const ChaosResult& r) {
  std::string examples;
  for (const std::string& e : r.examples) examples += e + "\n";
  INFO(examples);
  CHECK(r.acknowledged > 0);
  CHECK(r.lost == 0);
  CHECK(r.stuck == 0);
  CHECK(r.bound_twice == 0);
  CHECK(r.revision_gaps == 0);
  CHECK(r.recovery_timeouts == 0);
}

TEST_CASE("chaos: kill -9 of the single-process pipeline under load loses nothing") {
  ChaosResult r = Run("single", 3);
  CHECK(r.kills == 3);
  CheckConverged(r);
}

TEST_CASE("chaos: kill -9 of single stages under load loses nothing") {
  ChaosResult r = Run("stages", 4);
  CHECK(r.kills >= 4);
  CheckConverged(r);
}

}  // namespace
}  // namespace podflow::bench
