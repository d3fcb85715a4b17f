#include "client/wire.h"

namespace podflow::client {

flatbuffers::Offset<msg::KeyValue> ToMsg(flatbuffers::FlatBufferBuilder& fbb, const KeyValue& kv) {
  auto key = fbb.CreateString(kv.key);
  auto value = fbb.CreateVector(reinterpret_cast<const uint8_t*>(kv.value.data()), kv.value.size());
  return msg::CreateKeyValue(fbb, key, value, kv.create_revision.value(), kv.mod_revision.value(),
                             kv.version);
}

KeyValue FromMsg(const msg::KeyValue& kv) {
  KeyValue out;
  if (kv.key()) out.key = kv.key()->str();
  if (kv.value()) out.value.assign(reinterpret_cast<const char*>(kv.value()->data()), kv.value()->size());
  out.create_revision = Revision(kv.create_revision());
  out.mod_revision = Revision(kv.mod_revision());
  out.version = kv.version();
  return out;
}

namespace {

struct HttpStatus {
  int code;
  const char* reason;
};

HttpStatus ToHttp(Code code) {
  switch (code) {
    case Code::kInvalid: return {422, "Invalid"};
    case Code::kNotFound: return {404, "NotFound"};
    case Code::kAlreadyExists: return {409, "AlreadyExists"};
    case Code::kConflict: return {409, "Conflict"};
    case Code::kFutureRevision: return {504, "Timeout"};
    case Code::kCompacted: return {410, "Expired"};
    case Code::kUnavailable: return {503, "ServiceUnavailable"};
    case Code::kForbidden: return {403, "Forbidden"};
    default: return {500, "InternalError"};
  }
}

Code FromHttpReason(std::string_view reason) {
  if (reason == "Invalid") return Code::kInvalid;
  if (reason == "NotFound") return Code::kNotFound;
  if (reason == "AlreadyExists") return Code::kAlreadyExists;
  if (reason == "Conflict") return Code::kConflict;
  if (reason == "Timeout") return Code::kFutureRevision;
  if (reason == "Expired") return Code::kCompacted;
  if (reason == "ServiceUnavailable") return Code::kUnavailable;
  if (reason == "Forbidden") return Code::kForbidden;
  return Code::kInternal;
}

}  // namespace

flatbuffers::Offset<msg::ApiStatus> ErrorStatus(flatbuffers::FlatBufferBuilder& fbb,
                                                const Status& status) {
  HttpStatus http = ToHttp(status.code());
  return msg::CreateApiStatus(fbb, fbb.CreateString("Failure"), http.code, fbb.CreateString(http.reason),
                              fbb.CreateString(status.message()), 0, static_cast<int32_t>(status.code()));
}

Status FromMsg(const msg::ApiStatus* status) {
  if (status == nullptr || (status->status() && status->status()->str() == "Success")) {
    return Status::Ok();
  }
  Code code = FromHttpReason(status->reason() ? status->reason()->string_view() : "");
  const int32_t exact = status->error_code();
  if (exact > static_cast<int32_t>(Code::kOk) && exact <= static_cast<int32_t>(Code::kForbidden)) {
    code = static_cast<Code>(exact);
  }
  return Status(code, status->message() ? status->message()->str() : "");
}

namespace {

msg::WatchResponseKind KindToMsg(WatchBatch::Kind kind) {
  switch (kind) {
    case WatchBatch::Kind::kEvents: return msg::WatchResponseKind::Events;
    case WatchBatch::Kind::kProgress: return msg::WatchResponseKind::Progress;
    case WatchBatch::Kind::kCompacted: return msg::WatchResponseKind::Compacted;
    case WatchBatch::Kind::kClosed: return msg::WatchResponseKind::Canceled;
    default: return msg::WatchResponseKind::Error;
  }
}

}  // namespace

flatbuffers::Offset<msg::WatchResponse> ToMsg(flatbuffers::FlatBufferBuilder& fbb, int64_t watch_id,
                                              const WatchBatch& batch) {
  std::vector<flatbuffers::Offset<msg::WatchEvent>> events;
  events.reserve(batch.events.size());
  for (const WatchEvent& e : batch.events) {
    auto kv = ToMsg(fbb, e.kv);
    flatbuffers::Offset<msg::KeyValue> prev;
    if (e.prev_kv) prev = ToMsg(fbb, *e.prev_kv);
    events.push_back(msg::CreateWatchEvent(
        fbb, e.type == ChangeType::kPut ? msg::WatchEventType::Put : msg::WatchEventType::Delete,
        kv, prev, e.created));
  }
  auto events_vec = fbb.CreateVector(events);
  flatbuffers::Offset<flatbuffers::String> message;
  if (!batch.status.ok()) message = fbb.CreateString(batch.status.message());
  int64_t compact = batch.kind == WatchBatch::Kind::kCompacted ? batch.revision.value() : 0;
  return msg::CreateWatchResponse(fbb, watch_id, KindToMsg(batch.kind), batch.revision.value(),
                                  compact, events_vec, message);
}

WatchBatch FromMsg(const msg::WatchResponse& response) {
  WatchBatch batch;
  batch.revision = Revision(response.revision());
  switch (response.kind()) {
    case msg::WatchResponseKind::Events: batch.kind = WatchBatch::Kind::kEvents; break;
    case msg::WatchResponseKind::Progress: batch.kind = WatchBatch::Kind::kProgress; break;
    case msg::WatchResponseKind::Compacted:
      batch.kind = WatchBatch::Kind::kCompacted;
      batch.revision = Revision(response.compact_revision());
      break;
    case msg::WatchResponseKind::Canceled: batch.kind = WatchBatch::Kind::kClosed; break;
    default:
      batch.kind = WatchBatch::Kind::kError;
      batch.status = Status::Unavailable(response.message() ? response.message()->str() : "watch error");
  }
  if (response.events()) {
    for (const msg::WatchEvent* e : *response.events()) {
      WatchEvent event;
      event.type = e->type() == msg::WatchEventType::Put ? ChangeType::kPut : ChangeType::kDelete;
      if (e->kv()) event.kv = FromMsg(*e->kv());
      if (e->prev_kv()) event.prev_kv = FromMsg(*e->prev_kv());
      event.created = e->entered();
      batch.events.push_back(std::move(event));
    }
  }
  return batch;
}

}  // namespace podflow::client
