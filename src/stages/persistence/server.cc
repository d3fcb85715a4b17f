#include <map>

#include "base/logging.h"
#include "client/wire.h"
#include "stages/persistence/persistence.h"
#include "stages/persistence/watch_source.h"
#include "stages/persistence/write_roles.h"

namespace podflow::persistence {
namespace {

using client::ErrorStatus;
using client::ToMsg;

std::shared_ptr<spdlog::logger> StageLog() {
  static auto logger = Logger("stage.persistence");
  return logger;
}

// A transaction from `peer`, recorded as written by it when its role allows
// every op.
bus::ReplyBody HandleWrite(EventLog& log, const msg::WriteRequest& request, std::string_view peer,
                           flatbuffers::FlatBufferBuilder& fbb) {
  std::vector<TxnOp> ops;
  if (request.ops()) {
    ops.reserve(request.ops()->size());
    for (const msg::WriteOp* op : *request.ops()) {
      std::string key = op->key() ? op->key()->str() : "";
      std::optional<Revision> guard;
      if (op->guard_mod_revision().has_value()) guard = Revision(*op->guard_mod_revision());
      if (op->type() == msg::WriteOpType::Delete) {
        ops.emplace_back(DeleteOp{std::move(key), guard});
      } else {
        std::string value;
        if (op->value()) value.assign(reinterpret_cast<const char*>(op->value()->data()), op->value()->size());
        ops.emplace_back(PutOp{std::move(key), std::move(value), guard, op->ttl_seconds()});
      }
    }
  }
  Status allowed = AuthorizeWrite(peer, ops);
  Result<TxnResult> result =
      allowed.ok() ? log.Txn(std::move(ops), TxnOptions{std::string(peer)}) : Result<TxnResult>(allowed);
  if (!result.ok()) {
    auto status = ErrorStatus(fbb, result.status());
    msg::WriteReplyBuilder reply(fbb);
    reply.add_status(status);
    return {msg::Body::WriteReply, reply.Finish().Union()};
  }
  flatbuffers::Offset<msg::KeyValue> current;
  if (result->current) current = ToMsg(fbb, *result->current);
  msg::WriteReplyBuilder reply(fbb);
  reply.add_succeeded(result->succeeded);
  reply.add_revision(result->revision.value());
  reply.add_failed_op(static_cast<uint32_t>(result->failed_op));
  reply.add_current(current);
  return {msg::Body::WriteReply, reply.Finish().Union()};
}

bus::ReplyBody HandleRead(EventLog& log, const msg::ReadRequest& request,
                          flatbuffers::FlatBufferBuilder& fbb) {
  RangeRequest range;
  if (request.key()) range.key = request.key()->str();
  if (request.range_end()) range.range_end = request.range_end()->str();
  range.prefix = request.prefix();
  range.revision = Revision(request.revision());
  range.limit = request.limit();
  if (request.continue_token()) range.continue_token = request.continue_token()->str();
  Result<RangeResult> result = log.Range(range);
  if (!result.ok()) {
    auto status = ErrorStatus(fbb, result.status());
    msg::ReadReplyBuilder reply(fbb);
    reply.add_status(status);
    return {msg::Body::ReadReply, reply.Finish().Union()};
  }
  std::vector<flatbuffers::Offset<msg::KeyValue>> kvs;
  kvs.reserve(result->kvs.size());
  for (const KeyValue& kv : result->kvs) kvs.push_back(ToMsg(fbb, kv));
  auto kvs_vec = fbb.CreateVector(kvs);
  auto token = fbb.CreateString(result->continue_token);
  return {msg::Body::ReadReply,
          msg::CreateReadReply(fbb, kvs_vec, result->revision.value(), result->more, token).Union()};
}

}  // namespace

Server::Server(bus::Context& context, EventLog* log, ServerOptions options)
    : context_(context), log_(log), options_(std::move(options)) {}

Server::~Server() { Stop(); }

Status Server::Start() {
  api_ = std::make_unique<bus::RpcServer>(
      context_, options_.api_endpoint, options_.api_workers,
      [log = log_](const msg::Envelope& request, std::string_view peer,
                   flatbuffers::FlatBufferBuilder& fbb) -> bus::ReplyBody {
        if (const msg::WriteRequest* write = request.body_as_WriteRequest()) {
          return HandleWrite(*log, *write, peer, fbb);
        }
        if (const msg::ReadRequest* read = request.body_as_ReadRequest()) return HandleRead(*log, *read, fbb);
        StageLog()->warn("unexpected {} on the api channel", msg::EnumNameBody(request.body_type()));
        return {};
      });
  PODFLOW_RETURN_IF_ERROR(api_->Start());
  watch_ = std::make_unique<bus::StreamServer>(
      context_, options_.watch_endpoint,
      [log = log_](const msg::Envelope& open) { return OpenWatchSource(log, open); });
  PODFLOW_RETURN_IF_ERROR(watch_->Start());
  notifier_ = std::thread([this] { NotifyLoop(); });
  return Status::Ok();
}

void Server::NotifyLoop() {
  Revision seen = log_->CurrentRevision();
  while (!stopping_) {
    Revision now = log_->WaitForRevision(Revision(seen.value() + 1),
                                         std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
    if (now > seen) {
      seen = now;
      watch_->Wake();
    }
  }
}

void Server::Stop() {
  if (stopping_.exchange(true)) return;
  log_->WakeWaiters();
  if (notifier_.joinable()) notifier_.join();
  if (watch_) watch_->Stop();
  if (api_) api_->Stop();
}

}  // namespace podflow::persistence
