// Informer: list, then watch — how every stage follows the log
// (level-triggered, design §1). It delivers the state under a prefix as
// upserts and removals, resumes from the revision it has seen, and re-lists
// when its watch is compacted away, so a stage converges after any crash or
// restart. Use from one thread. Not copyable.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>

#include "stages/persistence/persistence.h"

namespace podflow::persistence {

class Informer {
 public:
  struct Handlers {
    std::function<void(const KeyValue& kv)> upsert;     // created or changed
    std::function<void(const std::string& key)> remove;  // deleted (or left the selection)
  };

  // `field_selector` narrows the watch (pods only); the list applies
  // `list_filter` to the same effect, since reads take no selector.
  Informer(zmq::context_t& context, std::string api_endpoint, std::string watch_endpoint,
           std::string prefix, std::string field_selector = "",
           std::function<bool(const KeyValue&)> list_filter = nullptr);

  // Lists (paged) and delivers everything as upserts — and removals for
  // keys seen before that are gone — then opens the watch after the list's
  // revision. Unavailable when persistence does not answer.
  Status Sync(const Handlers& handlers);

  // Delivers what the watch has, waiting up to `timeout` for the first
  // batch. Re-syncs by itself after a compacted or broken watch.
  Status Poll(std::chrono::milliseconds timeout, const Handlers& handlers);

  // Everything under the prefix up to revision() has been delivered; the
  // last list was at list_revision() (what came after it came by watch).
  Revision revision() const { return revision_; }
  Revision list_revision() const { return list_revision_; }
  const std::string& prefix() const { return prefix_; }

 private:
  zmq::context_t& context_;
  const std::string watch_endpoint_;
  const std::string prefix_;
  const std::string field_selector_;
  std::function<bool(const KeyValue&)> list_filter_;
  Client client_;
  std::unique_ptr<RemoteWatcher> watcher_;
  std::set<std::string> known_;  // keys currently delivered as present
  Revision revision_;
  Revision list_revision_;
};

}  // namespace podflow::persistence
