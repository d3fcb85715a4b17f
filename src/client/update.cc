#include "client/update.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <thread>

namespace podflow::client {
namespace {

// One item's progress through the batch.
struct Pending {
  UpdateItem item;
  std::optional<KeyValue> current;  // valid when `seen`: the key as last seen (nullopt: absent)
  bool seen = false;
  bool fresh = false;  // `current` came from the log
  std::optional<Mutation> mutation;  // decided on `current`, not yet written
  int attempts = 0;
  bool done = false;
};

std::string_view KeyOf(const TxnOp& op) {
  if (const PutOp* put = std::get_if<PutOp>(&op)) return put->key;
  return std::get<DeleteOp>(op).key;
}

size_t OpBytes(const TxnOp& op) {
  if (const PutOp* put = std::get_if<PutOp>(&op)) return put->key.size() + put->value.size();
  return std::get<DeleteOp>(op).key.size();
}

class Batch {
 public:
  Batch(ApiClient& client, std::vector<UpdateItem> items, const UpdatePolicy& policy)
      : client_(client), policy_(policy), outcomes_(items.size()) {
    pending_.reserve(items.size());
    for (UpdateItem& item : items) {
      Pending p;
      if (item.known) {
        p.seen = true;
        if (item.known->mod_revision.value() != 0) p.current = *item.known;
      }
      p.item = std::move(item);
      pending_.push_back(std::move(p));
    }
  }

  std::vector<UpdateOutcome> Run() {
    while (true) {
      std::vector<size_t> todo;
      for (size_t i = 0; i < pending_.size(); ++i) {
        if (!pending_[i].done) todo.push_back(i);
      }
      if (todo.empty()) break;
      if (policy_.stopping && policy_.stopping()) {
        for (size_t i : todo) End(i, Status::Unavailable("stopping"));
        break;
      }
      RunTransaction(todo);
    }
    return std::move(outcomes_);
  }

 private:
  void End(size_t i, Status status) {
    pending_[i].done = true;
    outcomes_[i].status = std::move(status);
  }

  // Counts an attempt of item i; ends it with `status` once they run out.
  void Attempted(size_t i, const Status& status) {
    if (++pending_[i].attempts >= policy_.max_attempts) End(i, status);
  }

  // Reads the key of item i. False (with the item ended or to be retried)
  // on an error.
  bool Read(size_t i, bool& error_seen) {
    Pending& p = pending_[i];
    Result<std::optional<KeyValue>> read = client_.Get(p.item.key);
    if (!read.ok()) {
      error_seen = true;
      if (policy_.retry_errors) {
        Attempted(i, read.status());
      } else {
        End(i, read.status());
      }
      return false;
    }
    p.current = std::move(*read);
    p.seen = true;
    p.fresh = true;
    return true;
  }

  // Decides item i's change (reading the key when needed). False when the
  // item has nothing to write now.
  bool Decide(size_t i, bool& error_seen) {
    Pending& p = pending_[i];
    while (!p.mutation) {
      if (!p.seen && !Read(i, error_seen)) return false;
      Mutation m = p.item.mutate(p.current ? &*p.current : nullptr, p.fresh);
      if (m.kind == Mutation::Kind::kRefresh && !p.fresh) {
        p.seen = false;  // read it, then decide again
        continue;
      }
      if (m.kind == Mutation::Kind::kSkip || m.kind == Mutation::Kind::kRefresh) {
        End(i, std::move(m.why));
        return false;
      }
      p.mutation = std::move(m);
    }
    return true;
  }

  void RunTransaction(const std::vector<size_t>& todo) {
    std::vector<TxnOp> ops;
    std::vector<size_t> in_txn;
    std::vector<size_t> first_op;  // per item of in_txn: where its ops start
    std::set<std::string_view> keys;
    size_t bytes = 0;
    bool error_seen = false;
    for (size_t i : todo) {
      Pending& p = pending_[i];
      if (keys.contains(p.item.key)) continue;  // after this transaction
      if (!Decide(i, error_seen)) continue;
      const Mutation& m = *p.mutation;
      // A key the change also writes (a quota it charges) that this
      // transaction already writes: it and the items after it go in the
      // next transaction, in order, decided again on what this one wrote.
      if (std::any_of(m.extra.begin(), m.extra.end(), [&](const TxnOp& extra) { return keys.contains(KeyOf(extra)); })) {
        p.mutation.reset();
        break;
      }
      const std::optional<Revision> guard = p.current ? p.current->mod_revision : Revision(0);
      TxnOp op = m.kind == Mutation::Kind::kPut ? TxnOp(PutOp{p.item.key, m.value, guard})
                                                : TxnOp(DeleteOp{p.item.key, guard});
      size_t size = OpBytes(op);
      for (const TxnOp& extra : m.extra) size += OpBytes(extra);
      const size_t count = 1 + m.extra.size();
      if (!in_txn.empty() && ((policy_.max_ops_per_txn > 0 && ops.size() + count > policy_.max_ops_per_txn) ||
                              (policy_.max_bytes_per_txn > 0 && bytes + size > policy_.max_bytes_per_txn))) {
        break;  // the rest go in the next transaction, in order
      }
      first_op.push_back(ops.size());
      ops.push_back(std::move(op));
      ops.insert(ops.end(), m.extra.begin(), m.extra.end());
      bytes += size;
      in_txn.push_back(i);
      keys.insert(p.item.key);
      for (const TxnOp& extra : m.extra) keys.insert(KeyOf(extra));
    }
    if (in_txn.empty()) {
      if (error_seen) Backoff();
      return;
    }
    Result<WriteResult> written = client_.Write(ops);
    if (!written.ok()) {
      for (size_t i : in_txn) {
        if (policy_.retry_errors) {
          Attempted(i, written.status());
        } else {
          End(i, written.status());
        }
      }
      if (policy_.retry_errors) Backoff();
      return;
    }
    if (written->succeeded) {
      for (size_t i : in_txn) {
        Pending& p = pending_[i];
        p.done = true;
        outcomes_[i].written = true;
        outcomes_[i].revision = written->revision;
        if (p.mutation->kind == Mutation::Kind::kPut) outcomes_[i].value = std::move(p.mutation->value);
      }
      return;
    }
    // A failed guard names the item whose key changed: it is decided again
    // on the key as it now is; the others go as they were. A failed guard
    // among an item's extra ops (a key its change was decided on too) has
    // it decided again as well, its own key as it was.
    size_t failed = in_txn.size();
    for (size_t n = 0; n < in_txn.size(); ++n) {
      const size_t end = n + 1 < in_txn.size() ? first_op[n + 1] : ops.size();
      if (first_op[n] <= written->failed_op && written->failed_op < end) failed = n;
    }
    if (failed == in_txn.size()) {
      for (size_t i : in_txn) End(i, Status::Internal("the log named op " + std::to_string(written->failed_op) +
                                                       " as failed, which is not in the transaction"));
      return;
    }
    const size_t i = in_txn[failed];
    Pending& p = pending_[i];
    const bool own_key = first_op[failed] == written->failed_op;
    if (own_key) {
      p.current = written->current;
      p.seen = true;
      p.fresh = true;
    }
    p.mutation.reset();
    const std::string times = " changed " + std::to_string(policy_.max_attempts) + " time(s) while ";
    Attempted(i, Status::Conflict(own_key ? p.item.key + times + "it was being written"
                                          : std::string(KeyOf(ops[written->failed_op])) + times + p.item.key +
                                                " was being written"));
  }

  void Backoff() {
    if (policy_.error_backoff.count() > 0) std::this_thread::sleep_for(policy_.error_backoff);
  }

  ApiClient& client_;
  const UpdatePolicy& policy_;
  std::vector<Pending> pending_;
  std::vector<UpdateOutcome> outcomes_;
};

}  // namespace

std::vector<UpdateOutcome> UpdateBatch(ApiClient& client, std::vector<UpdateItem> items, const UpdatePolicy& policy) {
  return Batch(client, std::move(items), policy).Run();
}

UpdateOutcome Update(ApiClient& client, UpdateItem item, const UpdatePolicy& policy) {
  std::vector<UpdateItem> items;
  items.push_back(std::move(item));
  return std::move(UpdateBatch(client, std::move(items), policy)[0]);
}

}  // namespace podflow::client
