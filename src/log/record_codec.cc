#include "log/record_codec.h"

#include "log/log_format.h"
#include "log_generated.h"

namespace podflow::log_internal {

std::string_view EncodeRecord(const RecordFields& f, flatbuffers::FlatBufferBuilder* builder) {
  builder->Clear();
  auto key = builder->CreateString(f.key.data(), f.key.size());
  auto value = builder->CreateVector(reinterpret_cast<const uint8_t*>(f.value.data()),
                                     f.value.size());
  flatbuffers::Offset<flatbuffers::String> writer;
  if (!f.writer.empty()) writer = builder->CreateString(f.writer.data(), f.writer.size());
  log::LogRecordBuilder b(*builder);
  b.add_key(key);
  b.add_value(value);
  b.add_type(f.is_delete ? log::RecordType::Delete : log::RecordType::Put);
  b.add_create_revision(f.create_revision);
  b.add_mod_revision(f.mod_revision);
  b.add_version(f.version);
  b.add_sub(f.sub);
  b.add_prev_mod_revision(f.prev_mod_revision);
  b.add_prev_sub(f.prev_sub);
  b.add_ttl_seconds(f.ttl_seconds);
  b.add_expires_at_ms(f.expires_at_ms);
  if (!f.writer.empty()) b.add_writer(writer);
  b.add_committed_at_ms(f.committed_at_ms);
  builder->Finish(b.Finish());
  return std::string_view(reinterpret_cast<const char*>(builder->GetBufferPointer()),
                          builder->GetSize());
}

Result<DecodedRecord> DecodeRecord(std::string_view db_key, std::string_view bytes) {
  auto corrupt = [&](const std::string& why) {
    return Status::Corruption("log record " + log_format::Describe(db_key) + ": " + why);
  };
  int64_t rev = 0;
  uint32_t sub = 0;
  if (!log_format::ParseRecordKey(db_key, &rev, &sub)) return corrupt("not a record key");
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  if (!log::VerifyLogRecordBuffer(verifier)) return corrupt("failed FlatBuffers verification");
  const log::LogRecord* r = log::GetLogRecord(bytes.data());
  if (r->mod_revision() != rev || r->sub() != sub) {
    return corrupt("record says rev=" + std::to_string(r->mod_revision()) +
                   "/sub=" + std::to_string(r->sub()));
  }
  if (r->key()->size() == 0) return corrupt("empty key");
  DecodedRecord out;
  Change& c = out.change;
  c.kv.key.assign(r->key()->data(), r->key()->size());
  c.kv.mod_revision = Revision(rev);
  switch (r->type()) {
    case log::RecordType::Put:
      if (r->version() <= 0 || r->create_revision() <= 0 || r->create_revision() > rev) {
        return corrupt("inconsistent create_revision/version");
      }
      c.type = ChangeType::kPut;
      if (r->value() != nullptr) {
        c.kv.value.assign(reinterpret_cast<const char*>(r->value()->data()), r->value()->size());
      }
      c.kv.create_revision = Revision(r->create_revision());
      c.kv.version = r->version();
      c.kv.ttl_seconds = r->ttl_seconds();
      break;
    case log::RecordType::Delete:
      c.type = ChangeType::kDelete;
      break;
    default:
      return corrupt("unknown record type " + std::to_string(static_cast<int>(r->type())));
  }
  out.sub = sub;
  out.prev_mod_revision = r->prev_mod_revision();
  out.prev_sub = r->prev_sub();
  out.expires_at_ms = r->expires_at_ms();
  if (r->writer() != nullptr) out.writer.assign(r->writer()->data(), r->writer()->size());
  out.committed_at_ms = r->committed_at_ms();
  return out;
}

}  // namespace podflow::log_internal
