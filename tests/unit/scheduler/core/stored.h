// Objects as the informers deliver them: a one-document manifest decoded
// into the stored bytes of its kind, at a revision.
#pragma once

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "model/codec.h"
#include "model/objects.h"
#include "scheduler/scheduler.h"

namespace podflow::scheduler::testing {

inline const SchedulerCore::Clock::time_point t0 =
    SchedulerCore::Clock::time_point(std::chrono::seconds(1000));

inline StoredObject Stored(const std::string& yaml, int64_t revision) {
  auto docs = model::DecodeManifests(yaml);
  REQUIRE(docs.ok());
  REQUIRE(docs->size() == 1);
  const model::Decoded& d = (*docs)[0];
  INFO(d.status.ToString());
  REQUIRE(d.status.ok());
  return StoredObject{model::ObjectKey(*d.object.kind, d.object.namespace_, d.object.name),
                      d.object.bytes, Revision(revision)};
}

}  // namespace podflow::scheduler::testing
