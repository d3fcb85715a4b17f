// ApiClient: writes and reads over the api channel.
#include "client/client.h"
#include "client/wire.h"

namespace podflow::client {

ApiClient::ApiClient(bus::Context& context, const std::string& api_endpoint, std::string identity)
    : rpc_(context, api_endpoint, std::move(identity)) {}

Result<WriteResult> ApiClient::Write(const std::vector<TxnOp>& ops, std::chrono::milliseconds timeout) {
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
  auto request = msg::CreateWriteRequest(fbb, ops_vec);
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

Result<RangeResult> ApiClient::Read(const RangeRequest& request, std::chrono::milliseconds timeout) {
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

Result<std::optional<KeyValue>> ApiClient::Get(const std::string& key, std::chrono::milliseconds timeout) {
  RangeRequest request;
  request.key = key;
  Result<RangeResult> read = Read(request, timeout);
  if (!read.ok()) return read.status();
  if (read->kvs.empty()) return std::optional<KeyValue>();
  return std::optional<KeyValue>(std::move(read->kvs[0]));
}

Result<RangeResult> ApiClient::List(const std::string& prefix, int64_t page, std::chrono::milliseconds timeout) {
  RangeRequest request = RangeRequest::Prefix(prefix);
  request.limit = page;
  RangeResult all;
  while (true) {
    Result<RangeResult> part = Read(request, timeout);
    if (!part.ok()) return part.status();
    for (KeyValue& kv : part->kvs) all.kvs.push_back(std::move(kv));
    all.revision = part->revision;
    if (!part->more) return all;
    request.continue_token = part->continue_token;
  }
}

}  // namespace podflow::client
