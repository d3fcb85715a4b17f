// The persistence stage's server: the event log's only writer, serving the
// other stages over the bus.
//  - api channel (request/reply): WriteRequest -> Txn, ReadRequest -> Range;
//  - watch channel (a bus stream with credits): WatchCreate opens a watch
//    from a revision with an optional field selector; the server sends one
//    WatchResponse per revision batch while the client has credits. A slow
//    client therefore never blocks the log: its watcher simply stops
//    reading until credits come.
// Clients use src/client (ApiClient, RemoteWatcher, Informer).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "bus/bus.h"
#include "log/log.h"

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
  Server(bus::Context& context, EventLog* log, ServerOptions options);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  Status Start();
  void Stop();

 private:
  // Wakes the watch streams whenever the log moves.
  void NotifyLoop();

  bus::Context& context_;
  EventLog* const log_;
  const ServerOptions options_;
  std::unique_ptr<bus::RpcServer> api_;
  std::unique_ptr<bus::StreamServer> watch_;
  std::atomic<bool> stopping_{false};
  std::thread notifier_;
};

}  // namespace podflow::persistence
