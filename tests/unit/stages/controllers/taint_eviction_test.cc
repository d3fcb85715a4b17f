#include <catch2/catch.hpp>

#include "stages/controllers/taint_eviction.h"

namespace podflow::controllers {
namespace {

using TE = api::TaintEffect;
using TO = api::TolerationOperator;
const SimTime kT0 = FromUnixMillis(1'767'000'000'000);

const model::Taint kUnreachable{"node.kubernetes.io/unreachable", "", TE::NoExecute, ""};
const model::Taint kUnreachableNoSchedule{"node.kubernetes.io/unreachable", "", TE::NoSchedule, ""};

model::Toleration Tolerates(std::string key, std::optional<int64_t> seconds, TE effect = TE::NoExecute) {
  return model::Toleration{std::move(key), TO::Exists, "", effect, seconds};
}

TEST_CASE("when a pod is evicted from a node with NoExecute taints") {
  // No NoExecute taint: never.
  CHECK_FALSE(EvictionDelay({}, {}).has_value());
  CHECK_FALSE(EvictionDelay({kUnreachableNoSchedule}, {}).has_value());
  // Not tolerated: at once.
  CHECK(EvictionDelay({kUnreachable}, {}) == SimDuration(0));
  CHECK(EvictionDelay({kUnreachable}, {Tolerates("other", 300)}) == SimDuration(0));
  // DefaultTolerationSeconds' 300 s.
  CHECK(EvictionDelay({kUnreachable}, {Tolerates("node.kubernetes.io/unreachable", 300)}) == SimDuration(300'000));
  // Per taint, the first toleration that matches it counts (a later one,
  // shorter or forever, does not).
  CHECK(EvictionDelay({kUnreachable}, {Tolerates("node.kubernetes.io/unreachable", 300), Tolerates("", 60),
                                       Tolerates("node.kubernetes.io/unreachable", std::nullopt)}) ==
        SimDuration(300'000));
  CHECK(EvictionDelay({kUnreachable}, {Tolerates("other", 5), Tolerates("", 60),
                                       Tolerates("node.kubernetes.io/unreachable", 300)}) == SimDuration(60'000));
  CHECK_FALSE(EvictionDelay({kUnreachable}, {Tolerates("node.kubernetes.io/unreachable", std::nullopt),
                                             Tolerates("", 60)})
                  .has_value());
  // Over several taints, the smallest of the counted ones.
  const model::Taint not_ready_tolerated{"node.kubernetes.io/not-ready", "", TE::NoExecute, ""};
  CHECK(EvictionDelay({kUnreachable, not_ready_tolerated},
                      {Tolerates("node.kubernetes.io/unreachable", 300), Tolerates("node.kubernetes.io/not-ready", 30)}) ==
        SimDuration(30'000));
  // Tolerated forever.
  CHECK_FALSE(EvictionDelay({kUnreachable}, {Tolerates("node.kubernetes.io/unreachable", std::nullopt)}).has_value());
  // A negative tolerationSeconds evicts at once.
  CHECK(EvictionDelay({kUnreachable}, {Tolerates("node.kubernetes.io/unreachable", -5)}) == SimDuration(0));
  // A second NoExecute taint not tolerated: at once, whatever the first allows.
  const model::Taint not_ready{"node.kubernetes.io/not-ready", "", TE::NoExecute, ""};
  CHECK(EvictionDelay({kUnreachable, not_ready}, {Tolerates("node.kubernetes.io/unreachable", 300)}) ==
        SimDuration(0));
  // A toleration of the NoSchedule effect only does not tolerate NoExecute.
  CHECK(EvictionDelay({kUnreachable}, {Tolerates("node.kubernetes.io/unreachable", std::nullopt, TE::NoSchedule)}) ==
        SimDuration(0));
}

TEST_CASE("scheduled evictions come due, move only earlier, and are cancelled") {
  TaintEvictions evictions;
  CHECK(evictions.Update("p1", std::nullopt, kT0) == TaintEvictions::Change::kNone);
  CHECK(evictions.Update("p1", SimDuration(300'000), kT0) == TaintEvictions::Change::kScheduled);
  CHECK(evictions.NextDue() == kT0 + SimDuration(300'000));
  // Decided again later with the same tolerations: counted from the first decision.
  CHECK(evictions.Update("p1", SimDuration(300'000), kT0 + SimDuration(100'000)) == TaintEvictions::Change::kNone);
  CHECK(evictions.NextDue() == kT0 + SimDuration(300'000));
  // A shorter toleration brings it forward; a longer one does not push it back.
  evictions.Update("p1", SimDuration(60'000), kT0 + SimDuration(100'000));
  CHECK(evictions.NextDue() == kT0 + SimDuration(60'000));
  evictions.Update("p1", SimDuration(900'000), kT0 + SimDuration(100'000));
  CHECK(evictions.NextDue() == kT0 + SimDuration(60'000));

  CHECK(evictions.Update("p2", SimDuration(0), kT0) == TaintEvictions::Change::kScheduled);
  CHECK(evictions.Due(kT0) == std::vector<std::string>{"p2"});
  CHECK(evictions.Due(kT0 + SimDuration(59'999)).empty());
  CHECK(evictions.Due(kT0 + SimDuration(60'000)) == std::vector<std::string>{"p1"});
  CHECK_FALSE(evictions.NextDue().has_value());

  // The taint went away before the time: cancelled (the event), once.
  evictions.Update("p3", SimDuration(300'000), kT0);
  CHECK(evictions.Scheduled("p3"));
  CHECK(evictions.Update("p3", std::nullopt, kT0 + SimDuration(1'000)) == TaintEvictions::Change::kCancelled);
  CHECK(evictions.Update("p3", std::nullopt, kT0 + SimDuration(2'000)) == TaintEvictions::Change::kNone);
  // A deleted pod is dropped without a cancellation.
  evictions.Update("p4", SimDuration(300'000), kT0);
  evictions.Forget("p4");
  CHECK_FALSE(evictions.Scheduled("p4"));
  CHECK(evictions.Due(kT0 + SimDuration(3'600'000)).empty());
}

}  // namespace
}  // namespace podflow::controllers
