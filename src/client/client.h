// The API client: how every stage and tool reaches the event log that the
// persistence stage serves. The public header of src/client.
//
//   ApiClient      write (guarded transactions) and read (paged ranges) over
//                  the api channel;
//   RemoteWatcher  a watch over the watch channel (a bus stream with
//                  credits), with the outcomes of a local Watcher;
//   Informer       list, then watch from the listed revision; re-lists
//                  after a lost or compacted stream (level-triggered);
//   Update / UpdateBatch (update.h)  read -> change -> guarded write, retried
//                  on a failed guard.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "bus/bus.h"
#include "log/log.h"
#include "watch/watch.h"

namespace podflow::client {

// A write's outcome as the client sees it.
struct WriteResult {
  bool succeeded = false;
  Revision revision;
  size_t failed_op = 0;
  std::optional<KeyValue> current;  // !succeeded: the guarded key as it is now
};

inline constexpr std::chrono::milliseconds kDefaultTimeout{10'000};

// Write and read over the api channel. One thread at a time. Not copyable.
class ApiClient {
 public:
  // Speaks as `identity` (one of the context's, "" its default): the log
  // authorizes every write by it and records it as the writer.
  ApiClient(bus::Context& context, const std::string& api_endpoint, std::string identity = {});

  Result<WriteResult> Write(const std::vector<TxnOp>& ops, std::chrono::milliseconds timeout = kDefaultTimeout);
  Result<RangeResult> Read(const RangeRequest& request, std::chrono::milliseconds timeout = kDefaultTimeout);
  // The value at one key at the head, or nullopt when there is none.
  Result<std::optional<KeyValue>> Get(const std::string& key, std::chrono::milliseconds timeout = kDefaultTimeout);
  // Every kv under `prefix` at one revision, following continue tokens;
  // `page` kvs per read.
  Result<RangeResult> List(const std::string& prefix, int64_t page = 500,
                           std::chrono::milliseconds timeout = kDefaultTimeout);

  const std::string& endpoint() const { return rpc_.endpoint(); }

 private:
  bus::RpcClient rpc_;
};

struct RemoteWatchOptions {
  std::string key;
  bool prefix = false;
  Revision start_revision;       // 0: from the next revision
  bool prev_kv = false;
  std::string field_selector;    // pods only: "spec.nodeName=node-1"
  std::chrono::milliseconds progress_interval{1000};
  uint32_t credits = 256;        // batches in flight before the client must ask for more
};

// A watch over the watch channel; Next() says the same outcomes as a local
// Watcher. With a progress interval, a live server sends at least one frame
// per interval; a stream silent for kSilentIntervals of them (and at least
// kMinSilence) is taken as lost (the server died or restarted and forgot it)
// and Next() answers kError, after which the caller re-lists and watches
// again. One thread at a time. Not copyable.
class RemoteWatcher {
 public:
  static constexpr int kSilentIntervals = 3;
  static constexpr std::chrono::milliseconds kMinSilence{3000};

  static Result<std::unique_ptr<RemoteWatcher>> Open(bus::Context& context, const std::string& watch_endpoint,
                                                     const RemoteWatchOptions& options);
  WatchBatch Next(std::chrono::milliseconds timeout);

 private:
  RemoteWatcher(std::unique_ptr<bus::StreamClient> stream, std::chrono::milliseconds silence_limit);

  std::unique_ptr<bus::StreamClient> stream_;
  const std::chrono::milliseconds silence_limit_;  // 0: never taken as lost
  std::chrono::steady_clock::time_point last_frame_;
};

// Informer: list, then watch. It delivers the state under a prefix as
// upserts and removals, resumes from the revision it has seen, and re-lists
// when its watch is compacted away or broken, so a stage converges after any
// crash or restart. Use from one thread. Not copyable.
class Informer {
 public:
  struct Handlers {
    std::function<void(const KeyValue& kv)> upsert;     // created or changed
    std::function<void(const std::string& key)> remove;  // deleted (or left the selection)
  };

  // `field_selector` narrows the watch (pods only); the list applies
  // `list_filter` to the same effect, since reads take no selector.
  Informer(bus::Context& context, std::string api_endpoint, std::string watch_endpoint, std::string prefix,
           std::string field_selector = "", std::function<bool(const KeyValue&)> list_filter = nullptr);
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Lists (paged) and delivers everything as upserts — and removals for
  // keys seen before that are gone — then opens the watch after the list's
  // revision. Unavailable when persistence does not answer.
  Status Sync(const Handlers& handlers);

  // Delivers what the watch has, waiting up to `timeout` for the first
  // batch. Re-syncs by itself after a compacted or broken watch.
  Status Poll(std::chrono::milliseconds timeout, const Handlers& handlers);

  // Everything under the prefix up to revision() has been delivered; the
  // last list was at list_revision() (what came after it came by watch).
  Revision revision() const { return revision_; }
  Revision list_revision() const { return list_revision_; }
  const std::string& prefix() const { return prefix_; }

 private:
  bus::Context& context_;
  const std::string watch_endpoint_;
  const std::string prefix_;
  const std::string field_selector_;
  std::function<bool(const KeyValue&)> list_filter_;
  ApiClient client_;
  std::unique_ptr<RemoteWatcher> watcher_;
  std::set<std::string> known_;  // keys currently delivered as present
  Revision revision_;
  Revision list_revision_;
};

}  // namespace podflow::client
