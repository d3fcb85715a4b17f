#include "log/log_format.h"

#include <cctype>

namespace podflow::log_format {

void PutBigEndian64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

void PutBigEndian32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

uint64_t GetBigEndian64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint32_t GetBigEndian32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

std::string RecordKey(int64_t rev, uint32_t sub) {
  std::string k;
  k.reserve(kRecordKeySize);
  k.push_back(kRecordPrefix);
  PutBigEndian64(&k, static_cast<uint64_t>(rev));
  PutBigEndian32(&k, sub);
  return k;
}

bool ParseRecordKey(std::string_view k, int64_t* rev, uint32_t* sub) {
  if (k.size() != kRecordKeySize || k[0] != kRecordPrefix) return false;
  *rev = static_cast<int64_t>(GetBigEndian64(k.data() + 1));
  *sub = GetBigEndian32(k.data() + 9);
  return true;
}

std::string HistoryKeyPrefix(std::string_view key) {
  std::string k;
  k.reserve(key.size() + 2);
  k.push_back(kHistoryPrefix);
  k.append(key);
  k.push_back('\0');
  return k;
}

std::string HistoryKey(std::string_view key, int64_t rev) {
  std::string k = HistoryKeyPrefix(key);
  PutBigEndian64(&k, static_cast<uint64_t>(rev));
  return k;
}

bool ParseHistoryKey(std::string_view k, std::string_view* key, int64_t* rev) {
  // 'i' + key (>= 1 byte) + 0x00 + 8 bytes.
  if (k.size() < 11 || k[0] != kHistoryPrefix || k[k.size() - 9] != '\0') return false;
  *key = k.substr(1, k.size() - 10);
  *rev = static_cast<int64_t>(GetBigEndian64(k.data() + k.size() - 8));
  return true;
}

std::string LatestKey(std::string_view key) {
  std::string k;
  k.reserve(key.size() + 1);
  k.push_back(kLatestPrefix);
  k.append(key);
  return k;
}

std::string EncodeLatest(const LatestEntry& e) {
  std::string v;
  v.reserve(kLatestValueSize);
  PutBigEndian64(&v, static_cast<uint64_t>(e.mod_revision));
  PutBigEndian32(&v, e.sub);
  PutBigEndian64(&v, static_cast<uint64_t>(e.create_revision));
  PutBigEndian64(&v, static_cast<uint64_t>(e.version));
  PutBigEndian64(&v, static_cast<uint64_t>(e.expires_at_ms));
  v.push_back(static_cast<char>(e.flags));
  return v;
}

Result<LatestEntry> DecodeLatest(std::string_view db_key, std::string_view value) {
  if (value.size() != kLatestValueSize) {
    return Status::Corruption("latest entry " + Describe(db_key) + ": " +
                              std::to_string(value.size()) + " bytes, want " +
                              std::to_string(kLatestValueSize));
  }
  const char* p = value.data();
  LatestEntry e;
  e.mod_revision = static_cast<int64_t>(GetBigEndian64(p));
  e.sub = GetBigEndian32(p + 8);
  e.create_revision = static_cast<int64_t>(GetBigEndian64(p + 12));
  e.version = static_cast<int64_t>(GetBigEndian64(p + 20));
  e.expires_at_ms = static_cast<int64_t>(GetBigEndian64(p + 28));
  e.flags = static_cast<uint8_t>(p[36]);
  if ((e.flags & ~kFlagTombstone) != 0 || e.mod_revision <= 0 ||
      (!e.tombstone() && (e.version <= 0 || e.create_revision <= 0 ||
                          e.create_revision > e.mod_revision))) {
    return Status::Corruption("latest entry " + Describe(db_key) + ": inconsistent fields");
  }
  return e;
}

std::string EncodeHistory(const HistoryEntry& e) {
  std::string v;
  v.reserve(kHistoryValueSize);
  PutBigEndian32(&v, e.sub);
  v.push_back(static_cast<char>(e.flags));
  return v;
}

Result<HistoryEntry> DecodeHistory(std::string_view db_key, std::string_view value) {
  if (value.size() != kHistoryValueSize ||
      (static_cast<uint8_t>(value[4]) & ~kFlagTombstone) != 0) {
    return Status::Corruption("history entry " + Describe(db_key) + ": malformed value");
  }
  return HistoryEntry{GetBigEndian32(value.data()), static_cast<uint8_t>(value[4])};
}

std::string EncodeI64(int64_t v) {
  std::string out;
  PutBigEndian64(&out, static_cast<uint64_t>(v));
  return out;
}

Result<int64_t> DecodeI64(std::string_view db_key, std::string_view value) {
  if (value.size() != 8) {
    return Status::Corruption("meta " + Describe(db_key) + ": " + std::to_string(value.size()) +
                              " bytes, want 8");
  }
  return static_cast<int64_t>(GetBigEndian64(value.data()));
}

namespace {
std::string Printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isprint(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}
}  // namespace

std::string Describe(std::string_view db_key) {
  int64_t rev = 0;
  uint32_t sub = 0;
  std::string_view key;
  if (ParseRecordKey(db_key, &rev, &sub)) {
    return "r/rev=" + std::to_string(rev) + "/sub=" + std::to_string(sub);
  }
  if (ParseHistoryKey(db_key, &key, &rev)) {
    return "i/" + Printable(key) + "@" + std::to_string(rev);
  }
  if (db_key.empty()) return "<empty>";
  return std::string(1, db_key[0]) + "/" + Printable(db_key.substr(1));
}

}  // namespace podflow::log_format
