// CycleState: data one plugin computes for a pod in one scheduling cycle
// (at PreFilter / PreScore) and reads back at Filter / Score, as
// kube-scheduler's framework.CycleState. Keys are the writing plugin's name
// plus a suffix. Created by the runner per cycle.
//
// Filter and Score read it once per node, so a read is a scan of a handful
// of entries comparing key lengths first (most keys differ in length), not
// a tree walk of string comparisons.
//
// Thread safety: written by PreFilter / PreScore only, read concurrently after.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace podflow::scheduler {

class CycleState {
 public:
  // Stores `value` under `key`, replacing what was there.
  template <typename T>
  void Write(std::string key, std::shared_ptr<const T> value) {
    for (Entry& e : data_) {
      if (e.key == key) {
        e.value = std::move(value);
        return;
      }
    }
    data_.push_back(Entry{std::move(key), std::move(value)});
  }
  // nullptr when absent. REQUIRES: the key was written with this T.
  template <typename T>
  const T* Read(std::string_view key) const {
    for (const Entry& e : data_) {
      if (e.key.size() == key.size() && e.key == key) return static_cast<const T*>(e.value.get());
    }
    return nullptr;
  }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const void> value;
  };
  std::vector<Entry> data_;
};

}  // namespace podflow::scheduler
