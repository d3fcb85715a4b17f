#include <map>

#include "base/logging.h"
#include "stages/persistence/convert.h"
#include "stages/persistence/persistence.h"
#include "watch/field_selector.h"

namespace podflow::persistence {
namespace {

std::shared_ptr<spdlog::logger> StageLog() {
  static auto logger = Logger("stage.persistence");
  return logger;
}

bus::ReplyBody HandleWrite(EventLog& log, const msg::WriteRequest& request,
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
  TxnOptions options;
  if (request.writer()) options.writer = request.writer()->str();
  Result<TxnResult> result = log.Txn(std::move(ops), std::move(options));
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

// ---- the watch service: one thread serving every remote watch ----

class Server::WatchService {
 public:
  WatchService(zmq::context_t& context, EventLog* log, std::string endpoint)
      : context_(context), log_(log), endpoint_(std::move(endpoint)),
        wake_endpoint_("inproc://podflow-watch-wake-" + std::to_string(reinterpret_cast<uintptr_t>(this))) {}

  ~WatchService() { Stop(); }

  Status Start() {
    socket_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::router);
    socket_->set(zmq::sockopt::linger, 0);
    socket_->set(zmq::sockopt::router_mandatory, 1);
    wake_ = std::make_unique<zmq::socket_t>(context_, zmq::socket_type::pair);
    try {
      socket_->bind(endpoint_);
      wake_->bind(wake_endpoint_);
    } catch (const zmq::error_t& e) {
      return Status::IOError("cannot bind " + endpoint_ + ": " + e.what());
    }
    notifier_ = std::thread([this] { NotifyLoop(); });
    thread_ = std::thread([this] { ServeLoop(); });
    return Status::Ok();
  }

  void Stop() {
    if (stopping_.exchange(true)) return;
    log_->WakeWaiters();
    if (notifier_.joinable()) notifier_.join();
    if (thread_.joinable()) thread_.join();
    watches_.clear();
    socket_.reset();
    wake_.reset();
  }

 private:
  struct Watch {
    std::string identity;
    int64_t id = 0;
    std::unique_ptr<Watcher> watcher;
    uint32_t credits = 0;
    std::optional<zmq::message_t> unsent;  // a frame the socket could not take yet
  };

  // Turns "the log moved" into a message on the service's poll set.
  void NotifyLoop() {
    zmq::socket_t wake(context_, zmq::socket_type::pair);
    wake.connect(wake_endpoint_);
    Revision seen = log_->CurrentRevision();
    while (!stopping_) {
      Revision now = log_->WaitForRevision(Revision(seen.value() + 1),
                                           std::chrono::steady_clock::now() + std::chrono::milliseconds(200));
      if (now > seen) {
        seen = now;
        wake.send(zmq::str_buffer("w"), zmq::send_flags::dontwait);
      }
    }
  }

  void ServeLoop() {
    while (!stopping_) {
      zmq::pollitem_t items[] = {{socket_->handle(), 0, ZMQ_POLLIN, 0},
                                 {wake_->handle(), 0, ZMQ_POLLIN, 0}};
      // A watcher still catching up is served again at once; otherwise wait
      // for a request, a new revision, or the progress tick.
      zmq::poll(items, 2, std::chrono::milliseconds(behind_ ? 0 : 100));
      if (items[1].revents & ZMQ_POLLIN) {
        zmq::message_t drain;
        while (wake_->recv(drain, zmq::recv_flags::dontwait)) {
        }
      }
      if (items[0].revents & ZMQ_POLLIN) ReceiveAll();
      ServeWatches();
    }
  }

  void ReceiveAll() {
    while (true) {
      zmq::message_t identity;
      if (!socket_->recv(identity, zmq::recv_flags::dontwait)) return;
      std::vector<zmq::message_t> rest;
      while (identity.more() || (!rest.empty() && rest.back().more())) {
        zmq::message_t part;
        if (!socket_->recv(part, zmq::recv_flags::dontwait)) break;
        rest.push_back(std::move(part));
        if (!rest.back().more()) break;
      }
      if (rest.empty()) continue;
      Result<bus::Frame> frame = bus::VerifyFrame(std::move(rest.back()));
      if (!frame.ok()) {
        StageLog()->warn("{}: dropped a frame: {}", endpoint_, frame.status().message());
        continue;
      }
      Handle(identity.to_string(), frame->envelope());
    }
  }

  void Handle(const std::string& identity, const msg::Envelope& envelope) {
    if (const msg::WatchCreate* create = envelope.body_as_WatchCreate()) {
      WatchOptions options;
      if (create->key()) options.key = create->key()->str();
      options.prefix = create->prefix();
      options.start_revision = Revision(create->start_revision());
      options.prev_kv = create->prev_kv();
      options.progress_interval = std::chrono::milliseconds(create->progress_interval_ms());
      if (create->field_selector() && create->field_selector()->size() > 0) {
        Result<WatchFilter> filter = PodFieldSelector(create->field_selector()->string_view());
        if (!filter.ok()) {
          SendError(identity, create->watch_id(), filter.status());
          return;
        }
        options.filter = std::move(*filter);
      }
      Result<std::unique_ptr<Watcher>> watcher = Watcher::Open(log_, std::move(options));
      if (!watcher.ok()) {
        SendError(identity, create->watch_id(), watcher.status());
        return;
      }
      Watch& w = watches_[{identity, create->watch_id()}];
      w.identity = identity;
      w.id = create->watch_id();
      w.watcher = std::move(*watcher);
      w.credits = create->credits();
      return;
    }
    if (const msg::WatchCredit* credit = envelope.body_as_WatchCredit()) {
      auto it = watches_.find({identity, credit->watch_id()});
      if (it != watches_.end()) it->second.credits += credit->credits();
      return;
    }
    if (const msg::WatchCancel* cancel = envelope.body_as_WatchCancel()) {
      watches_.erase({identity, cancel->watch_id()});
      return;
    }
    StageLog()->warn("{}: unexpected {} on the watch channel", endpoint_,
                     msg::EnumNameBody(envelope.body_type()));
  }

  void SendError(const std::string& identity, int64_t watch_id, const Status& status) {
    WatchBatch batch;
    batch.kind = WatchBatch::Kind::kError;
    batch.status = status;
    flatbuffers::FlatBufferBuilder fbb;
    auto body = ToMsg(fbb, watch_id, batch);
    zmq::message_t frame = bus::FinishFrame(fbb, msg::Body::WatchResponse, body.Union());
    Send(identity, frame);
  }

  enum class SendResult { kSent, kFull, kGone };

  SendResult Send(const std::string& identity, zmq::message_t& frame) {
    try {
      if (!socket_->send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait)) {
        return SendResult::kFull;
      }
      socket_->send(frame, zmq::send_flags::dontwait);
      return SendResult::kSent;
    } catch (const zmq::error_t& e) {
      if (e.num() == EHOSTUNREACH) return SendResult::kGone;
      throw;
    }
  }

  // Moves every watch with credits forward, at most a bounded number of
  // batches each per round so one busy watch cannot starve the others.
  void ServeWatches() {
    constexpr int kBatchesPerRound = 64;
    behind_ = false;
    const Revision head = log_->CurrentRevision();
    for (auto it = watches_.begin(); it != watches_.end();) {
      Watch& w = it->second;
      bool remove = false;
      for (int n = 0; n < kBatchesPerRound && w.credits > 0; ++n) {
        if (!w.unsent) {
          WatchBatch batch = w.watcher->Next(std::chrono::milliseconds(0));
          if (batch.kind == WatchBatch::Kind::kTimedOut) break;
          flatbuffers::FlatBufferBuilder fbb(1024);
          auto body = ToMsg(fbb, w.id, batch);
          w.unsent = bus::FinishFrame(fbb, msg::Body::WatchResponse, body.Union());
          remove = batch.kind == WatchBatch::Kind::kCompacted || batch.kind == WatchBatch::Kind::kClosed;
        }
        SendResult sent = Send(w.identity, *w.unsent);
        if (sent == SendResult::kFull) break;
        if (sent == SendResult::kGone) { remove = true; break; }
        w.unsent.reset();
        --w.credits;
        if (remove) break;
      }
      if (!remove && w.credits > 0 && !w.unsent && w.watcher->next_revision() <= head) behind_ = true;
      it = remove ? watches_.erase(it) : std::next(it);
    }
  }

  zmq::context_t& context_;
  EventLog* const log_;
  const std::string endpoint_;
  const std::string wake_endpoint_;
  std::atomic<bool> stopping_{false};
  std::unique_ptr<zmq::socket_t> socket_;
  std::unique_ptr<zmq::socket_t> wake_;
  std::thread notifier_;
  std::thread thread_;
  std::map<std::pair<std::string, int64_t>, Watch> watches_;  // owned by thread_
  bool behind_ = false;  // some watcher with credits has not caught up (thread_ only)
};

Server::Server(zmq::context_t& context, EventLog* log, ServerOptions options)
    : context_(context), log_(log), options_(std::move(options)) {}

Server::~Server() { Stop(); }

Status Server::Start() {
  api_ = std::make_unique<bus::RpcServer>(
      context_, options_.api_endpoint, options_.api_workers,
      [log = log_](const msg::Envelope& request, flatbuffers::FlatBufferBuilder& fbb) -> bus::ReplyBody {
        if (const msg::WriteRequest* write = request.body_as_WriteRequest()) return HandleWrite(*log, *write, fbb);
        if (const msg::ReadRequest* read = request.body_as_ReadRequest()) return HandleRead(*log, *read, fbb);
        StageLog()->warn("unexpected {} on the api channel", msg::EnumNameBody(request.body_type()));
        return {};
      });
  PODFLOW_RETURN_IF_ERROR(api_->Start());
  watch_ = std::make_unique<WatchService>(context_, log_, options_.watch_endpoint);
  return watch_->Start();
}

void Server::Stop() {
  if (watch_) watch_->Stop();
  if (api_) api_->Stop();
}

}  // namespace podflow::persistence
