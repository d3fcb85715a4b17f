// The event-log fixture every suite that opens a log shares (log, watch,
// replay, client, persistence): a temp data dir, a log opened with test
// options, commits that must succeed, a wall clock the test moves.
#pragma once

#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "log/log.h"
#include "temp_dir.h"

namespace podflow::testing {

// A wall clock tests move by hand.
struct FakeWallClock {
  std::atomic<int64_t> now_ms{1'700'000'000'000};
  std::function<int64_t()> Fn() {
    return [this] { return now_ms.load(); };
  }
};

// Test options: no fsync (tests that check durability turn it back on), a
// fast TTL poll.
inline LogOptions TestOptions(const std::string& dir) {
  LogOptions o;
  o.dir = dir;
  o.sync = false;
  o.expiry_poll_interval = std::chrono::milliseconds(2);
  return o;
}

inline std::unique_ptr<EventLog> MustOpen(const LogOptions& options) {
  auto log = OpenLog(options);
  INFO(log.status().ToString());
  REQUIRE(log.ok());
  return std::move(*log);
}

// Commits a txn that must succeed; returns its revision.
inline Revision MustCommit(EventLog& log, std::vector<TxnOp> ops) {
  auto r = log.Txn(std::move(ops));
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  REQUIRE(r->succeeded);
  return r->revision;
}

inline Revision MustPut(EventLog& log, const std::string& key, const std::string& value) {
  return MustCommit(log, {PutOp{key, value}});
}

}  // namespace podflow::testing
