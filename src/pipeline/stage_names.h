// The names of podflow's stages: the one list the pipeline file, the stage
// registry and each stage's kName are checked against. The order is the
// order a process starts its stages in (persistence first: the others
// reach the log through it).
#pragma once

#include <algorithm>
#include <array>
#include <string_view>

namespace podflow::pipeline {

inline constexpr std::array<std::string_view, 7> kStageNames = {
    "persistence", "admission", "scheduling", "binding", "runtime", "proxy", "status"};

constexpr bool IsStageName(std::string_view name) {
  return std::find(kStageNames.begin(), kStageNames.end(), name) != kStageNames.end();
}

}  // namespace podflow::pipeline
