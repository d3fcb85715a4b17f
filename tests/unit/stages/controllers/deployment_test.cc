#include <catch2/catch.hpp>

#include "model/objects.h"
#include "stages/controllers/deployment.h"

namespace podflow::controllers {
namespace {

const SimTime kNow = FromUnixMillis(1'767'000'000'000);

std::unique_ptr<api::IntOrStringT> IntOrString(std::string text) {
  auto v = std::make_unique<api::IntOrStringT>();
  if (!text.empty() && text.back() == '%') {
    v->type = api::IntOrStringType::String;
    v->str_val = std::move(text);
  } else {
    v->type = api::IntOrStringType::Int;
    v->int_val = std::stoi(text);
  }
  return v;
}

// A Deployment's spec, packed: `replicas`, RollingUpdate with the two
// values (or Recreate when `surge` is empty).
struct PackedSpec {
  std::string bytes;
  const api::DeploymentSpec& spec() const { return *flatbuffers::GetRoot<api::Deployment>(bytes.data())->spec(); }
};
PackedSpec Spec(int32_t replicas, std::string surge, std::string unavailable) {
  api::DeploymentT d;
  d.spec = std::make_unique<api::DeploymentSpecT>();
  d.spec->replicas = replicas;
  d.spec->strategy = std::make_unique<api::DeploymentStrategyT>();
  if (surge.empty()) {
    d.spec->strategy->type = api::DeploymentStrategyType::Recreate;
  } else {
    d.spec->strategy->type = api::DeploymentStrategyType::RollingUpdate;
    d.spec->strategy->rolling_update = std::make_unique<api::RollingUpdateDeploymentT>();
    d.spec->strategy->rolling_update->max_surge = IntOrString(surge);
    d.spec->strategy->rolling_update->max_unavailable = IntOrString(unavailable);
  }
  return {model::Pack(d)};
}

SetState Set(std::string name, int32_t replicas, int32_t available, int64_t created_s) {
  SetState s;
  s.name = std::move(name);
  s.replicas = replicas;
  s.current = replicas;
  s.ready = available;
  s.available = available;
  s.created = kNow - std::chrono::seconds(created_s);
  return s;
}

TEST_CASE("the pod-template-hash") {
  const std::string a = PodTemplateHash(R"({"spec":{"containers":[{"image":"nginx:1.14.2"}]}})", std::nullopt);
  const std::string b = PodTemplateHash(R"({"spec":{"containers":[{"image":"nginx:1.16.1"}]}})", std::nullopt);
  CHECK(a == PodTemplateHash(R"({"spec":{"containers":[{"image":"nginx:1.14.2"}]}})", std::nullopt));
  CHECK(a != b);
  // A collision count gives another name for the same template.
  CHECK(a != PodTemplateHash(R"({"spec":{"containers":[{"image":"nginx:1.14.2"}]}})", 1));
  CHECK(PodTemplateHash("x", 1) != PodTemplateHash("x", 2));
  // Decimal digits spelled as Kubernetes spells them: no vowels, no 0, 1, 3.
  for (const std::string& hash : {a, b}) {
    CHECK_FALSE(hash.empty());
    CHECK(hash.size() <= 10);
    CHECK(hash.find_first_not_of("456789bcdf") == std::string::npos);
  }
  // FNV-1a of "" is 2166136261: its digits spelled.
  CHECK(PodTemplateHash("", std::nullopt) == "65bb57b6b5");
}

TEST_CASE("maxSurge and maxUnavailable as numbers") {
  const std::string packed = [&] {
    api::DeploymentT d;
    d.spec = std::make_unique<api::DeploymentSpecT>();
    d.spec->strategy = std::make_unique<api::DeploymentStrategyT>();
    d.spec->strategy->rolling_update = std::make_unique<api::RollingUpdateDeploymentT>();
    d.spec->strategy->rolling_update->max_surge = IntOrString("25%");
    d.spec->strategy->rolling_update->max_unavailable = IntOrString("2");
    return model::Pack(d);
  }();
  const api::RollingUpdateDeployment* ru =
      flatbuffers::GetRoot<api::Deployment>(packed.data())->spec()->strategy()->rolling_update();
  CHECK(ScaledValue(ru->max_surge(), 10, true) == 3);
  CHECK(ScaledValue(ru->max_surge(), 10, false) == 2);
  CHECK(ScaledValue(ru->max_surge(), 0, true) == 0);
  CHECK(ScaledValue(ru->max_unavailable(), 10, true) == 2);
  CHECK(ScaledValue(nullptr, 10, true) == 0);

  // The docs' defaults, 25% each: surge rounds up, unavailable down.
  CHECK(ResolveFenceposts(Spec(3, "25%", "25%").spec()) == Fenceposts{1, 0});
  CHECK(ResolveFenceposts(Spec(10, "25%", "25%").spec()) == Fenceposts{3, 2});
  // Both 0 cannot make progress: one may be unavailable.
  CHECK(ResolveFenceposts(Spec(3, "0", "0%").spec()) == Fenceposts{0, 1});
  // Never more unavailable than replicas; none for 0 replicas or Recreate.
  CHECK(ResolveFenceposts(Spec(2, "0", "5").spec()) == Fenceposts{0, 2});
  CHECK(ResolveFenceposts(Spec(0, "25%", "25%").spec()) == Fenceposts{0, 0});
  CHECK(ResolveFenceposts(Spec(5, "", "").spec()) == Fenceposts{0, 0});
}

TEST_CASE("a rolling update: the new ReplicaSet up within maxSurge, the old ones down within maxUnavailable") {
  const Fenceposts f{1, 0};  // 3 replicas at 25% / 25%
  // The docs' nginx-deployment from 1.14.2 to 1.16.1: one new pod first.
  CHECK(RollingNewReplicas(3, f, 3, 0) == 1);
  CHECK(RollingNewReplicas(3, f, 4, 1) == 1);   // 4 asked of all: no more
  CHECK(RollingNewReplicas(3, f, 3, 1) == 2);   // an old one went
  CHECK(RollingNewReplicas(3, f, 3, 3) == 3);   // never past desired
  CHECK(RollingNewReplicas(3, {5, 0}, 3, 0) == 3);

  SetState old = Set("old", 3, 3, 600);
  SetState fresh = Set("new", 1, 0, 10);
  // The new pod not available yet: no old one may go.
  CHECK(ScaleDownOld(3, f, &fresh, {&old}) == 0);
  CHECK(old.replicas == 3);
  fresh.available = 1;
  CHECK(ScaleDownOld(3, f, &fresh, {&old}) == 1);
  CHECK(old.replicas == 2);

  // Old pods not available go first, without counting against availability.
  SetState sick = Set("sick", 3, 1, 600);
  SetState full = Set("full", 3, 3, 10);
  CHECK(ScaleDownOld(3, f, &full, {&sick}) == 3);
  CHECK(sick.replicas == 0);

  // The oldest ReplicaSet first.
  SetState older = Set("a-older", 2, 2, 900);
  SetState newer = Set("b-newer", 2, 2, 300);
  SetState latest = Set("c-latest", 2, 2, 10);
  CHECK(ScaleDownOld(4, {0, 1}, &latest, {&newer, &older}) == 3);
  CHECK(older.replicas == 0);
  CHECK(newer.replicas == 1);
}

TEST_CASE("a Deployment resized mid-rollout spreads the difference in proportion") {
  // The docs' example: 10 replicas, maxSurge 3, a rollout stuck with 8 old
  // and 5 new pods; scaled to 15, 3 go to the old ReplicaSet and 2 to the new.
  SetState old = Set("old", 8, 8, 600);
  SetState stuck = Set("new", 5, 0, 10);
  old.max_replicas = stuck.max_replicas = 13;
  ScaleProportionally(15, {3, 2}, 13, {&stuck, &old});
  CHECK(old.replicas == 11);
  CHECK(stuck.replicas == 7);
  // Back down to 10: in proportion again, what rounding leaves to the largest.
  old.max_replicas = stuck.max_replicas = 18;
  ScaleProportionally(10, {3, 2}, 18, {&stuck, &old});
  CHECK(old.replicas + stuck.replicas == 13);
  CHECK(old.replicas == 8);
  // To 0: every one goes.
  ScaleProportionally(0, {0, 0}, 13, {&stuck, &old});
  CHECK(old.replicas == 0);
  CHECK(stuck.replicas == 0);
}

TEST_CASE("a Deployment's counts, completion and progress") {
  SetState old = Set("old", 1, 1, 600);
  old.current = 2;  // one still going
  SetState fresh = Set("new", 3, 2, 10);
  fresh.ready = 3;
  const DeploymentCounts counts = CountDeployment({&old, &fresh}, &fresh);
  CHECK(counts == DeploymentCounts{5, 3, 4, 3, 1});
  CHECK_FALSE(DeploymentComplete(3, counts));
  CHECK(DeploymentComplete(3, DeploymentCounts{3, 3, 3, 3, 0}));
  CHECK_FALSE(DeploymentComplete(3, DeploymentCounts{4, 3, 3, 3, 0}));
  CHECK(CountDeployment({&old}, nullptr).updated == 0);

  const DeploymentCounts before{4, 1, 3, 3, 1};
  CHECK_FALSE(DeploymentProgressed(before, before));
  CHECK(DeploymentProgressed(before, {4, 2, 3, 3, 1}));  // more updated
  CHECK(DeploymentProgressed(before, {3, 1, 3, 3, 1}));  // fewer old
  CHECK(DeploymentProgressed(before, {4, 1, 4, 3, 1}));  // more ready
  CHECK(DeploymentProgressed(before, {4, 1, 3, 4, 1}));  // more available
  CHECK_FALSE(DeploymentProgressed(before, {5, 1, 3, 3, 1}));  // more old, nothing more up
}

TEST_CASE("Deployment conditions change as Kubernetes changes them") {
  api::DeploymentStatusT status;
  const SimTime later = kNow + std::chrono::seconds(30);
  CHECK(SetDeploymentCondition(status, DeploymentCondition("Progressing", api::ConditionStatus::True,
                                                           "NewReplicaSetCreated", "Created new replica set \"a\"", kNow)));
  CHECK(SetDeploymentCondition(status, DeploymentCondition("Available", api::ConditionStatus::False,
                                                           "MinimumReplicasUnavailable", "m", kNow)));
  // The same status and reason: nothing changes, not even the message.
  CHECK_FALSE(SetDeploymentCondition(status, DeploymentCondition("Available", api::ConditionStatus::False,
                                                                 "MinimumReplicasUnavailable", "other", later)));
  CHECK(status.conditions[1]->message == "m");
  // Another reason, the same status: the transition time stays; it goes last.
  CHECK(SetDeploymentCondition(status, DeploymentCondition("Progressing", api::ConditionStatus::True,
                                                           "NewReplicaSetAvailable", "done", later)));
  REQUIRE(status.conditions.size() == 2);
  CHECK(status.conditions[1]->type == "Progressing");
  CHECK(status.conditions[1]->last_transition_time == FormatRfc3339(kNow));
  CHECK(status.conditions[1]->last_update_time == FormatRfc3339(later));
  // Another status: both times are now.
  CHECK(SetDeploymentCondition(status, DeploymentCondition("Available", api::ConditionStatus::True,
                                                           "MinimumReplicasAvailable", "ok", later)));
  CHECK(status.conditions[1]->type == "Available");
  CHECK(status.conditions[1]->last_transition_time == FormatRfc3339(later));
}

}  // namespace
}  // namespace podflow::controllers
