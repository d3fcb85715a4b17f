#include "model/sim_behavior.h"

#include <catch2/catch.hpp>

#include "model/image_catalog.h"

namespace podflow::model {
namespace {

TEST_CASE("a behaviour annotation reads every key") {
  Result<SimBehavior> b = ParseSimBehaviorText(
      "{exitAfter: 1m30s, exitCode: 3, logs: [hello, world], memory: 250Mi, memoryAfter: 2s, "
      "startDelay: 500ms, readyAfter: 10s, unreadyAfter: 1m, unreadyFor: 30s, livenessFailAfter: "
      "never, terminationMessage: bye, stopAfter: never}",
      "behavior.podflow.io/app");
  REQUIRE(b.ok());
  CHECK(b->exit_after == SimDuration(90'000));
  CHECK(b->exit_code == 3);
  CHECK(b->logs == std::vector<std::string>{"hello", "world"});
  CHECK(b->memory_bytes == 250 * 1024 * 1024);
  CHECK(b->memory_after == SimDuration(2000));
  CHECK(b->start_delay == SimDuration(500));
  CHECK(b->ready_after == SimDuration(10'000));
  CHECK(b->unready_after == SimDuration(60'000));
  CHECK(b->unready_for == SimDuration(30'000));
  CHECK(b->liveness_fail_after == kNever);
  CHECK(b->termination_message == "bye");
  CHECK(b->stop_after == kNever);
}

TEST_CASE("a bad behaviour is refused, naming the annotation and the key") {
  auto error = [](const std::string& text) {
    Result<SimBehavior> b = ParseSimBehaviorText(text, "podflow.io/behavior");
    REQUIRE_FALSE(b.ok());
    return b.status().message();
  };
  CHECK(error("{exitCode: 300}") ==
        "metadata.annotations[podflow.io/behavior].exitCode: must be an integer 0..255");
  CHECK(error("{exitAfter: soon}") ==
        "metadata.annotations[podflow.io/behavior].exitAfter: must be a duration such as \"30s\", "
        "\"1m30s\" or \"500ms\" (or \"never\"), got \"soon\"");
  CHECK(
      error("{memoryAfter: never}") ==
      "metadata.annotations[podflow.io/behavior].memoryAfter: must be a duration such as \"30s\", "
      "\"1m30s\" or \"500ms\", got \"never\"");
  CHECK(error("{exitafter: 5s}") ==
        "metadata.annotations[podflow.io/behavior].exitafter: unknown key");
  CHECK(error("[1, 2]") == "metadata.annotations[podflow.io/behavior]: must be a map");
  CHECK(error("{memory: lots}") ==
        "metadata.annotations[podflow.io/behavior].memory: must be a quantity such as \"250Mi\", "
        "got \"lots\"");
  CHECK(error("{logs: hello}") ==
        "metadata.annotations[podflow.io/behavior].logs: must be a list of strings");
  CHECK_THAT(error("{exitAfter: [}"),
             Catch::StartsWith("metadata.annotations[podflow.io/behavior]: "));
  // An alias repeated: one long line many times over.
  std::string bomb = "{logs: [&a " + std::string(100'000, 'x');
  for (int i = 0; i < 50; ++i) bomb += ", *a";
  bomb += "]}";
  CHECK(error(bomb) ==
        "metadata.annotations[podflow.io/behavior].logs: must not be more than 1 MiB of lines");
}

TEST_CASE("behaviours overlay field by field") {
  SimBehavior base = *ParseSimBehaviorText("{exitAfter: 10s, exitCode: 1, logs: [a]}", "k");
  CHECK_FALSE(base.empty());
  base.Overlay(*ParseSimBehaviorText("{exitCode: 0}", "k"));
  CHECK(base.exit_after == SimDuration(10'000));
  CHECK(base.exit_code == 0);
  CHECK(base.logs == std::vector<std::string>{"a"});
  CHECK(SimBehavior{}.empty());
}

TEST_CASE("the registry catalog carries an image's behaviour") {
  const YAML::Node node =
      YAML::Load("[{name: job-runner, behavior: {exitAfter: 20s}}, {name: nginx, tags: ['1.25']}]");
  Result<RegistryConfig> registry = ParseRegistry(node, "runtime.registry");
  REQUIRE(registry.ok());
  ImageCatalog catalog(*registry);
  std::optional<ResolvedImage> runner = catalog.Resolve("job-runner:v1");
  REQUIRE(runner);
  REQUIRE(runner->behavior != nullptr);
  CHECK(runner->behavior->exit_after == SimDuration(20'000));
  std::optional<ResolvedImage> nginx = catalog.Resolve("nginx:1.25");
  REQUIRE(nginx);
  CHECK(nginx->behavior->empty());

  Result<RegistryConfig> bad =
      ParseRegistry(YAML::Load("[{name: x, behavior: {exitCode: -1}}]"), "runtime.registry");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() ==
        "runtime.registry[0].behavior.exitCode: must be an integer 0..255");
}

}  // namespace
}  // namespace podflow::model
