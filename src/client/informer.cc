// Informer: list, then watch from the listed revision.
#include "client/client.h"

namespace podflow::client {

Informer::Informer(bus::Context& context, std::string api_endpoint, std::string watch_endpoint,
                   std::string prefix, std::string field_selector,
                   std::function<bool(const KeyValue&)> list_filter)
    : context_(context),
      watch_endpoint_(std::move(watch_endpoint)),
      prefix_(std::move(prefix)),
      field_selector_(std::move(field_selector)),
      list_filter_(std::move(list_filter)),
      client_(context, api_endpoint) {}  // reads only: the context's default identity

Status Informer::Sync(const Handlers& handlers) {
  watcher_.reset();
  Result<RangeResult> list = client_.List(prefix_);
  if (!list.ok()) return list.status();
  std::set<std::string> present;
  for (const KeyValue& kv : list->kvs) {
    if (list_filter_ && !list_filter_(kv)) continue;
    present.insert(kv.key);
    handlers.upsert(kv);
  }
  for (const std::string& key : known_) {
    if (!present.count(key)) handlers.remove(key);
  }
  known_ = std::move(present);
  revision_ = list->revision;
  list_revision_ = list->revision;
  RemoteWatchOptions options;
  options.key = prefix_;
  options.prefix = true;
  options.start_revision = Revision(revision_.value() + 1);
  options.field_selector = field_selector_;
  Result<std::unique_ptr<RemoteWatcher>> watcher = RemoteWatcher::Open(context_, watch_endpoint_, options);
  if (!watcher.ok()) return watcher.status();
  watcher_ = std::move(*watcher);
  return Status::Ok();
}

Status Informer::Poll(std::chrono::milliseconds timeout, const Handlers& handlers) {
  if (!watcher_) return Sync(handlers);
  auto wait = timeout;
  // Bounded, so that a busy log cannot keep the caller from its other work.
  for (int batches = 0; batches < 1024; ++batches) {
    WatchBatch batch = watcher_->Next(wait);
    wait = std::chrono::milliseconds(0);  // then drain what is already here
    switch (batch.kind) {
      case WatchBatch::Kind::kTimedOut:
        return Status::Ok();
      case WatchBatch::Kind::kProgress:
        revision_ = std::max(revision_, batch.revision);
        continue;
      case WatchBatch::Kind::kEvents:
        for (const WatchEvent& e : batch.events) {
          if (e.type == ChangeType::kPut) {
            known_.insert(e.kv.key);
            handlers.upsert(e.kv);
          } else if (known_.erase(e.kv.key)) {
            handlers.remove(e.kv.key);
          }
        }
        revision_ = batch.revision;
        continue;
      case WatchBatch::Kind::kCompacted:
      case WatchBatch::Kind::kClosed:
      case WatchBatch::Kind::kError:
        // Start over from a fresh list: level-triggered, nothing is lost.
        return Sync(handlers);
    }
  }
  return Status::Ok();
}

}  // namespace podflow::client
