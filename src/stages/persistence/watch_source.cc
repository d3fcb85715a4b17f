#include "stages/persistence/watch_source.h"

#include "base/logging.h"
#include "client/wire.h"
#include "watch/field_selector.h"

namespace podflow::persistence {
namespace {

class WatchSource final : public bus::StreamSource {
 public:
  WatchSource(EventLog* log, int64_t watch_id, std::unique_ptr<Watcher> watcher)
      : log_(log), watch_id_(watch_id), watcher_(std::move(watcher)) {}

  Next Produce(flatbuffers::FlatBufferBuilder& fbb) override {
    WatchBatch batch = watcher_->Next(std::chrono::milliseconds(0));
    if (batch.kind == WatchBatch::Kind::kTimedOut) return {};
    const bool last = batch.kind == WatchBatch::Kind::kCompacted || batch.kind == WatchBatch::Kind::kClosed;
    return {{msg::Body::WatchResponse, client::ToMsg(fbb, watch_id_, batch).Union()}, last};
  }

  bool Behind() const override { return watcher_->next_revision() <= log_->CurrentRevision(); }

 private:
  EventLog* const log_;
  const int64_t watch_id_;
  std::unique_ptr<Watcher> watcher_;
};

// A stream that says why its watch was refused, then ends.
class RefusedWatch final : public bus::StreamSource {
 public:
  RefusedWatch(int64_t watch_id, Status why) : watch_id_(watch_id), why_(std::move(why)) {}

  Next Produce(flatbuffers::FlatBufferBuilder& fbb) override {
    WatchBatch batch;
    batch.kind = WatchBatch::Kind::kError;
    batch.status = why_;
    return {{msg::Body::WatchResponse, client::ToMsg(fbb, watch_id_, batch).Union()}, true};
  }

  bool Behind() const override { return true; }

 private:
  const int64_t watch_id_;
  const Status why_;
};

}  // namespace

std::unique_ptr<bus::StreamSource> OpenWatchSource(EventLog* log, const msg::Envelope& open) {
  const int64_t watch_id = static_cast<int64_t>(open.id());
  const msg::WatchCreate* create = open.body_as_WatchCreate();
  if (create == nullptr) {
    return std::make_unique<RefusedWatch>(
        watch_id, Status::Invalid(std::string("unexpected ") + msg::EnumNameBody(open.body_type()) +
                                  " on the watch channel"));
  }
  WatchOptions options;
  if (create->key()) options.key = create->key()->str();
  options.prefix = create->prefix();
  options.start_revision = Revision(create->start_revision());
  options.prev_kv = create->prev_kv();
  options.progress_interval = std::chrono::milliseconds(create->progress_interval_ms());
  if (create->field_selector() && create->field_selector()->size() > 0) {
    Result<WatchFilter> filter = PodFieldSelector(create->field_selector()->string_view());
    if (!filter.ok()) return std::make_unique<RefusedWatch>(watch_id, filter.status());
    options.filter = std::move(*filter);
  }
  Result<std::unique_ptr<Watcher>> watcher = Watcher::Open(log, std::move(options));
  if (!watcher.ok()) return std::make_unique<RefusedWatch>(watch_id, watcher.status());
  return std::make_unique<WatchSource>(log, watch_id, std::move(*watcher));
}

}  // namespace podflow::persistence
