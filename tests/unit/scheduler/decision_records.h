// Decisions to record, shared by the tests of the record (scheduler), of
// --why (replay) and of describe's Scheduling section (cli): a small
// profile, a three-node cluster and the context the stage would record.
#pragma once

#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "builders.h"
#include "scheduler/scheduler.h"

namespace podflow::scheduler::testing {

// A fixed profile (the default one grows as plugins are added): the
// resource filters and the two resource scores, weight 1 each.
inline ProfileConfig SmallConfig() {
  ProfileConfig config;
  config.filter = {"NodeUnschedulable", "NodeResourcesFit"};
  config.score = {{"NodeResourcesFit", 1}, {"NodeResourcesBalancedAllocation", 1}};
  return config;
}

inline const Profile& SmallProfile() {
  static auto registry = plugins::NewInTreeRegistry();
  static Profile profile = [] {
    auto p = Profile::Build(*registry, SmallConfig());
    REQUIRE(p.ok());
    return std::move(p).value();
  }();
  return profile;
}

inline DecisionContext RecordContext() {
  DecisionContext c;
  c.pod_key = "/registry/pods/team-a/web";
  c.pod_uid = "uid-1";
  c.pod_mod_revision = 7;
  c.profile = "default-scheduler";
  c.start_node_index = 1;
  c.sources = {{"/registry/minions/", 3, 9}, {"/registry/pods/", 3, 12}};
  c.run = 42;
  c.seq = 5;
  c.assumed_pods = 2;
  c.decided_at_ms = 1000;
  return c;
}

// Nodes a (half full), b (empty), c (too small for the pod).
inline Snapshot SmallCluster() {
  Snapshot snap;
  REQUIRE(snap.UpsertNode(MakeNode().Name("a").Cpu("4").Memory("8Gi").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("b").Cpu("4").Memory("8Gi").Info()).ok());
  REQUIRE(snap.UpsertNode(MakeNode().Name("c").Cpu("1").Memory("8Gi").Info()).ok());
  PodInfo busy = MakePod().Name("busy").Uid("busy").Cpu("2").Memory("4Gi").Info();
  busy.node_name = "a";
  REQUIRE(snap.AddPod(std::move(busy)).ok());
  return snap;
}

// The stored record of pod "web" (2 cpu, 1Gi) scheduled on SmallCluster
// (it goes to node b) by SmallProfile, in RecordContext.
inline std::string WebRecord() {
  Snapshot snap = SmallCluster();
  auto d = Schedule(SmallProfile(), MakePod().Name("web").Cpu("2").Memory("1Gi").Info(), snap, {1});
  REQUIRE(d.ok());
  return EncodeDecisionRecord(*d, RecordContext());
}

}  // namespace podflow::scheduler::testing
