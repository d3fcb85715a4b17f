// Shared by the cli tests: objects from YAML, and a fixed "now".
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli/human_time.h"
#include "model/codec.h"

namespace podflow::cli::testing {

// 2025-01-14T12:00:00Z: every test's "now".
inline TimePoint Now() { return *ParseRfc3339("2025-01-14T12:00:00Z"); }

// The FlatBuffers of every document of `yaml`; each must be accepted.
inline std::vector<std::string> Objects(const std::string& yaml) {
  auto docs = model::DecodeManifests(yaml);
  REQUIRE(docs.ok());
  std::vector<std::string> out;
  for (const model::Decoded& d : *docs) {
    INFO(d.status.ToString());
    REQUIRE(d.status.ok());
    out.push_back(d.object.bytes);
  }
  return out;
}

inline std::string One(const std::string& yaml) {
  std::vector<std::string> objects = Objects(yaml);
  REQUIRE(objects.size() == 1);
  return objects[0];
}

}  // namespace podflow::cli::testing
