// RemoteWatcher: a watch as a bus stream with credits.
#include "client/client.h"
#include "client/wire.h"

namespace podflow::client {

Result<std::unique_ptr<RemoteWatcher>> RemoteWatcher::Open(bus::Context& context, const std::string& watch_endpoint,
                                                           const RemoteWatchOptions& options) {
  if (options.credits < 2) return Status::Invalid("a remote watch needs at least 2 credits");
  Result<std::unique_ptr<bus::StreamClient>> stream = bus::StreamClient::Open(
      context, watch_endpoint, options.credits, [&](flatbuffers::FlatBufferBuilder& fbb, uint64_t id) {
        auto create = msg::CreateWatchCreate(
            fbb, static_cast<int64_t>(id), fbb.CreateString(options.key), options.prefix,
            options.start_revision.value(), options.prev_kv, fbb.CreateString(options.field_selector),
            options.progress_interval.count());
        return bus::ReplyBody{msg::Body::WatchCreate, create.Union()};
      });
  if (!stream.ok()) return stream.status();
  return std::unique_ptr<RemoteWatcher>(new RemoteWatcher(std::move(*stream)));
}

WatchBatch RemoteWatcher::Next(std::chrono::milliseconds timeout) {
  WatchBatch batch;
  Result<std::optional<bus::Frame>> frame = stream_->Next(timeout);
  if (frame.ok() && !frame->has_value()) {
    batch.kind = WatchBatch::Kind::kTimedOut;
    return batch;
  }
  const msg::WatchResponse* response = frame.ok() ? (*frame)->envelope().body_as_WatchResponse() : nullptr;
  if (response == nullptr) {
    batch.kind = WatchBatch::Kind::kError;
    batch.status = frame.ok() ? Status::Invalid("unexpected frame on the watch stream") : frame.status();
    return batch;
  }
  return FromMsg(*response);
}

}  // namespace podflow::client
