#include "scheduler/scheduler.h"

#include <catch2/catch.hpp>

namespace podflow::scheduler {
namespace {

using Clock = SchedulingQueue::Clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

const Clock::time_point t0 = Clock::time_point(seconds(1000));

std::vector<std::string> Drain(SchedulingQueue& q, Clock::time_point now) {
  std::vector<std::string> out;
  while (auto key = q.Pop(now)) out.push_back(*key);
  return out;
}

TEST_CASE("active pods come out by priority, then creation time, then arrival", "[scheduling][queue]") {
  SchedulingQueue q;
  q.Activate({"low-old", 0, "2025-01-01T00:00:00Z"}, t0);
  q.Activate({"high", 1000, "2025-01-01T00:00:09Z"}, t0);
  q.Activate({"low-new", 0, "2025-01-01T00:00:05Z"}, t0);
  q.Activate({"low-old-2", 0, "2025-01-01T00:00:00Z"}, t0);
  q.Activate({"negative", -5, "2024-01-01T00:00:00Z"}, t0);
  CHECK(Drain(q, t0) == std::vector<std::string>{"high", "low-old", "low-old-2", "low-new", "negative"});
}

TEST_CASE("an unschedulable pod waits for a cluster event, then for its backoff", "[scheduling][queue]") {
  SchedulingQueue q;
  q.Activate({"p", 0, ""}, t0);
  REQUIRE(q.Pop(t0) == "p");
  q.MarkUnschedulable("p", t0);
  CHECK(q.unschedulable_size() == 1);
  // No event: it stays out, however long the backoff has been over.
  CHECK_FALSE(q.Pop(t0 + seconds(30)).has_value());
  // An event within the 1 s backoff: it waits in backoff until the second is up.
  q.MoveAllUnschedulable(t0 + milliseconds(400));
  CHECK(q.backoff_size() == 1);
  CHECK_FALSE(q.Pop(t0 + milliseconds(999)).has_value());
  CHECK(q.Pop(t0 + milliseconds(1000)) == "p");
}

TEST_CASE("an event in flight during a failed attempt tries the pod again at once", "[scheduling][queue]") {
  SchedulingQueue q;
  q.Activate({"p", 0, ""}, t0);
  REQUIRE(q.Pop(t0) == "p");
  // The attempt's view held revision 10; it failed on node resources.
  q.MarkUnschedulable("p", t0, {"NodeResourcesFit"}, 10);
  SECTION("an older event that may help was in flight: active, no backoff") {
    q.MoveOnEvent(SchedulingQueue::ClusterEvent::kNodeAdd, t0, 7);
    CHECK(q.active_size() == 1);
    CHECK(q.Pop(t0) == "p");
  }
  SECTION("an event of the very revision the attempt saw (one transaction) was in flight too") {
    q.MoveOnEvent(SchedulingQueue::ClusterEvent::kNodeAdd, t0, 10);
    CHECK(q.Pop(t0) == "p");
  }
  SECTION("a second failed attempt sees further: the same event is no longer in flight") {
    q.MoveOnEvent(SchedulingQueue::ClusterEvent::kNodeAdd, t0, 7);
    REQUIRE(q.Pop(t0) == "p");
    q.MarkUnschedulable("p", t0, {"NodeResourcesFit"}, 12);
    q.MoveOnEvent(SchedulingQueue::ClusterEvent::kNodeUpdate, t0, 13);
    CHECK_FALSE(q.Pop(t0).has_value());
  }
  SECTION("a newer event came after the attempt: the backoff is kept") {
    q.MoveOnEvent(SchedulingQueue::ClusterEvent::kNodeAdd, t0, 11);
    CHECK(q.backoff_size() == 1);
    CHECK_FALSE(q.Pop(t0).has_value());
    CHECK(q.Pop(t0 + seconds(1)) == "p");
  }
  SECTION("an event of unknown revision keeps the backoff") {
    q.MoveOnEvent(SchedulingQueue::ClusterEvent::kNodeAdd, t0);
    CHECK_FALSE(q.Pop(t0).has_value());
  }
  SECTION("an in-flight pod placement helps a pod waiting on affinity at once") {
    q.Activate({"a", 0, ""}, t0);
    REQUIRE(q.Pop(t0) == "a");
    q.MarkUnschedulable("a", t0, {"InterPodAffinity"}, 10);
    q.MoveOnEvent(SchedulingQueue::ClusterEvent::kAssignedPodAdd, t0, 9);
    CHECK(q.Pop(t0) == "a");
    CHECK(q.unschedulable_size() == 1);  // "p" waits for room, not for a placement
  }
  SECTION("an in-flight event that cannot help leaves it unschedulable") {
    q.MoveOnEvent(SchedulingQueue::ClusterEvent::kServiceChange, t0, 7);
    CHECK(q.unschedulable_size() == 1);
    CHECK_FALSE(q.Pop(t0 + seconds(30)).has_value());
  }
}

TEST_CASE("backoff doubles per failed attempt from 1 s up to 10 s", "[scheduling][queue]") {
  SchedulingQueue q;
  q.Activate({"p", 0, ""}, t0);
  Clock::time_point now = t0;
  for (int64_t expected_ms : {1000, 2000, 4000, 8000, 10000, 10000}) {
    REQUIRE(q.Pop(now) == "p");
    q.MarkUnschedulable("p", now);
    q.MoveAllUnschedulable(now);
    INFO("attempt " << q.attempts("p"));
    CHECK_FALSE(q.Pop(now + milliseconds(expected_ms - 1)).has_value());
    now += milliseconds(expected_ms);
  }
  CHECK(q.Pop(now) == "p");
}

TEST_CASE("unschedulable pods are flushed back after 5 minutes without an event", "[scheduling][queue]") {
  SchedulingQueue q;
  q.Activate({"p", 0, ""}, t0);
  REQUIRE(q.Pop(t0) == "p");
  q.MarkUnschedulable("p", t0);
  CHECK_FALSE(q.Pop(t0 + std::chrono::minutes(5) - milliseconds(1)).has_value());
  CHECK(q.Pop(t0 + std::chrono::minutes(5)) == "p");
}

TEST_CASE("a changed pod is re-activated once; removal forgets its attempts", "[scheduling][queue]") {
  SchedulingQueue q;
  q.Activate({"p", 0, ""}, t0);
  q.Activate({"p", 7, ""}, t0);  // updated while queued: one entry, new priority
  q.Activate({"q", 5, ""}, t0);
  CHECK(Drain(q, t0) == std::vector<std::string>{"p", "q"});
  q.MarkUnschedulable("p", t0);
  q.Activate({"p", 7, ""}, t0 + seconds(5));  // spec changed after its backoff ended
  CHECK(q.Pop(t0 + seconds(5)) == "p");
  q.MarkUnschedulable("p", t0 + seconds(5));
  CHECK(q.attempts("p") == 2);
  q.Remove("p");
  CHECK_FALSE(q.Contains("p"));
  CHECK(q.attempts("p") == 0);
  q.MoveAllUnschedulable(t0 + seconds(60));
  CHECK_FALSE(q.Pop(t0 + seconds(60)).has_value());
}

TEST_CASE("a cluster event moves only the pods it may help", "[scheduling][queue]") {
  using Event = SchedulingQueue::ClusterEvent;
  SchedulingQueue q;
  for (const char* key : {"cpu", "affinity", "volume", "unknown"}) q.Activate({key, 0, "2025-01-01T00:00:00Z"}, t0);
  for (int i = 0; i < 4; ++i) {
    auto key = q.Pop(t0);
    REQUIRE(key.has_value());
    std::vector<std::string> by;
    if (*key == "cpu") by = {"NodeResourcesFit"};
    if (*key == "affinity") by = {"InterPodAffinity", "NodeResourcesFit"};
    if (*key == "volume") by = {"VolumeBinding"};
    q.MarkUnschedulable(*key, t0, by);
  }
  REQUIRE(q.unschedulable_size() == 4);
  const auto later = t0 + seconds(2);  // every backoff is over
  // Another pod bound somewhere frees nothing: only affinity may now hold,
  // and a pod whose rejecting plugins are unknown always moves.
  q.MoveOnEvent(Event::kAssignedPodAdd, later);
  CHECK(Drain(q, later) == std::vector<std::string>{"affinity", "unknown"});
  CHECK(q.unschedulable_size() == 2);
  q.MoveOnEvent(Event::kServiceChange, later);
  CHECK(q.unschedulable_size() == 2);
  q.MoveOnEvent(Event::kStorageChange, later);
  CHECK(Drain(q, later) == std::vector<std::string>{"volume"});
  // A new node may help anything.
  q.MoveOnEvent(Event::kNodeAdd, later);
  CHECK(Drain(q, later) == std::vector<std::string>{"cpu"});
  CHECK(q.unschedulable_size() == 0);
}

}  // namespace
}  // namespace podflow::scheduler
