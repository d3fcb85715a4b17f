// RemoteWatcher: a watch as a bus stream with credits.
#include "client/client.h"
#include "client/wire.h"

#include <algorithm>

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
  const std::chrono::milliseconds silence =
      options.progress_interval.count() > 0
          ? std::max(kMinSilence, kSilentIntervals * options.progress_interval)
          : std::chrono::milliseconds(0);
  return std::unique_ptr<RemoteWatcher>(new RemoteWatcher(std::move(*stream), silence));
}

RemoteWatcher::RemoteWatcher(std::unique_ptr<bus::StreamClient> stream, std::chrono::milliseconds silence_limit)
    : stream_(std::move(stream)), silence_limit_(silence_limit), last_frame_(std::chrono::steady_clock::now()) {}

WatchBatch RemoteWatcher::Next(std::chrono::milliseconds timeout) {
  WatchBatch batch;
  Result<std::optional<bus::Frame>> frame = stream_->Next(timeout);
  const auto now = std::chrono::steady_clock::now();
  if (frame.ok() && !frame->has_value()) {
    if (silence_limit_.count() > 0 && now - last_frame_ > silence_limit_) {
      batch.kind = WatchBatch::Kind::kError;
      batch.status = Status::Unavailable(
          "the watch stream was silent for " +
          std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now - last_frame_).count()) +
          "ms, past its progress deadline: the server went away or restarted");
      return batch;
    }
    batch.kind = WatchBatch::Kind::kTimedOut;
    return batch;
  }
  last_frame_ = now;
  const msg::WatchResponse* response = frame.ok() ? (*frame)->envelope().body_as_WatchResponse() : nullptr;
  if (response == nullptr) {
    batch.kind = WatchBatch::Kind::kError;
    batch.status = frame.ok() ? Status::Invalid("unexpected frame on the watch stream") : frame.status();
    return batch;
  }
  return FromMsg(*response);
}

}  // namespace podflow::client
