// The names of podflow's stages: the one list the pipeline file, the stage
// registry and each stage's kName are checked against. The order is the
// order a process starts its stages in (persistence first: the others
// reach the log through it).
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

namespace podflow::pipeline {

inline constexpr std::array<std::string_view, 8> kStageNames = {
    "persistence", "admission", "scheduling", "binding", "runtime", "proxy", "status", "controllers"};

constexpr bool IsStageName(std::string_view name) {
  return std::find(kStageNames.begin(), kStageNames.end(), name) != kStageNames.end();
}

// The controllers of the controllers stage, each with a bus identity of its
// own (a key pair in the data dir, loaded by the process that runs the
// stage). The API authenticates a request such an identity sends without a
// token as the controller's service account,
// system:serviceaccount:kube-system:NAME, as kube-controller-manager runs
// each controller with its own credentials (taint eviction uses the node
// controller's, as there).
inline constexpr std::array<std::string_view, 8> kControllerIdentities = {
    "node-controller",           "replicaset-controller", "deployment-controller",         "daemon-set-controller",
    "generic-garbage-collector", "job-controller",        "ttl-after-finished-controller", "cronjob-controller"};

constexpr bool IsControllerIdentity(std::string_view name) {
  return std::find(kControllerIdentities.begin(), kControllerIdentities.end(), name) !=
         kControllerIdentities.end();
}

}  // namespace podflow::pipeline
