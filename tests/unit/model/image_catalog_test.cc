#include "model/image_catalog.h"

#include <catch2/catch.hpp>

namespace podflow::model {
namespace {

TEST_CASE("image references are checked as kubelet's parser checks them") {
  for (const char* good :
       {"nginx", "nginx:1.14.2", "busybox:1.28", "registry.k8s.io/pause:3.9",
        "localhost:5000/team/app:v1", "ghcr.io/org/my_app__x-y.z:1.0-rc.1",
        "docker.io/library/"
        "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "[::1]:5000/app", "quay.io/a/b/c/d:latest"}) {
    INFO(good);
    CHECK_FALSE(InvalidImageReference(good));
  }
  CHECK(InvalidImageReference("busyBOX") ==
        "invalid reference format: repository name (library/busyBOX) must be lowercase");
  CHECK(InvalidImageReference("THIS IS NOT A VALID IMAGE REFERENCE!!") ==
        "invalid reference format: repository name (library/THIS IS NOT A VALID IMAGE REFERENCE!!) "
        "must be "
        "lowercase");
  CHECK(InvalidImageReference("hfhugs/unsloth-gemma-3-4b-it-GGUF:Q4_K_XL") ==
        "invalid reference format: repository name (hfhugs/unsloth-gemma-3-4b-it-GGUF) must be "
        "lowercase");
  for (const char* bad :
       {"", "registry.hub.docker.com/library//nginx:latest", ":sha-0b293ab", "nginx:", "nginx:-bad",
        "https://registry.example.com/app", "app@sha256:abc", "nginx bad"}) {
    INFO(bad);
    CHECK(InvalidImageReference(bad) == "invalid reference format");
  }
  CHECK(InvalidImageReference(std::string(300, 'a')) ==
        "repository name must not be more than 255 characters");
  CHECK(InvalidImageReference(std::string(100'000, 'a')) == "invalid reference format");
}

TEST_CASE("an open registry has every well-formed image but those marked missing") {
  RegistryConfig config;
  config.open = true;
  config.images = {{"nginx", {"1.14.2", "1.25"}, 44'000'000, SimDuration(300), {}}};
  config.missing = {"example/gone", "redis:6"};
  config.default_size_bytes = 1234;
  config.default_pull_time = SimDuration(700);
  ImageCatalog catalog(config);
  std::optional<ResolvedImage> app = catalog.Resolve("registry.example.com/api:2.3.1");
  REQUIRE(app);
  CHECK(app->canonical == "registry.example.com/api:2.3.1");
  CHECK(app->size_bytes == 1234);
  CHECK(app->pull_time == SimDuration(700));
  REQUIRE(app->behavior != nullptr);
  CHECK(app->behavior->empty());
  CHECK(catalog.Resolve("nginx:1.25")->size_bytes == 44'000'000);
  CHECK_FALSE(catalog.Resolve("nginx:9.9"));  // a listed image keeps its tags
  CHECK_FALSE(catalog.Resolve("example/gone:v1"));
  CHECK_FALSE(catalog.Resolve("docker.io/example/gone"));
  CHECK_FALSE(catalog.Resolve("redis:6"));
  CHECK(catalog.Resolve("redis:7"));
  CHECK_FALSE(catalog.Resolve("busyBOX"));

  ImageCatalog closed(std::vector<CatalogImage>{{"nginx", {}, 1, SimDuration(1), {}}});
  CHECK(closed.Resolve("nginx:anything"));
  CHECK_FALSE(closed.Resolve("redis:7"));
}

TEST_CASE("runtime.registry is a list (closed) or a map") {
  Result<RegistryConfig> list =
      ParseRegistry(YAML::Load("[{name: nginx, tags: ['1.25']}]"), "runtime.registry");
  REQUIRE(list.ok());
  CHECK_FALSE(list->open);
  CHECK(list->images.size() == 1);
  Result<RegistryConfig> map = ParseRegistry(
      YAML::Load(
          "{open: true, images: [{name: nginx}], missing: ['nginx:9.9'], defaultSizeBytes: 10, "
          "defaultPullMillis: 20}"),
      "runtime.registry");
  REQUIRE(map.ok());
  CHECK(map->open);
  CHECK(map->missing == std::vector<std::string>{"nginx:9.9"});
  CHECK(map->default_size_bytes == 10);
  CHECK(map->default_pull_time == SimDuration(20));
  auto error = [](const char* yaml) {
    Result<RegistryConfig> r = ParseRegistry(YAML::Load(yaml), "runtime.registry");
    REQUIRE_FALSE(r.ok());
    return r.status().message();
  };
  CHECK(error("{open: maybe}") == "runtime.registry.open: must be true or false");
  CHECK(error("{missing: [Nginx]}") ==
        "runtime.registry.missing[0]: \"Nginx\": invalid reference format: repository name "
        "(library/Nginx) must be "
        "lowercase");
  CHECK(error("{images: [{tags: [a]}]}") == "runtime.registry.images[0].name: Required value");
  CHECK(error("{closed: true}") == "runtime.registry.closed: unknown key");
  CHECK(error("nginx") == "runtime.registry: must be a list of images or a map");
}

}  // namespace
}  // namespace podflow::model
