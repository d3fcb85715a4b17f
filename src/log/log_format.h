// The RocksDB key layout of the event log, in one place. src/log/FORMAT.md
// says the same in prose; change both together.
//
// All integers are big-endian so that byte order is numeric order. Keys never
// contain a NUL byte, which makes 0x00 a safe separator.
//
//   'm' + name                        -> meta value (see kMeta*)
//   'r' + rev(8) + sub(4)             -> LogRecord FlatBuffer (schemas/log.fbs);
//                                        carries the txn's writer and
//                                        committed_at_ms (ids 11, 12), the same
//                                        in every record of one revision
//   'i' + key + 0x00 + rev(8)         -> HistoryEntry: sub(4) + flags(1)
//   'l' + key                         -> LatestEntry (37 bytes, below)
//
// Persisted: prefixes, meta names, flag bits and sizes are frozen.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"

namespace podflow::log_format {

inline constexpr char kMetaPrefix = 'm';     // do not change
inline constexpr char kRecordPrefix = 'r';   // do not change
inline constexpr char kHistoryPrefix = 'i';  // do not change
inline constexpr char kLatestPrefix = 'l';   // do not change

// Meta keys ('m' + name). Values are fixed-width big-endian integers.
inline constexpr std::string_view kMetaFormat = "mformat";      // u32: kFormatVersion
inline constexpr std::string_view kMetaRevision = "mrevision";  // i64: current revision
inline constexpr std::string_view kMetaCompact = "mcompact";    // i64: compact revision
inline constexpr uint32_t kFormatVersion = 1;

// Flag bits of HistoryEntry and LatestEntry. Persisted: do not change.
inline constexpr uint8_t kFlagTombstone = 0x01;  // the record is a delete

inline constexpr size_t kRecordKeySize = 1 + 8 + 4;
inline constexpr size_t kHistoryValueSize = 4 + 1;
inline constexpr size_t kLatestValueSize = 8 + 4 + 8 + 8 + 8 + 1;
static_assert(kLatestValueSize == 37);

// Where a key's newest record is, plus what guards and TTLs need without
// reading the record. For a tombstone only mod_revision and sub are set.
struct LatestEntry {
  int64_t mod_revision = 0;
  uint32_t sub = 0;
  int64_t create_revision = 0;
  int64_t version = 0;
  int64_t expires_at_ms = 0;  // 0: no TTL
  uint8_t flags = 0;

  bool tombstone() const { return (flags & kFlagTombstone) != 0; }
};

struct HistoryEntry {
  uint32_t sub = 0;
  uint8_t flags = 0;
  bool tombstone() const { return (flags & kFlagTombstone) != 0; }
};

void PutBigEndian64(std::string* out, uint64_t v);
void PutBigEndian32(std::string* out, uint32_t v);
uint64_t GetBigEndian64(const char* p);
uint32_t GetBigEndian32(const char* p);

std::string RecordKey(int64_t rev, uint32_t sub);
// Parses a record key; false if `k` is not one.
bool ParseRecordKey(std::string_view k, int64_t* rev, uint32_t* sub);

// 'i' + key + 0x00: the prefix of every history entry of `key`.
std::string HistoryKeyPrefix(std::string_view key);
std::string HistoryKey(std::string_view key, int64_t rev);
// Splits a history key; false if `k` is not one.
bool ParseHistoryKey(std::string_view k, std::string_view* key, int64_t* rev);

std::string LatestKey(std::string_view key);

std::string EncodeLatest(const LatestEntry& e);
// Corruption (naming `db_key`) when the value has the wrong size or flags.
Result<LatestEntry> DecodeLatest(std::string_view db_key, std::string_view value);

std::string EncodeHistory(const HistoryEntry& e);
Result<HistoryEntry> DecodeHistory(std::string_view db_key, std::string_view value);

std::string EncodeI64(int64_t v);
Result<int64_t> DecodeI64(std::string_view db_key, std::string_view value);

// Printable form of a RocksDB key for error messages: "r/rev=12/sub=0",
// "l/registry/pods/a", ...
std::string Describe(std::string_view db_key);

}  // namespace podflow::log_format
