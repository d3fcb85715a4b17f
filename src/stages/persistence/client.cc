#include <atomic>

#include "stages/persistence/convert.h"
#include "stages/persistence/persistence.h"

namespace podflow::persistence {

// ---- Client ----

Client::Client(zmq::context_t& context, const std::string& api_endpoint, std::string writer)
    : rpc_(context, api_endpoint), writer_(std::move(writer)) {}

Result<WriteResult> Client::Write(const std::vector<TxnOp>& ops, std::chrono::milliseconds timeout) {
  flatbuffers::FlatBufferBuilder fbb(1024);
  std::vector<flatbuffers::Offset<msg::WriteOp>> msg_ops;
  msg_ops.reserve(ops.size());
  for (const TxnOp& op : ops) {
    if (const PutOp* put = std::get_if<PutOp>(&op)) {
      auto key = fbb.CreateString(put->key);
      auto value = fbb.CreateVector(reinterpret_cast<const uint8_t*>(put->value.data()), put->value.size());
      flatbuffers::Optional<int64_t> guard = flatbuffers::nullopt;
      if (put->guard) guard = put->guard->value();
      msg_ops.push_back(msg::CreateWriteOp(fbb, msg::WriteOpType::Put, key, value, guard, put->ttl_seconds));
    } else {
      const DeleteOp& del = std::get<DeleteOp>(op);
      auto key = fbb.CreateString(del.key);
      flatbuffers::Optional<int64_t> guard = flatbuffers::nullopt;
      if (del.guard) guard = del.guard->value();
      msg_ops.push_back(msg::CreateWriteOp(fbb, msg::WriteOpType::Delete, key, 0, guard));
    }
  }
  auto ops_vec = fbb.CreateVector(msg_ops);
  auto request = msg::CreateWriteRequest(fbb, ops_vec, fbb.CreateString(writer_));
  Result<bus::Frame> reply = rpc_.Call(fbb, msg::Body::WriteRequest, request.Union(), timeout);
  if (!reply.ok()) return reply.status();
  const msg::WriteReply* write = reply->envelope().body_as_WriteReply();
  if (write == nullptr) return Status::Internal("the api channel answered a write with something else");
  PODFLOW_RETURN_IF_ERROR(FromMsg(write->status()));
  WriteResult out;
  out.succeeded = write->succeeded();
  out.revision = Revision(write->revision());
  out.failed_op = write->failed_op();
  if (write->current()) out.current = FromMsg(*write->current());
  return out;
}

Result<RangeResult> Client::Read(const RangeRequest& request, std::chrono::milliseconds timeout) {
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = msg::CreateReadRequest(fbb, fbb.CreateString(request.key), fbb.CreateString(request.range_end),
                                     request.prefix, request.revision.value(), request.limit,
                                     fbb.CreateString(request.continue_token));
  Result<bus::Frame> reply = rpc_.Call(fbb, msg::Body::ReadRequest, body.Union(), timeout);
  if (!reply.ok()) return reply.status();
  const msg::ReadReply* read = reply->envelope().body_as_ReadReply();
  if (read == nullptr) return Status::Internal("the api channel answered a read with something else");
  PODFLOW_RETURN_IF_ERROR(FromMsg(read->status()));
  RangeResult out;
  if (read->kvs()) {
    out.kvs.reserve(read->kvs()->size());
    for (const msg::KeyValue* kv : *read->kvs()) out.kvs.push_back(FromMsg(*kv));
  }
  out.revision = Revision(read->revision());
  out.more = read->more();
  if (read->continue_token()) out.continue_token = read->continue_token()->str();
  return out;
}

Result<RangeResult> Client::List(const std::string& prefix, int64_t page) {
  RangeRequest request = RangeRequest::Prefix(prefix);
  request.limit = page;
  RangeResult all;
  while (true) {
    Result<RangeResult> part = Read(request);
    if (!part.ok()) return part.status();
    for (KeyValue& kv : part->kvs) all.kvs.push_back(std::move(kv));
    all.revision = part->revision;
    if (!part->more) return all;
    request.continue_token = part->continue_token;
  }
}

// ---- RemoteWatcher ----

namespace {
std::atomic<int64_t> next_watch_id{1};
}

RemoteWatcher::RemoteWatcher(zmq::context_t& context, const std::string& endpoint,
                             RemoteWatchOptions options)
    : socket_(context, zmq::socket_type::dealer),
      options_(std::move(options)),
      watch_id_(next_watch_id.fetch_add(1)) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.connect(endpoint);
}

RemoteWatcher::~RemoteWatcher() {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto cancel = msg::CreateWatchCancel(fbb, watch_id_);
  socket_.send(bus::FinishFrame(fbb, msg::Body::WatchCancel, cancel.Union()), zmq::send_flags::dontwait);
}

Result<std::unique_ptr<RemoteWatcher>> RemoteWatcher::Open(zmq::context_t& context,
                                                           const std::string& watch_endpoint,
                                                           RemoteWatchOptions options) {
  if (options.credits < 2) return Status::Invalid("a remote watch needs at least 2 credits");
  std::unique_ptr<RemoteWatcher> watcher(new RemoteWatcher(context, watch_endpoint, std::move(options)));
  PODFLOW_RETURN_IF_ERROR(watcher->SendCreate());
  return watcher;
}

Status RemoteWatcher::SendCreate() {
  flatbuffers::FlatBufferBuilder fbb(256);
  auto create = msg::CreateWatchCreate(
      fbb, watch_id_, fbb.CreateString(options_.key), options_.prefix, options_.start_revision.value(),
      options_.prev_kv, fbb.CreateString(options_.field_selector), options_.progress_interval.count(),
      options_.credits);
  if (!socket_.send(bus::FinishFrame(fbb, msg::Body::WatchCreate, create.Union()), zmq::send_flags::none)) {
    return Status::Unavailable("cannot send the watch request");
  }
  return Status::Ok();
}

WatchBatch RemoteWatcher::Next(std::chrono::milliseconds timeout) {
  WatchBatch batch;
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  zmq::poll(&item, 1, timeout);
  zmq::message_t message;
  if (!(item.revents & ZMQ_POLLIN) || !socket_.recv(message, zmq::recv_flags::dontwait)) {
    batch.kind = WatchBatch::Kind::kTimedOut;
    return batch;
  }
  Result<bus::Frame> frame = bus::VerifyFrame(std::move(message));
  const msg::WatchResponse* response = frame.ok() ? frame->envelope().body_as_WatchResponse() : nullptr;
  if (response == nullptr || response->watch_id() != watch_id_) {
    batch.kind = WatchBatch::Kind::kError;
    batch.status = frame.ok() ? Status::Invalid("unexpected frame on the watch stream") : frame.status();
    return batch;
  }
  batch = FromMsg(*response);
  // Every response took one credit; give half the window back at a time.
  if (++consumed_ >= options_.credits / 2) {
    flatbuffers::FlatBufferBuilder fbb(64);
    auto credit = msg::CreateWatchCredit(fbb, watch_id_, consumed_);
    socket_.send(bus::FinishFrame(fbb, msg::Body::WatchCredit, credit.Union()), zmq::send_flags::dontwait);
    consumed_ = 0;
  }
  return batch;
}

}  // namespace podflow::persistence
