// CycleState: data one plugin computes for a pod in one scheduling cycle
// (at PreFilter / PreScore) and reads back at Filter / Score, as
// kube-scheduler's framework.CycleState. Keys are the writing plugin's name
// plus a suffix. Created by the runner per cycle; plugins of this issue keep
// nothing in it (PodInfo already carries what they need).
//
// Thread safety: written by PreFilter / PreScore only, read concurrently after.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace podflow::scheduler {

class CycleState {
 public:
  template <typename T>
  void Write(std::string key, std::shared_ptr<const T> value) {
    data_[std::move(key)] = std::move(value);
  }
  // nullptr when absent. REQUIRES: the key was written with this T.
  template <typename T>
  const T* Read(std::string_view key) const {
    auto it = data_.find(key);
    return it == data_.end() ? nullptr : static_cast<const T*>(it->second.get());
  }

 private:
  std::map<std::string, std::shared_ptr<const void>, std::less<>> data_;
};

}  // namespace podflow::scheduler
