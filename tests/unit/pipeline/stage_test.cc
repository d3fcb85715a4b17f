// The stage registry and the pull-stage skeleton.
#include "pipeline/stage.h"

#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "pipeline/pull_stage.h"

namespace podflow::pipeline {
namespace {

using namespace std::chrono_literals;

struct FakeBinding {
  static constexpr std::string_view kName = "binding";
  Status Start() { return Status::Ok(); }
  void Stop() {}
};
static_assert(Stage<FakeBinding>);

struct NotAStage {
  static constexpr std::string_view kName = "cooking";  // not one of kStageNames
  Status Start() { return Status::Ok(); }
  void Stop() {}
};
static_assert(!Stage<NotAStage>);

Result<std::unique_ptr<FakeBinding>> MakeFake(StageContext&) { return std::make_unique<FakeBinding>(); }

TEST_CASE("The registry names each stage by its kName and refuses a second registration") {
  StageRegistry registry;
  REQUIRE(registry.Register<FakeBinding>(MakeFake).ok());
  CHECK(registry.Find("binding") != nullptr);
  CHECK(registry.Find("status") == nullptr);
  Status again = registry.Register<FakeBinding>(MakeFake);
  CHECK(again.code() == Code::kInvalid);
  CHECK(again.message() == "stage \"binding\" is registered twice");
}

TEST_CASE("Every known stage name is one the pipeline file accepts") {
  REQUIRE(KnownStages().size() == kStageNames.size());
  for (size_t i = 0; i < kStageNames.size(); ++i) CHECK(KnownStages()[i] == kStageNames[i]);
  CHECK(IsStageName("persistence"));
  CHECK_FALSE(IsStageName("cooking"));
}

// A worker that records the batches it handled.
struct Recorder {
  size_t index;
  std::mutex* mu;
  std::vector<std::pair<size_t, int64_t>>* seen;  // (worker, value)
};

TEST_CASE("A pull stage decodes frames into their items, keeps one key's items in order on one worker, and drops "
          "what it cannot decode") {
  bus::Context bus;
  ClusterConfig config;
  config.pipeline.channels["decisions"] = "inproc://pull-stage-test";
  StageContext context{bus, config};
  std::mutex mu;
  std::vector<std::pair<size_t, int64_t>> seen;
  using Pull = PullStage<int64_t, Recorder>;
  Pull stage(context,
             Pull::Spec{"decisions", "test.pull", 3,
                        [&](size_t i) { return std::make_unique<Recorder>(Recorder{i, &mu, &seen}); },
                        // Each frame carries two items: 2v and 2v+1 under its key.
                        [](const bus::Frame& frame) -> Result<std::vector<Pull::Decoded>> {
                          const msg::Decision* d = frame.envelope().body_as_Decision();
                          if (d == nullptr || d->pod_key() == nullptr) return Status::Invalid("no decision");
                          std::vector<Pull::Decoded> items;
                          items.push_back(Pull::Decoded{d->pod_key()->str(), 2 * d->pod_mod_revision()});
                          items.push_back(Pull::Decoded{d->pod_key()->str(), 2 * d->pod_mod_revision() + 1});
                          return items;
                        },
                        [](Recorder& w, std::vector<int64_t>& batch) {
                          std::lock_guard<std::mutex> lock(*w.mu);
                          for (int64_t v : batch) w.seen->emplace_back(w.index, v);
                        }});
  REQUIRE(stage.Start().ok());
  bus::Pusher pusher(bus, "inproc://pull-stage-test");
  for (int64_t i = 0; i < 60; ++i) {
    flatbuffers::FlatBufferBuilder fbb;
    // Keys a, b, c in turn; every tenth frame is a body the decoder refuses.
    if (i % 10 == 9) {
      REQUIRE(pusher.Push(bus::FinishFrame(fbb, msg::Body::ReadRequest, msg::CreateReadRequest(fbb).Union())).ok());
      continue;
    }
    std::string key(1, static_cast<char>('a' + i % 3));
    auto d = msg::CreateDecision(fbb, fbb.CreateString(key), 0, i);
    REQUIRE(pusher.Push(bus::FinishFrame(fbb, msg::Body::Decision, d.Union())).ok());
  }
  for (int i = 0; i < 100; ++i) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (seen.size() == 108) break;
    }
    std::this_thread::sleep_for(10ms);
  }
  stage.Stop();
  REQUIRE(seen.size() == 108);
  // Per key: one worker, ascending values.
  for (int k = 0; k < 3; ++k) {
    std::optional<size_t> worker;
    int64_t last = -1;
    for (auto [w, v] : seen) {
      if (v / 2 % 3 != k) continue;
      if (worker) CHECK(*worker == w);
      worker = w;
      CHECK(v > last);
      last = v;
    }
  }
}

}  // namespace
}  // namespace podflow::pipeline
