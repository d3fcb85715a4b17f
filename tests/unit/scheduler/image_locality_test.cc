// ImageLocality (kubernetes plugins/imagelocality), exact scores worked by
// hand: sum over the pod's images the node holds of
// int(size * nodes-with-image / all-nodes), clamped to [23Mi, 1000Mi *
// containers], score = 100 * (sum - 23Mi) / (1000Mi * containers - 23Mi).
// Also NormalizedImageName and the snapshot's per-image node counts.
#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/plugins/image_locality/image_locality.h"

namespace podflow::scheduler {
namespace {

using plugins::ImageLocality;
using testing::MakeNode;
using testing::MakePod;

constexpr int64_t kMi = 1024 * 1024;

TEST_CASE("NormalizedImageName", "[image-locality]") {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"nginx", "docker.io/library/nginx:latest"},
      {"nginx:1.25", "docker.io/library/nginx:1.25"},
      {"library/nginx", "docker.io/library/nginx:latest"},
      {"docker.io/library/nginx:latest", "docker.io/library/nginx:latest"},
      {"index.docker.io/library/nginx", "docker.io/library/nginx:latest"},
      {"bitnami/redis:7", "docker.io/bitnami/redis:7"},
      {"quay.io/app/api", "quay.io/app/api:latest"},
      {"localhost/app", "localhost/app:latest"},
      {"registry:5000/team/app", "registry:5000/team/app:latest"},
      {"registry:5000/team/app:v2", "registry:5000/team/app:v2"},
      {"nginx@sha256:abcd", "docker.io/library/nginx@sha256:abcd"},
      {"", ""},
  };
  for (const Case& c : cases) {
    INFO(c.in);
    CHECK(NormalizedImageName(c.in) == c.out);
  }
}

// n1: nginx 250Mi; n2: nginx 250Mi and quay.io/team/app:v1 600Mi; n3: none;
// n4: nginx under its full name. nginx is on 3 of 4 nodes, the app on 1.
Snapshot FourNodes() {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("n1").Image({"nginx:latest"}, 250 * kMi).Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode()
                              .Name("n2")
                              .Image({"docker.io/library/nginx:latest", "nginx@sha256:1111"}, 250 * kMi)
                              .Image({"quay.io/team/app:v1"}, 600 * kMi)
                              .Info())
              .ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("n3").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("n4").Image({"docker.io/library/nginx"}, 250 * kMi).Info()).ok());
  return snap;
}

std::vector<int64_t> Scores(const Snapshot& snap, const PodInfo& pod) {
  ImageLocality p;
  CycleState state;
  REQUIRE(p.PreScore(state, pod, snap, {}).IsSuccess());
  std::vector<int64_t> out;
  for (const NodeInfo& node : snap.nodes()) out.push_back(p.Score(state, pod, node));
  return out;
}

TEST_CASE("ImageLocality scores", "[image-locality]") {
  Snapshot snap = FourNodes();
  CHECK(snap.ImageNumNodes("docker.io/library/nginx:latest") == 3);
  CHECK(snap.ImageNumNodes("quay.io/team/app:v1") == 1);
  CHECK(snap.ImageNumNodes("docker.io/library/redis:latest") == 0);

  struct Case {
    const char* name;
    PodInfo pod;
    std::vector<int64_t> scores;  // n1..n4
  };
  std::vector<Case> cases;
  // One container: max 1000Mi. 100 * (196608000 - 24117248) / (1048576000 - 24117248) = 16.8 -> 16.
  cases.push_back({"one image", MakePod().Image("nginx").Info(), {16, 16, 0, 16}});
  // Init container app + container nginx: two containers, max 2000Mi.
  // nginx: int(250Mi * 3/4) = 196608000; n1, n4: 100 * (196608000 - 23Mi) /
  // (2000Mi - 23Mi) = 8.32 -> 8. n2: + int(600Mi * 1/4) = 157286400 ->
  // 353894400 -> 15.9 -> 15. n3: the 23Mi floor -> 0.
  cases.push_back({"init container counts", MakePod().InitImage("quay.io/team/app:v1").Image("nginx").Info(),
                   {8, 15, 0, 8}});
  // An image nobody has: the floor, 0 everywhere.
  cases.push_back({"unknown image", MakePod().Image("redis").Info(), {0, 0, 0, 0}});
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(Scores(snap, c.pod) == c.scores);
  }

  SECTION("a big image everywhere reaches 100; a small one stays at 0") {
    Snapshot all;
    for (const char* name : {"a", "b"}) {
      REQUIRE(all.UpsertNode(
                     MakeNode().Name(name).Image({"big:1"}, 2000 * kMi).Image({"small:1"}, 20 * kMi).Info())
                  .ok());
    }
    CHECK(Scores(all, MakePod().Image("big:1").Info()) == std::vector<int64_t>{100, 100});
    CHECK(Scores(all, MakePod().Image("small:1").Info()) == std::vector<int64_t>{0, 0});
  }
}

TEST_CASE("the snapshot keeps image counts on node upsert and removal", "[image-locality]") {
  Snapshot snap = FourNodes();
  const std::string nginx = "docker.io/library/nginx:latest";
  // n1 replaced by a node without images.
  REQUIRE(snap.UpsertNode(MakeNode().Name("n1").Info()).ok());
  CHECK(snap.ImageNumNodes(nginx) == 2);
  // n3 gains nginx.
  REQUIRE(snap.UpsertNode(MakeNode().Name("n3").Image({"nginx"}, 250 * kMi).Info()).ok());
  CHECK(snap.ImageNumNodes(nginx) == 3);
  REQUIRE(snap.RemoveNode("n2").ok());
  CHECK(snap.ImageNumNodes(nginx) == 2);
  CHECK(snap.ImageNumNodes("quay.io/team/app:v1") == 0);
  // nginx now on n3, n4 of 3 nodes: int(250Mi * 2/3) = 174762666 -> 100 * (174762666 - 23Mi) / 977Mi = 14.7 -> 14.
  CHECK(Scores(snap, MakePod().Image("nginx").Info()) == std::vector<int64_t>{0, 14, 14});
}

TEST_CASE("ImageLocality formula helpers", "[image-locality]") {
  CHECK(plugins::ImageLocalityPriority(0, 1) == 0);
  CHECK(plugins::ImageLocalityPriority(23 * kMi, 1) == 0);
  CHECK(plugins::ImageLocalityPriority(1000 * kMi, 1) == 100);
  CHECK(plugins::ImageLocalityPriority(5000 * kMi, 3) == 100);
  // (511.5Mi - 23Mi) * 100 / 977Mi = 50.
  CHECK(plugins::ImageLocalityPriority(511 * kMi + kMi / 2, 1) == 50);
  // int(100 * 1/3) = 33 (float64, truncated).
  CHECK(plugins::ScaledImageScore(100, 1, 3) == 33);
}

}  // namespace
}  // namespace podflow::scheduler
