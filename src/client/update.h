// Update: the guarded read-modify-write every writer of the log does —
// read the key (or take the caller's copy), decide the change on what is
// there, write it guarded by the revision it was decided on, and on a
// failed guard decide again on the key as it now is, a bounded number of
// times. UpdateBatch does the same for many keys in as few transactions as
// it can (their writes share the log's group commits).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "client/client.h"

namespace podflow::client {

// What a change makes of one key, decided on the key as it is.
struct Mutation {
  enum class Kind { kPut, kDelete, kSkip, kRefresh };

  // Writes `value` at the key (with `extra` ops in the same transaction:
  // events, records), guarded by the revision the change was decided on.
  static Mutation Put(std::string value, std::vector<TxnOp> extra = {}) {
    return Mutation{Kind::kPut, std::move(value), std::move(extra), Status::Ok()};
  }
  // Deletes the key, guarded likewise.
  static Mutation Delete(std::vector<TxnOp> extra = {}) {
    return Mutation{Kind::kDelete, "", std::move(extra), Status::Ok()};
  }
  // Nothing to write; `why` becomes the item's outcome (Ok: nothing was needed).
  static Mutation Skip(Status why = Status::Ok()) { return Mutation{Kind::kSkip, "", {}, std::move(why)}; }
  // The caller's copy may be out of date: read the key and decide again.
  // On a key that came from the log, the same as Skip().
  static Mutation Refresh() { return Mutation{Kind::kRefresh, "", {}, Status::Ok()}; }

  Kind kind;
  std::string value;
  std::vector<TxnOp> extra;
  Status why;
};

// Decides the change. `current` is the key as last seen (nullptr: absent);
// `fresh` says it came from the log (a read, or the current value a failed
// guard returned) rather than from the caller's copy. May be called again
// for the same item after a failed guard.
using Mutate = std::function<Mutation(const KeyValue* current, bool fresh)>;

struct UpdateItem {
  std::string key;
  // The caller's copy of the key, used instead of a first read. A copy
  // with mod_revision 0 stands for "absent" (a create).
  std::optional<KeyValue> known;
  Mutate mutate;
};

struct UpdateOutcome {
  // Ok: written, or nothing was needed. Otherwise the Skip's reason,
  // Conflict when the item lost max_attempts guards, or the read or write
  // error that ended it.
  Status status;
  bool written = false;
  Revision revision;  // written: the transaction's revision
  std::string value;  // written by a put: the value now stored
};

struct UpdatePolicy {
  // Guarded writes one item may lose (or, with retry_errors, errors it may
  // meet) before it gives up.
  int max_attempts = 8;
  // A read or write error is retried after error_backoff instead of being
  // the outcome of the items it hit.
  bool retry_errors = false;
  std::chrono::milliseconds error_backoff{100};
  // Limits of one transaction (0: none); an item is never split.
  size_t max_ops_per_txn = 0;
  size_t max_bytes_per_txn = 0;
  // Checked between transactions: items not yet written then end Unavailable.
  std::function<bool()> stopping = nullptr;
};

// Applies every item's change. Items are taken in order; a key appears once
// per transaction, extra ops' keys included (a second item of the same key
// goes into the next one and sees the first one's write; an item whose extra
// ops write a key already in the transaction ends it, and goes first in the
// next). An item that loses its guard, on its key or on a guarded extra op,
// is decided again on the log as it now is; the others of its transaction
// are written without it. Returns one outcome per item, in order.
std::vector<UpdateOutcome> UpdateBatch(ApiClient& client, std::vector<UpdateItem> items,
                                       const UpdatePolicy& policy = {});

// One key.
UpdateOutcome Update(ApiClient& client, UpdateItem item, const UpdatePolicy& policy = {});

}  // namespace podflow::client
