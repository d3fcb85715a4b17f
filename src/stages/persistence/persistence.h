// The persistence stage: the event log's only writer, serving the other
// stages over the bus (design §1.2, §3).
//  - api channel (request/reply): WriteRequest -> Txn, ReadRequest -> Range;
//  - watch channel (a stream with credits): WatchCreate starts a watch from a
//    revision with an optional field selector; the server sends one
//    WatchResponse per revision batch while the client has credits, and the
//    client grants more with WatchCredit. A slow client therefore never
//    blocks the log: its watcher simply stops reading until credits come.
// The client side (PersistenceClient, RemoteWatcher) is what every other
// stage uses; RemoteWatcher looks like a local Watcher.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "bus/bus.h"
#include "log/log.h"
#include "watch/watch.h"

namespace podflow::persistence {

struct ServerOptions {
  std::string api_endpoint;    // request/reply: write and read
  std::string watch_endpoint;  // watch streams
  int api_workers = 16;        // concurrent transactions (they share group commits)
};

// Serves `log` on the two channels. The log must outlive the server.
// Not copyable; Stop() or the destructor joins every thread.
class Server {
 public:
  Server(zmq::context_t& context, EventLog* log, ServerOptions options);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  Status Start();
  void Stop();

 private:
  class WatchService;

  zmq::context_t& context_;
  EventLog* const log_;
  const ServerOptions options_;
  std::unique_ptr<bus::RpcServer> api_;
  std::unique_ptr<WatchService> watch_;
};

// A write's outcome as the client sees it.
struct WriteResult {
  bool succeeded = false;
  Revision revision;
  size_t failed_op = 0;
  std::optional<KeyValue> current;  // !succeeded: the guarded key as it is now
};

// Write and read over the api channel. One thread at a time. Not copyable.
class Client {
 public:
  Client(zmq::context_t& context, const std::string& api_endpoint, std::string writer);

  // `writer` is recorded with the transaction (which stage wrote it).
  Result<WriteResult> Write(const std::vector<TxnOp>& ops,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10));
  Result<RangeResult> Read(const RangeRequest& request,
                           std::chrono::milliseconds timeout = std::chrono::seconds(10));
  // Every kv under `prefix` at one revision, following continue tokens.
  Result<RangeResult> List(const std::string& prefix, int64_t page = 500);

 private:
  bus::RpcClient rpc_;
  const std::string writer_;
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
// Watcher. One thread at a time. Not copyable.
class RemoteWatcher {
 public:
  static Result<std::unique_ptr<RemoteWatcher>> Open(zmq::context_t& context,
                                                     const std::string& watch_endpoint,
                                                     RemoteWatchOptions options);
  RemoteWatcher(const RemoteWatcher&) = delete;
  RemoteWatcher& operator=(const RemoteWatcher&) = delete;
  ~RemoteWatcher();

  WatchBatch Next(std::chrono::milliseconds timeout);

 private:
  RemoteWatcher(zmq::context_t& context, const std::string& endpoint, RemoteWatchOptions options);
  Status SendCreate();

  zmq::socket_t socket_;
  const RemoteWatchOptions options_;
  const int64_t watch_id_;
  uint32_t consumed_ = 0;  // batches received since the last credit grant
};

}  // namespace podflow::persistence
