#include <optional>

#include <catch2/catch.hpp>

#include "stages/runtime/report_outbox.h"

namespace podflow::runtime {
namespace {

using namespace std::chrono_literals;
using Clock = ReportOutbox::Clock;

model::Report RunningReport(const std::string& key, const std::string& ip) {
  model::Report r;
  r.node_name = "node-1";
  r.pod_key = key;
  r.pod_uid = "uid-" + key;
  r.observed_mod_revision = 7;
  r.status.phase = api::PodPhase::Running;
  r.status.pod_ip = ip;
  auto c = std::make_unique<api::ContainerStatusT>();
  c->name = "c";
  c->ready = true;
  r.status.container_statuses.push_back(std::move(c));
  r.events.push_back({"Normal", "Started", "Started container c", "2026-11-26T00:00:00Z", "spec.containers{c}"});
  return r;
}

// The stored status as the status stage writes it: the report's status
// plus what it derives (conditions), packed into a Pod.
std::string StoredPod(const model::Report& r) {
  api::PodT pod;
  pod.status = std::make_unique<api::PodStatusT>();
  pod.status->phase = r.status.phase;
  pod.status->pod_ip = r.status.pod_ip;
  for (const auto& c : r.status.container_statuses) {
    pod.status->container_statuses.push_back(std::make_unique<api::ContainerStatusT>(*c));
  }
  pod.status->conditions.push_back(std::make_unique<api::PodConditionT>());
  pod.status->conditions.back()->type = "Ready";
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(api::Pod::Pack(fbb, &pod));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

struct Sent {
  std::vector<model::Report> reports;
  std::vector<size_t> frames;  // reports per frame taken
  bool refuse = false;
  std::optional<size_t> take_frames;  // refuse once this many more were taken
  ReportOutbox::Push push() {
    return [this](std::string_view frame) {
      if (refuse || take_frames == size_t{0}) return Status::Unavailable("full");
      if (take_frames) --*take_frames;
      auto r = model::DecodeReports(frame);
      REQUIRE(r.ok());
      frames.push_back(r->size());
      for (model::Report& one : *r) reports.push_back(std::move(one));
      return Status::Ok();
    };
  }
};

void SendOne(ReportOutbox& outbox, model::Report report, Clock::time_point now) {
  std::vector<model::Report> batch;
  batch.push_back(std::move(report));
  outbox.Send(std::move(batch), now);
}

TEST_CASE("report outbox: a status the stored pod shows is not sent again") {
  Sent sent;
  ReportOutbox outbox(sent.push());
  const Clock::time_point t0{};
  SendOne(outbox, RunningReport("/registry/pods/default/a", "10.244.0.5"), t0);
  REQUIRE(sent.reports.size() == 1);
  CHECK(sent.reports[0].events.size() == 1);
  CHECK(outbox.awaiting() == 1);

  const std::string stored = StoredPod(sent.reports[0]);
  outbox.Observe("/registry/pods/default/a", flatbuffers::GetRoot<api::Pod>(stored.data())->status(), t0);
  CHECK(outbox.awaiting() == 0);
  outbox.ResendOverdue(t0 + 1h);
  CHECK(sent.reports.size() == 1);
}

// The stored pod of `key` showing `r`'s status (or the older one given).
void Show(ReportOutbox& outbox, const model::Report& r, Clock::time_point now) {
  const std::string stored = StoredPod(r);
  outbox.Observe(r.pod_key, flatbuffers::GetRoot<api::Pod>(stored.data())->status(), now);
}

TEST_CASE("report outbox: a report lost (one sent after it was shown) is sent again, without events") {
  Sent sent;
  ReportOutbox outbox(sent.push());
  const Clock::time_point t0{};
  SendOne(outbox, RunningReport("/registry/pods/default/a", "10.244.0.5"), t0);
  SendOne(outbox, RunningReport("/registry/pods/default/b", "10.244.0.6"), t0 + 1s);
  // b, sent after a, is shown; a never is: a was lost.
  Show(outbox, RunningReport("/registry/pods/default/b", "10.244.0.6"), t0 + 1s);
  outbox.ResendOverdue(t0 + 1500ms);
  outbox.ResendOverdue(t0 + 2500ms);
  CHECK(sent.reports.size() == 2);  // not due yet
  outbox.ResendOverdue(t0 + 3s);
  REQUIRE(sent.reports.size() == 3);
  CHECK(sent.reports[2].pod_key == "/registry/pods/default/a");
  CHECK(sent.reports[2].events.empty());
  CHECK(sent.reports[2].status.pod_ip == "10.244.0.5");
  CHECK(sent.reports[2].observed_mod_revision == 7);
  Show(outbox, sent.reports[2], t0 + 3500ms);
  CHECK(outbox.awaiting() == 0);
}

TEST_CASE("report outbox: a status stage that is only behind gets nothing twice") {
  Sent sent;
  ReportOutbox outbox(sent.push());
  const Clock::time_point t0{};
  // Reports keep being shown, but none sent after a's: a is queued, not lost.
  SendOne(outbox, RunningReport("/registry/pods/default/old", "10.244.0.4"), t0);
  SendOne(outbox, RunningReport("/registry/pods/default/a", "10.244.0.5"), t0 + 1s);
  for (auto t = t0 + 1s; t < t0 + 8s; t += 500ms) {
    if (t == t0 + 5s) Show(outbox, RunningReport("/registry/pods/default/old", "10.244.0.4"), t);
    outbox.ResendOverdue(t);
  }
  CHECK(sent.reports.size() == 2);
  CHECK(outbox.awaiting() == 1);
}

TEST_CASE("report outbox: with nothing shown for 10 s, reports are sent again, backing off, then given up") {
  Sent sent;
  ReportOutbox outbox(sent.push());
  const Clock::time_point t0{};
  SendOne(outbox, RunningReport("/registry/pods/default/a", "10.244.0.5"), t0);
  outbox.ResendOverdue(t0 + 9500ms);
  CHECK(sent.reports.size() == 1);  // overdue, but nothing says it was lost yet
  outbox.ResendOverdue(t0 + 10s);
  CHECK(sent.reports.size() == 2);
  outbox.ResendOverdue(t0 + 15s);
  CHECK(sent.reports.size() == 2);  // the next one is 6 s after the last
  outbox.ResendOverdue(t0 + 16s);
  CHECK(sent.reports.size() == 3);
  for (auto t = t0 + 17s; t < t0 + 10min; t += 1s) outbox.ResendOverdue(t);
  CHECK(sent.reports.size() == 1 + ReportOutbox::kMaxResends);
  CHECK(outbox.awaiting() == 0);
}

TEST_CASE("report outbox: reports not taken are kept, merged, and go first next time") {
  Sent sent;
  ReportOutbox outbox(sent.push());
  sent.refuse = true;
  std::vector<model::Report> batch;
  batch.push_back(RunningReport("/registry/pods/default/a", ""));
  batch.push_back(RunningReport("/registry/pods/default/b", "10.244.0.6"));
  outbox.Send(std::move(batch), Clock::time_point{});
  CHECK(outbox.unsent() == 2);
  CHECK(sent.reports.empty());
  sent.refuse = false;
  batch.clear();
  batch.push_back(RunningReport("/registry/pods/default/a", "10.244.0.5"));
  outbox.Send(std::move(batch), Clock::time_point{});
  REQUIRE(sent.reports.size() == 2);
  CHECK(sent.reports[0].pod_key == "/registry/pods/default/a");
  CHECK(sent.reports[0].status.pod_ip == "10.244.0.5");  // merged: the last status stands
  CHECK(sent.reports[0].events.size() == 2);             // every event kept
  CHECK(sent.reports[1].pod_key == "/registry/pods/default/b");
  CHECK(outbox.unsent() == 0);
}

TEST_CASE("report outbox: several pods' reports to a frame, in order; a frame not taken keeps its reports and the rest") {
  Sent sent;
  ReportOutbox outbox(sent.push());
  const Clock::time_point t0{};
  const auto key = [](int i) { return "/registry/pods/default/p" + std::to_string(i); };
  std::vector<model::Report> batch;
  for (int i = 0; i < 150; ++i) batch.push_back(RunningReport(key(i), "10.244.0.5"));
  sent.take_frames = 2;
  outbox.Send(std::move(batch), t0);
  const size_t per = ReportOutbox::kMaxPerFrame;
  CHECK(sent.frames == std::vector<size_t>{per, per});
  CHECK(outbox.awaiting() == 2 * per);
  CHECK(outbox.unsent() == 150 - 2 * per);
  sent.take_frames.reset();
  outbox.Send({}, t0 + 1s);
  REQUIRE(sent.reports.size() == 150);
  CHECK(sent.frames.back() == 150 - 2 * per);
  for (int i = 0; i < 150; ++i) CHECK(sent.reports[static_cast<size_t>(i)].pod_key == key(i));
  CHECK(outbox.unsent() == 0);

  // Lost ones (nothing shown for 10 s) go again together, in the order sent.
  outbox.ResendOverdue(t0 + 11s);
  REQUIRE(sent.reports.size() == 300);
  CHECK(sent.frames.size() == 6);
  for (int i = 0; i < 150; ++i) {
    CHECK(sent.reports[150 + static_cast<size_t>(i)].pod_key == key(i));
    CHECK(sent.reports[150 + static_cast<size_t>(i)].events.empty());
  }
}

TEST_CASE("report outbox: a forgotten pod is not sent again") {
  Sent sent;
  ReportOutbox outbox(sent.push());
  SendOne(outbox, RunningReport("/registry/pods/default/a", "10.244.0.5"), Clock::time_point{});
  outbox.Forget("/registry/pods/default/a");
  outbox.ResendOverdue(Clock::time_point{} + 1h);
  CHECK(sent.reports.size() == 1);
}

}  // namespace
}  // namespace podflow::runtime

namespace podflow::runtime {
namespace {

TEST_CASE("report outbox: a pod is settled once nothing sent or unsent for it awaits") {
  Sent sent;
  ReportOutbox outbox(sent.push());
  const std::string a = "/registry/pods/default/a";
  CHECK(outbox.Settled(a));  // never reported
  sent.refuse = true;
  SendOne(outbox, RunningReport(a, "10.244.0.5"), Clock::time_point{});
  CHECK_FALSE(outbox.Settled(a));  // unsent
  sent.refuse = false;
  SendOne(outbox, RunningReport("/registry/pods/default/b", "10.244.0.6"), Clock::time_point{});
  REQUIRE(sent.reports.size() == 2);
  CHECK_FALSE(outbox.Settled(a));  // sent, not shown yet
  CHECK(outbox.Settled("/registry/pods/default/c"));
  Show(outbox, sent.reports[0], Clock::time_point{});
  CHECK(outbox.Settled(a));
  CHECK_FALSE(outbox.Settled("/registry/pods/default/b"));
}

}  // namespace
}  // namespace podflow::runtime
