// Encoding and verified decoding of LogRecord FlatBuffers (schemas/log.fbs).
// Private to src/log.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <flatbuffers/flatbuffers.h>

#include "base/result.h"
#include "log/log.h"

namespace podflow::log_internal {

// The fields of one record, as the committer fills them.
struct RecordFields {
  std::string_view key;
  std::string_view value;
  bool is_delete = false;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  uint32_t sub = 0;
  int64_t prev_mod_revision = 0;
  uint32_t prev_sub = 0;
  int64_t ttl_seconds = 0;
  int64_t expires_at_ms = 0;
  std::string_view writer;  // the txn's TxnOptions::writer
  int64_t committed_at_ms = 0;
};

// Serializes `f` into `builder` (cleared first). The bytes stay valid until
// the builder is next used. Not thread safe (the builder is the caller's).
std::string_view EncodeRecord(const RecordFields& f, flatbuffers::FlatBufferBuilder* builder);

// A verified record. `prev_*` say where the key's previous record is.
struct DecodedRecord {
  Change change;  // type + kv (delete: key and mod_revision only)
  uint32_t sub = 0;
  int64_t prev_mod_revision = 0;
  uint32_t prev_sub = 0;
  int64_t expires_at_ms = 0;
  std::string writer;  // "" in records older than the field
  int64_t committed_at_ms = 0;
};

// Verifies `bytes` with the FlatBuffers Verifier and checks that the record
// agrees with the RocksDB key it was stored under (`db_key`, a record key).
// Corruption, naming the record's revision and sub, otherwise.
Result<DecodedRecord> DecodeRecord(std::string_view db_key, std::string_view bytes);

}  // namespace podflow::log_internal
