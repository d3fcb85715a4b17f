// The revisioned event log: etcd's MVCC semantics behind one interface.
//
// This is the log module's one public header. It names no storage engine:
// OpenLog() returns the embedded RocksDB implementation; an etcd-backed
// EventLog can implement the same interface later.
//
// Semantics (etcd's):
//  - One global revision. An empty log is at revision 1; every transaction
//    that changes something raises it by exactly 1, shared by all its ops.
//    Read-only transactions, failed guards and deletes of missing keys do not.
//  - Per key: create_revision, mod_revision, version (1 at create, +1 per put;
//    a delete ends the generation, a later put starts again at version 1).
//  - Reads at the head (revision 0) or at any revision in
//    [compact revision, current revision].
//
// Thread safety: every EventLog method may be called concurrently from any
// thread. An EventLog is not copyable; destroy it only after every reader and
// watcher using it is gone.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/result.h"
#include "base/status.h"
#include "base/types.h"

namespace podflow {

// etcd's mvcc.KeyValue.
struct KeyValue {
  std::string key;
  std::string value;
  Revision create_revision;  // revision of the put that started this generation
  Revision mod_revision;     // revision of the last change
  int64_t version = 0;       // 1 at create, +1 per put
  int64_t ttl_seconds = 0;   // TTL the last put carried (0: none)

  bool operator==(const KeyValue&) const = default;
};

// Put `value` at `key`. If `guard` is set, the transaction applies only if
// the key's mod_revision equals *guard (Revision(0): the key must not exist).
// ttl_seconds > 0 deletes the key that long after this put, with an ordinary
// delete (watchers see a DELETE); a later put without TTL cancels it.
struct PutOp {
  PutOp() = default;
  PutOp(std::string k, std::string v, std::optional<Revision> g = std::nullopt,
        int64_t ttl = 0)
      : key(std::move(k)), value(std::move(v)), guard(g), ttl_seconds(ttl) {}

  std::string key;
  std::string value;
  std::optional<Revision> guard;
  int64_t ttl_seconds = 0;
};

// Delete `key` (a missing key is not an error and changes nothing). `guard`
// as for PutOp.
struct DeleteOp {
  DeleteOp() = default;
  explicit DeleteOp(std::string k, std::optional<Revision> g = std::nullopt)
      : key(std::move(k)), guard(g) {}

  std::string key;
  std::optional<Revision> guard;
};

using TxnOp = std::variant<PutOp, DeleteOp>;

// How a transaction is recorded (not what it does).
struct TxnOptions {
  // Who wrote it: the stage or tool ("admission", "binding", "ttl"). Stored
  // with every record of the revision and given back to readers as
  // RevisionChanges::writer; "" = not named.
  std::string writer;
};

// Outcome of a transaction that was evaluated (invalid input and I/O errors
// are a non-OK Status instead).
struct TxnResult {
  bool succeeded = false;  // all guards held and every op was applied
  // succeeded and something changed: the transaction's revision; otherwise
  // the current revision when it was evaluated.
  Revision revision;
  int64_t deleted = 0;  // keys the transaction deleted

  // !succeeded: index of the first op whose guard failed and that key's
  // current value (nullopt: the key does not exist).
  size_t failed_op = 0;
  std::optional<KeyValue> current;
};

// A read over one key, a prefix or [key, range_end), at `revision`
// (Revision(0): the head).
struct RangeRequest {
  std::string key;        // the key, the prefix ("" = every key) or the start
  std::string range_end;  // exclusive end; "" = just `key` (unless prefix)
  bool prefix = false;    // read every key starting with `key`
  Revision revision;      // 0: the current revision
  int64_t limit = 0;      // at most this many kvs (0: no limit)
  // From a previous RangeResult: continue that read after its last key, at
  // that read's revision. The request's range must be the same.
  std::string continue_token;

  static RangeRequest Prefix(std::string prefix, Revision at = Revision(0)) {
    RangeRequest r;
    r.key = std::move(prefix);
    r.prefix = true;
    r.revision = at;
    return r;
  }
};

struct RangeResult {
  std::vector<KeyValue> kvs;  // in key order
  Revision revision;          // the revision the read was done at
  bool more = false;          // the limit stopped the read early
  std::string continue_token;  // non-empty when `more`: pass it to continue
};

// One change of one revision, as the watch feed delivers it.
enum class ChangeType : uint8_t { kPut = 0, kDelete = 1 };

struct Change {
  ChangeType type = ChangeType::kPut;
  // kPut: the new KeyValue. kDelete: key, mod_revision = the delete's
  // revision, the rest zero (as in an etcd delete event).
  KeyValue kv;
};

// Every change a revision made, in op order.
struct RevisionChanges {
  Revision revision;
  std::vector<Change> changes;
  // When the committer published the revision (for lag metrics); the epoch
  // (zero) when it was read back from storage.
  std::chrono::steady_clock::time_point committed_at;
  // The transaction's TxnOptions::writer ("" when not named) and its commit
  // time (wall clock, Unix ms; LogOptions.now_ms when set). Persisted: the
  // same whether served from memory or read back from storage; "" and 0 for
  // revisions written before the log recorded them.
  std::string writer;
  int64_t committed_at_ms = 0;
};

using RevisionChangesPtr = std::shared_ptr<const RevisionChanges>;

struct LogOptions {
  std::string dir;  // the data directory, created if missing
  // fsync the WAL before acknowledging a write. Only tests that do not care
  // about power loss turn this off.
  bool sync = true;
  // Wall clock for TTLs, Unix milliseconds. Empty: the system clock.
  std::function<int64_t()> now_ms;
  // How often expired TTL keys are looked for.
  std::chrono::milliseconds expiry_poll_interval{200};
  // The in-memory ring of recent revisions the watch feed serves from.
  size_t ring_max_revisions = 65536;
  size_t ring_max_bytes = 64u << 20;
  // Limit on the keys + values of one transaction (etcd's default
  // --max-request-bytes).
  size_t max_txn_bytes = 1572864;
};

class EventLog {
 public:
  EventLog() = default;
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  virtual ~EventLog() = default;

  // Applies `ops` atomically (all or nothing) and durably: once this returns
  // a succeeded TxnResult, the change survives a crash. `options` are
  // recorded with the revision (see TxnOptions).
  // Invalid: empty or NUL-containing key, two ops on one key, negative TTL,
  // keys + values over max_txn_bytes; nothing is written.
  // IOError / Unavailable: the log cannot write (closed, storage failed, or
  // opened with OpenLogReadOnly()).
  virtual Result<TxnResult> Txn(std::vector<TxnOp> ops, TxnOptions options) = 0;
  // The same, with no writer named.
  Result<TxnResult> Txn(std::vector<TxnOp> ops) { return Txn(std::move(ops), TxnOptions{}); }

  // Single-op conveniences over Txn().
  Result<TxnResult> Put(std::string key, std::string value,
                        std::optional<Revision> guard = std::nullopt, int64_t ttl_seconds = 0,
                        TxnOptions options = {});
  Result<TxnResult> Delete(std::string key, std::optional<Revision> guard = std::nullopt,
                           TxnOptions options = {});

  // The key at `at` (0: the head); nullopt if it does not exist there.
  // FutureRevision: at > CurrentRevision(). Compacted: at < CompactRevision().
  // Corruption: the stored record failed verification.
  virtual Result<std::optional<KeyValue>> Get(std::string_view key,
                                              Revision at = Revision(0)) = 0;

  // The kvs of a range at one revision, paged. Errors as Get(); a continue
  // token whose revision has since been compacted gives Compacted.
  virtual Result<RangeResult> Range(const RangeRequest& request) = 0;

  // Drops history: for each key keeps the newest version <= `rev` unless it
  // is a delete below `rev` (then the key's history <= rev goes; a delete AT
  // `rev` stays, as in etcd, so a watch from `rev` sees it); later revisions
  // are untouched. Reads and watches below `rev` then give Compacted.
  // FutureRevision: rev > CurrentRevision(). Compacted: rev <=
  // CompactRevision().
  virtual Status Compact(Revision rev) = 0;

  virtual Revision CurrentRevision() const = 0;
  virtual Revision CompactRevision() const = 0;

  // --- The watch feed (src/watch builds watchers on it). ---

  // The changes of revisions from, from+1, ... (at most max_revisions, fewer
  // when reading from disk and a byte budget is hit), in revision order.
  // Empty when from > CurrentRevision(). Recent revisions come from memory,
  // older ones from storage. Compacted: from < CompactRevision() (the
  // history needed to replay `from` is gone; the compact revision itself is
  // still whole, as in etcd). Corruption as Get().
  virtual Result<std::vector<RevisionChangesPtr>> ReadChanges(Revision from,
                                                              size_t max_revisions) = 0;

  // Blocks until CurrentRevision() >= want, `deadline`, WakeWaiters() or the
  // log closing, whichever comes first. Returns CurrentRevision().
  virtual Revision WaitForRevision(Revision want,
                                   std::chrono::steady_clock::time_point deadline) = 0;

  // Wakes every WaitForRevision() caller (used to cancel a waiting watcher).
  virtual void WakeWaiters() = 0;
};

// Opens (creating if missing) the RocksDB-backed log in options.dir and
// recovers its revision, compact revision, live keys and pending TTLs.
// Corruption: the stored meta data is inconsistent. IOError: RocksDB failed
// (e.g. the directory is locked by another process).
Result<std::unique_ptr<EventLog>> OpenLog(const LogOptions& options);

// Opens the log in `dir` for reading only, safely beside a running pipeline
// that has it open (RocksDB's secondary-instance mode: it takes no lock and
// writes nothing in `dir`; its own small state lives in a private temporary
// directory removed on close). Every read first catches up with the writer,
// so CurrentRevision(), Get(), Range() and ReadChanges() see what the writer
// has committed; WaitForRevision() polls. Txn() and Compact() return
// Unavailable. NotFound: `dir` holds no event log. Corruption / IOError as
// OpenLog().
Result<std::unique_ptr<EventLog>> OpenLogReadOnly(const std::string& dir);

// The exclusive end of the range of keys starting with `prefix`: the
// smallest string greater than all of them; "" when there is none (the
// range is unbounded), as etcd's prefix range end.
std::string PrefixEnd(std::string prefix);

}  // namespace podflow
