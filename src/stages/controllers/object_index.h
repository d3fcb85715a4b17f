// What a controller keeps of one kind of object: records by key, found
// also by uid (an ownerReference names its owner by uid). Not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace podflow::controllers {

// R has a std::string `uid`.
template <typename R>
class ObjectIndex {
 public:
  // Stores `record` at `key`; the record it replaced, if any.
  std::optional<R> Put(const std::string& key, R record) {
    std::optional<R> was = Erase(key);
    by_uid_[record.uid] = key;
    records_.emplace(key, std::move(record));
    return was;
  }
  // Removes the record at `key`; it, if there was one.
  std::optional<R> Erase(const std::string& key) {
    auto it = records_.find(key);
    if (it == records_.end()) return std::nullopt;
    std::optional<R> was(std::move(it->second));
    records_.erase(it);
    if (auto uid = by_uid_.find(was->uid); uid != by_uid_.end() && uid->second == key) by_uid_.erase(uid);
    return was;
  }
  R* Find(const std::string& key) {
    auto it = records_.find(key);
    return it == records_.end() ? nullptr : &it->second;
  }
  // The key of the record of uid `uid`; nullptr when there is none.
  const std::string* KeyOf(const std::string& uid) const {
    auto it = by_uid_.find(uid);
    return it == by_uid_.end() ? nullptr : &it->second;
  }
  R* FindByUid(const std::string& uid) {
    const std::string* key = KeyOf(uid);
    return key != nullptr ? Find(*key) : nullptr;
  }
  std::map<std::string, R>& records() { return records_; }
  const std::map<std::string, R>& records() const { return records_; }
  bool empty() const { return records_.empty(); }
  size_t size() const { return records_.size(); }

 private:
  std::map<std::string, R> records_;
  std::map<std::string, std::string> by_uid_;  // uid -> key
};

}  // namespace podflow::controllers
